/* CPU · advanced analytics: survey-weighted logistic regression — strata, clusters (PSUs) and weights,
   Taylor-series variance. The SAS twin of cpu_surveylogistic.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);

data work.svy;
  set &lib..model297(keep=id target segment region x1-x5);
  psu = mod(id, 40);
  w = 1 + mod(id, 3);
run;
ods output ParameterEstimates=work.svy_est;
proc surveylogistic data=work.svy;
  strata region;
  cluster psu;
  weight w;
  class segment;
  model target(event='1') = segment x1-x5;
run;
