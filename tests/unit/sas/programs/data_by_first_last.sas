data sales;
  input region $ amount;
datalines;
east 10
east 5
north 4
west 7
west 3
west 1
;
data out.totals(keep=region total n);
  set sales;
  by region;
  retain n;
  if first.region then do;
     total = 0;
     n = 0;
  end;
  total + amount;       * sum statement: TOTAL is retained;
  n = n + 1;
  if last.region then output;
run;
