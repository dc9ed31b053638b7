data out.before; x = 1; run;
proc nosuchproc data=out.before;
   var x;
run;
data out.after;
   x = 2;
run;
