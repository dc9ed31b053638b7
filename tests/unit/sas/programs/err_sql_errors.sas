data work.a; x = 1; run;
proc sql;
  create table out.bad as select nosuchcol from work.a;
quit;
proc sql;
  create table out.bad2 as select vname(x) as f from work.a;
quit;
