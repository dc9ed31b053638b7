data _null_;
  n = 42;
  call symput('nv', n);
  call symputx('xv', n);
run;
%put nv=[&nv] xv=[&xv];
