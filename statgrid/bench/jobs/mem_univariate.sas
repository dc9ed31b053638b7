/* Memory · Base SAS statistics: univariate on many variables by group (all values held per group).
   The SAS twin of mem_univariate.py: the numeric variables among the first 40, by V005 (BY needs the
   data sorted by it). */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc sort data=&lib..customer120 out=work.by_v005;
  by v005;
run;

ods output Moments=work.ods_moments;
proc univariate data=work.by_v005 normal;
  by v005;
  var v002-v004 v007-v009 v012-v014 v017-v019 v022-v024 v027-v029 v032-v034 v037-v039;
run;
