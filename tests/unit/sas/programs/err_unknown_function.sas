data out.f;
  y = nosuchfn(3);
run;
