%macro again(n);
  %again(%eval(&n + 1))
%mend again;
%again(1)
data out.after; x = 1; run;
