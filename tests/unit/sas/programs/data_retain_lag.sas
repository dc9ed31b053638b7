data out.running;
  input day sales;
  retain best 0 start;
  if _n_ = 1 then start = day;
  if sales > best then best = sales;
  prev = lag(sales);
  change = dif(sales);
  cum + sales;
datalines;
1 10
2 30
3 20
;
data _null_;
  set out.running end=done;
  if done then put 'LAST: ' day= cum=;
run;
