options mprint;
%macro make(prefix, n=3);
  %do i = 1 %to &n;
    data out.&prefix&i;     /* no RUN: the next DATA statement ends the step */
      x = &i * 10;
  %end;
  run;
%mend make;

%make(part, n=3)

%macro twice(ds);
   %local k;
   %do k = 2 %to 1 %by -1;
      data out.&ds._&k; set out.part&k; y = x + &k;
   %end;
   RUN;
%MEND;
%twice(copy)
