/* CPU · advanced analytics: stepwise logistic regression on the 297-column modelling table.
   The SAS twin of cpu_stepwise_logistic.py (the first 40 x variables, written out:
   statgrid's MODEL statement does not expand x1-x40 yet). */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc logistic data=&lib..model297 outest=work.logit_est;
  class segment region;
  model target(event='1') = segment region
        x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20
        x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40
        / selection=stepwise sle=0.01 sls=0.01 lackfit;
run;
