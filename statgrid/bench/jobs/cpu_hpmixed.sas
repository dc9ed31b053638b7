/* CPU · advanced analytics: a sparse mixed model — one random intercept per subject (thousands of levels),
   as HPMIXED is used for large sparse designs. The SAS twin of cpu_hpmixed.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);

ods output ParameterEstimates=work.hpm_solution;
proc hpmixed data=&lib..design;
  class a b subject;
  model y = a b x visit / solution;
  random intercept / subject=subject;
run;
