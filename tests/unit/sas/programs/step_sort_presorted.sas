data out.a;
  do k = 3, 1, 2; output; end;
run;
proc sort data=out.a; by k; run;
proc sort data=out.a; by k; run;       /* sorted so already: not sorted again */
