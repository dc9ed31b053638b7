data out.m;
  x = -1;
  y = log(x);
  e1 = _error_;
  z = x / 0;
run;
