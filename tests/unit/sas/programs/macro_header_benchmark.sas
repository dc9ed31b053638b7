/* The common header of real benchmark programs: options, a DATA _NULL_ that CALL SYMPUTs a datetime,
   %SYSGET(HOST), PROC OPTIONS groups, LIBNAME _ALL_ LIST */
options fullstimer source source2 mprint notes;
options sastrace=',,,d' sastraceloc=saslog nostsuffix;
%let parm = %sysfunc(getoption(sysparm));
%macro header;
  data _null_;
    call symput('start', put(datetime(), datetime20.));
  run;
  %put NOTE: started &start host=%sysget(HOST) parm=&parm;
  proc options group=memory; run;
  proc options group=performance; run;
  libname _all_ list;
%mend header;
%header
