LIBNAME keep BASE "%sysget(OUTDIR)";
libname keep list;

data keep.cars;
  input make $ mpg;
  datalines;
fiat 40
ford 25
;
libname ro "%sysget(OUTDIR)" access=readonly;
data work.copy;
  set ro.cars;
run;
libname ro clear;
