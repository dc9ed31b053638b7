/* CPU · advanced analytics: GEE — a binary outcome repeated over visits, exchangeable working correlation.
   The SAS twin of cpu_gee.py: the empirical-SE estimates kept by ODS OUTPUT. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);

ods output GEEEmpPEst=work.gee_est;
proc genmod data=&lib..design descending;
  class a subject;
  model event = a x visit / dist=binomial;
  repeated subject=subject / type=exch;
run;
