/* IO · ETL: SQL semi-join of the fact table to a filtered dimension (IN (subquery)).
   The SAS twin of io_sql_semijoin.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);
%let textdir = %sysfunc(pathname(&lib));

data work.dim;
  infile "&textdir/customer_dim.txt" lrecl=2000 truncover;
  input cust_id 1-10  name $ 11-50  region 51-52  segment $ 53-53  score 54-61;
run;

proc sql;
  create table work.seg_a as
    select * from &lib..sales_fact
    where cust_id in (select cust_id from work.dim where segment = 'A');
  create table work.seg_a_month as
    select mdy(month(sale_date), 1, year(sale_date)) as month format=date9.,
           sum(amount) as amount, count(*) as n
    from work.seg_a
    group by calculated month
    order by calculated month;
quit;
