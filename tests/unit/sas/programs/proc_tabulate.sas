/* PROC TABULATE: (vars), class*(mean*f=) as real programs write it, ALL and N, OUT= */
data work.a;
  input g $ h x y;
  datalines;
a 1 1 10
a 2 2 20
b 1 3 .
b 1 4 40
c 2 5 50
;
proc tabulate data=work.a out=out.tab;
  class g h;
  var x y;
  table (x y), g*(mean*f=15.6);
  table g all, h*n;
run;
