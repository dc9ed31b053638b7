/* CPU · advanced analytics: stepwise regression on all 292 x variables of the modelling table.
   The SAS twin of cpu_stepwise_wide.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc reg data=&lib..model297 outest=work.wide_est;
  model amount = x1-x292 / selection=stepwise sle=0.01 sls=0.01;
run;
quit;
