/* ETL: load the dimension, build a star-schema mart in DATA, aggregate by month and region, sort.
   The SAS twin of etl_star.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);
%let textdir = %sysfunc(pathname(&lib));

data work.dim;
  infile "&textdir/customer_dim.txt" lrecl=2000 truncover;
  input cust_id 1-10  name $ 11-50  region 51-52  segment $ 53-53  score 54-61;
run;

data work.mart;
  if 0 then set work.dim(keep=cust_id region segment);
  if _n_ = 1 then do;
    declare hash dim(dataset: "work.dim");
    dim.defineKey("cust_id");
    dim.defineData("region", "segment");
    dim.defineDone();
  end;
  set &lib..sales_fact;
  if dim.find() ne 0 then call missing(region, segment);
run;

proc sql;
  create table work.mart_month as
    select region, mdy(month(sale_date), 1, year(sale_date)) as month format=date9.,
           sum(amount) as amount, sum(qty) as qty
    from work.mart
    group by region, calculated month
    order by region, calculated month;
quit;

proc sort data=work.mart out=work.mart_sorted;
  by region sale_date;
run;
