/* PROC REG: a simple regression, OUTEST= and OUTPUT OUT= P= R=, and a stepwise selection */
data work.xy;
  infile "%sysget(DATADIR)/reg_xy.csv" dsd firstobs=2;
  input x y;
run;
proc reg data=work.xy outest=out.est;
  model y = x;
  output out=out.pred p=yhat r=res;
run;
data work.sel;
  do i = 1 to 30;
    a = i; b = mod(i * 7, 11); noise = mod(i * 13, 5) - 2;
    y = 1 + 2 * a + noise / 10;
    output;
  end;
run;
proc reg data=work.sel outest=out.sel noprint;
  model y = a b / selection=stepwise sle=0.05 sls=0.05;
run;
