options nodate nonumber nocenter;
data out.class;
  input name $ age;
datalines;
ann 13
bob 14
cy 15
;
proc print data=out.class(obs=2);
   var name;
run;
proc contents data=out.class;
run;
