data out.keep; x = 1; run;
data out.bad;
  x = 1 +* 2;
run;
data out.keep;       /* syntax-check mode: compiled, not run, OUT.KEEP not replaced */
  x = 99;
run;
