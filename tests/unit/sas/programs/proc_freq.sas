/* PROC FREQ: one-way and crosstab tables, OUT= with OUTPCT, MISSING, WEIGHT, ORDER=FREQ, BY */
data work.a;
  input g $ h x w;
  datalines;
a 1 1 2
a 2 2 1
b 1 3 1
b 1 4 3
. 2 5 1
a 2 . 1
;
proc freq data=work.a;
  tables g h g*h / chisq out=out.gh outpct;
run;
proc freq data=work.a noprint;
  tables g*h*x / out=out.ghx outpct missing;
  weight w;
run;
proc freq data=work.a order=freq noprint;
  tables g / out=out.byfreq;
run;
proc sort data=work.a out=work.s; by h; run;
proc freq data=work.s noprint;
  by h;
  tables g / out=out.byh missing;
run;
