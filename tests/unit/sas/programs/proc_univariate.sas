/* PROC UNIVARIATE: OUTPUT OUT= with statistics and PCTLPTS=/PCTLPRE=, BY groups */
data work.u;
  input g x y;
  datalines;
1 1 10
1 2 20
1 3 30
1 4 .
2 10 5
2 20 15
;
proc univariate data=work.u noprint;
  var x y;
  output out=out.stats mean=mx my n=nx ny pctlpts=50 90 pctlpre=px py;
run;
proc univariate data=work.u noprint;
  by g;
  var x;
  output out=out.byg median=medx max=maxx;
run;
proc univariate data=work.u;
  var x;
run;
