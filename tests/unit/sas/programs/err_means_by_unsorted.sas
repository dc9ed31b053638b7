data work.a;
  input h x;
  datalines;
2 1
1 2
;
proc means data=work.a noprint;
  by h;
  var x;
  output out=out.m mean=;
run;
proc means data=work.a noprint bogus;
  var x;
run;
