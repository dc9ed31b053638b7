options dsengine=python;   /* the SQL engine's NOTE is not this helper's file (REQUESTS.md) */
data x;
  length cd $2;
  do amt = 100 to 1000 by 100;
    if mod(amt, 200) = 0 then cd = 'BB'; else cd = 'AA';
    output;
  end;
run;
data out.y;
  set x;
  where cd = 'BB' and amt > 500;
run;
data out.z;
  set x(where=(amt > 800));
run;
proc print data=x;
  where amt = 300;
run;
