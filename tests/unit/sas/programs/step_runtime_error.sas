/* an execution-time ERROR stops its step only: no syntax-check mode (and none from DATA _NULL_) */
data out.bad;
  array a{3} a1-a3;
  do i = 1 to 4; a{i} = i; end;
run;
data _null_;
  x = 1 +* 2;
run;
data out.good;
  x = 1;
run;
