data out.c;
  length v $10;
  call missing(v, w);
  call ranuni(7, u);
  call rantbl(5, .5, .5, r);
  call symputx('q', 1);
  t = s;
run;
