/* CPU · advanced analytics: generalized linear models — Poisson and negative binomial counts, normal.
   The SAS twin of cpu_genmod.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc genmod data=&lib..design;
  class a c;
  model count = a c x / dist=poisson;
run;

proc genmod data=&lib..design;
  class a c;
  model count = a c x / dist=negbin;
run;

proc genmod data=&lib..model297;
  class segment;
  model amount = segment x1 x2 x4 / dist=normal;
run;
