/* Memory · advanced analytics: wide arrays — standardize and summarize all 292 x columns at once.
   The SAS twin of mem_wide_arrays.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc stdize data=&lib..model297 out=work.z method=std;
  var x1-x292;
run;

proc means data=work.z n mean std min max noprint;
  var x1-x292;
  output out=work.z_means;
run;
