libname ro "%sysget(OUTDIR)" access=readonly;
data ro.t;
  x = 1;
run;
%put syserr=&syserr syscc=&syscc;
