data out.included;
  x = 1;
  y = 'from include';
run;
