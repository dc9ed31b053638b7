/* Memory · Base SAS statistics: univariate on many variables by group (all values held per group).
   The SAS twin of mem_univariate.py: the numeric variables among the first 40, by V005 (BY needs the
   data sorted by it). The list is written out: statgrid reads v002-v004 as v2-v4 yet. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc sort data=&lib..customer120 out=work.by_v005;
  by v005;
run;

proc univariate data=work.by_v005 normal;
  by v005;
  var v002 v003 v004 v007 v008 v009 v012 v013 v014 v017 v018 v019
      v022 v023 v024 v027 v028 v029 v032 v033 v034 v037 v038 v039;
run;
