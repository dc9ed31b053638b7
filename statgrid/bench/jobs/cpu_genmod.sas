/* CPU · advanced analytics: generalized linear models — Poisson and negative binomial counts, normal.
   The SAS twin of cpu_genmod.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

ods output ParameterEstimates=work.ods_pe_poisson;
proc genmod data=&lib..design;
  class a c;
  model count = a c x / dist=poisson;
run;

ods output ParameterEstimates=work.ods_pe_negbin;
proc genmod data=&lib..design;
  class a c;
  model count = a c x / dist=negbin;
run;

ods output ParameterEstimates=work.ods_pe_normal;
proc genmod data=&lib..model297;
  class segment;
  model amount = segment x1 x2 x4 / dist=normal;
run;
