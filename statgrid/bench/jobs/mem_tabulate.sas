/* Memory · Base SAS statistics: multi-way summary tables over class grids.
   The SAS twin of mem_tabulate.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc tabulate data=&lib..customer120 out=work.tab_cust;
  class v005 v010 v015;
  var v002 v003;
  table v005*v010 all, (v015 all)*(v002 v003)*(n mean sum std pctsum);
run;

proc tabulate data=&lib..sales_fact out=work.tab_product;
  class product_id;
  var amount;
  table product_id all, amount*(n sum mean max);
run;
