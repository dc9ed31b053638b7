data out.old; x = 1; run;
data out.bad;
  x = 1 +* 2;
run;
data out.old;   /* exists: not replaced */
  x = 2; y = 3;
run;
data out.new;   /* does not exist: its descriptor, 0 observations */
  length c $4;
  x = 5;
run;
