/* CPU · Base SAS statistics: rank, transpose and frequency tables on the customer table.
   The SAS twin of cpu_rank_transpose_freq.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc rank data=&lib..customer120 out=work.ranked groups=10;
  var v002 v003 v004;
run;

proc transpose data=work.ranked out=work.long;
  by cust_id;
  var v002 v003 v004;
run;

proc freq data=work.ranked;
  tables v005 v005*v010 v002*v005 / chisq;
run;
