/* IO · Base SAS statistics: a very large data step over the messy table (derive, filter, write).
   The SAS twin of io_datastep_big.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

data work.clean;
  set &lib..messy55;
  where c01 is not missing;
  label_clean = upcase(strip(label));
  year = year(event_date);
  if c02 in (0, .) then ratio = .;
  else ratio = c01 / c02;
  flag = coalesce(c04, 0);
run;

proc means data=work.clean noprint;
  class year;
  var c01 c02 c05 ratio;
  output out=work.by_year;
run;
