/* CPU · advanced analytics: stepwise regression on the 297-column modelling table.
   The SAS twin of cpu_stepwise_reg.py (the first 120 x variables). */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc reg data=&lib..model297 outest=work.reg_est;
  model amount = x1-x120 / selection=stepwise sle=0.01 sls=0.01;
run;
quit;
