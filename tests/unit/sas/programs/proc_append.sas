/* PROC APPEND: copy when BASE is missing, append, FORCE over differing variables; CIMPORT refused */
data work.b1; length name $4; input name $ x; datalines;
ann 1
bob 2
;
data work.d1; length name $4; input name $ x; datalines;
cy 3
;
data work.d2; length name $8; input name $ x extra; datalines;
danielle 4 9
;
proc append base=out.all data=work.b1; run;
proc append base=out.all data=work.d1; run;
proc append base=out.all data=work.d2 force; run;
proc append base=out.all data=work.d2; run;
proc cimport library=work infile='x.cpt'; run;
