/* INFILE on a file written by the program: END=, FLOWOVER, column input with implied decimals,
   an informat list with pointer controls, _INFILE_, PUT variable lists with format lists */
data _null_;
  file raw;
  put 'ab 345 1';
  put 'cd 012 2 3';
  put 'ef 9.5';
  put '7';
run;
data out.a;
  infile raw end=last;
  input (k1 k2)($1. +0 $1.) y 4-6 .2 @8 n;
  if last then put 'LAST ' _infile_;
run;
data _null_;
  set out.a end=eof;
  put (k1 y)(=) '|' (y n)(6.2 '/');
run;
