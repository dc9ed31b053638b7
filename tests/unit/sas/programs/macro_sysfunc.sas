/* %SYSFUNC over DATA step functions, GETOPTION(SYSPARM), %SYSGET fed by -set */
%let parm = %sysfunc(getoption(sysparm));
%put parm=&parm;
%put sysparm=&sysparm;
%let d = %sysfunc(mdy(3, 15, 2021), date9.);
%put d=&d;
%let nxt = %sysfunc(intnx(month, %sysfunc(mdy(3, 15, 2021)), 1), date9.);
%put nxt=&nxt;
%put r=%sysfunc(round(2.567, 0.01));
%put up=%sysfunc(upcase(abc));
%put z=%sysfunc(putn(7, z3.));

libname res "%sysget(OUTDIR)";
data res.sysf;
   length p $ 20;
   p = "&parm";
   d = "&d"d;
   where = "%sysget(REGION)";
run;
