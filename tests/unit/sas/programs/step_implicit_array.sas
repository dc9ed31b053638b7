data out.imp;
  array imp(j) q1 q2 q3;    /* an implicit array with its own index variable */
  do over imp;
    imp = j * 10;
  end;
  j = 2;
  y = imp;                  /* the element at j */
  keep q1 q2 q3 y;
run;
