data out.e;
  array ex{3} a1-a3;
  do over ex;
    ex = 1;
  end;
run;
