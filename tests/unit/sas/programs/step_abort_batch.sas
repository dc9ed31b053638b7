data out.a;
  do i = 1 to 5;
    if i = 3 then abort;
    output;
  end;
run;
data out.b;
  x = 1;
run;
