/* IO · ETL: star schema — facts enriched from the customer dimension by hash lookup, then aggregated.
   The SAS twin of io_etl_lookup.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);
%let textdir = %sysfunc(pathname(&lib));

data work.dim;
  infile "&textdir/customer_dim.txt" lrecl=2000 truncover;
  input cust_id 1-10  name $ 11-50  region 51-52  segment $ 53-53  score 54-61;
run;

data work.enriched;
  if 0 then set work.dim(keep=cust_id region segment score);
  if _n_ = 1 then do;
    declare hash dim(dataset: "work.dim");
    dim.defineKey("cust_id");
    dim.defineData("region", "segment", "score");
    dim.defineDone();
  end;
  set &lib..sales_fact;
  if dim.find() ne 0 then call missing(region, segment, score);
run;

proc summary data=work.enriched;
  class region segment;
  var amount qty;
  output out=work.region_segment;
run;
