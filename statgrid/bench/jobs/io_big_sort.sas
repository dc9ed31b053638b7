/* IO · Base SAS statistics: the big sort, small MEMSIZE so it spills to UTIL (temp ≈ 3× input).
   The SAS twin of io_big_sort.py. MEMSIZE is a startup option in SAS: the job is submitted with
   -memsize 256M (statgrid bench mixed does so; see workload.Template.sas_options). */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc sort data=&lib..messy55 out=work.sorted;
  by cust_key label event_date;
run;

proc sort data=work.sorted out=work.first_per_key nodupkey;
  by cust_key;
run;
