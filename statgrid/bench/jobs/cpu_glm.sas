/* CPU · Base SAS statistics: GLM with class interactions, Type I/III and LS-means.
   The SAS twin of cpu_glm.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc glm data=&lib..design outstat=work.glm_ss;
  class a b c;
  model y count = a|b|c x;
  lsmeans a a*b;
run;
quit;
