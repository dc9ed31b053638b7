/* CPU · advanced analytics: stepwise logistic regression on the 297-column modelling table.
   The SAS twin of cpu_stepwise_logistic.py (the first 40 x variables). */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc logistic data=&lib..model297 outest=work.logit_est;
  class segment region;
  model target(event='1') = segment region
        x1-x40
        / selection=stepwise sle=0.01 sls=0.01 lackfit;
run;
