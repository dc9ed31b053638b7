data out.arr;
  array q{3} q1-q3 (10 20 30);              /* initial values: retained */
  array w{3} _temporary_ (0.5 0.25 0.25);   /* no variables */
  array c{*} $ c1-c2;
  score = 0;
  do i = 1 to dim(q);
    score = score + q{i} * w{i};
  end;
  c{1} = 'x'; c(2) = 'y';
  drop i;
run;

data out.over;
  array nums x y z;          * an implicit array: DO OVER;
  input x y z;
  do over nums;
    if nums = . then nums = 0;
    nums = nums * 2;
  end;
  keep x y z;
datalines;
1 . 3
. 5 .
;
data out.matrix(keep=total);
   array m{2,3} _temporary_ (1 2 3 4 5 6);
   total = 0;
   do r = 1 to 2;
      do k = 1 to 3; total + m{r, k} * r; end;
   end;
run;
