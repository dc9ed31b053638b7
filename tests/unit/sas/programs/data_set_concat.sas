data a;
   input x;
datalines;
1
2
;
data b; input x y; datalines;
3 30
;
/* SET with two data sets: all of A, then all of B; IN= flags and END= */
data out.both;
  set a(in=ina)
      b(in=inb)
      end=eof;
  from_a = ina;
  if eof then last = 1;
run;
