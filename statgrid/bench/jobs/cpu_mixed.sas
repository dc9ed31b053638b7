/* CPU · advanced analytics: mixed model — random intercept and slope per subject.
   The SAS twin of cpu_mixed.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

ods output SolutionF=work.ods_solutionf CovParms=work.ods_covparms;
proc mixed data=&lib..design;
  class a;
  model y = a x visit / solution;
  random intercept visit / subject=subject;
run;
