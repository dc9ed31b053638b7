/* PROC MEANS and PROC SUMMARY: CLASS types, OUTPUT names, _STAT_, BY, TYPES, MISSING */
data work.a;
  input g $ h x y;
  datalines;
a 1 1 10
a 2 2 20
b 1 3 .
b 1 4 40
. 2 5 50
;
proc summary data=work.a;
  class g h;
  var x y;
  output out=out.all mean= sum(x)=sx / autoname;
run;
proc means data=work.a noprint nway;
  class g;
  var x y;
  output out=out.named mean=mx my n(y)=ny max=;
run;
PROC SUMMARY DATA=work.a NWAY MISSING;
  CLASS g;
  OUTPUT OUT=out.counts;
RUN;
proc means data=work.a noprint;
  var x;
  output out=out.stat;
run;
proc sort data=work.a out=work.s; by h; run;
proc means data=work.s noprint;
  by h;
  var x y;
  output out=out.byh median=med range=rng nmiss(y)=missy;
run;
proc summary data=work.a;
  class g h;
  types () g*h;
  var x;
  output out=out.types sum=;
run;
proc means data=work.a n mean maxdec=2;
  class g;
  var x;
run;
