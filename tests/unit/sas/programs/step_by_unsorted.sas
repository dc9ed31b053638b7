data u;
  input g v;
  datalines;
1 10
2 20
1 30
;
data out.bad;
  set u;
  by g;
run;
data out.good;
  x = 1;
run;
