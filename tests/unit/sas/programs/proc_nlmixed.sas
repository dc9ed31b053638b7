/* PROC NLMIXED: programming statements and a normal model (least squares by maximum likelihood), then an
   out-of-scope PREDICT statement */
data work.a;
  do i = 1 to 10;
    x = i;
    y = 1 + 2 * x + (mod(i, 2) - 0.5);
    output;
  end;
run;
proc nlmixed data=work.a;
  parms b0=0 b1=1 s2=1;
  bounds s2 > 0;
  mu = b0 + b1 * x;
  model y ~ normal(mu, s2);
run;
proc nlmixed data=work.a;
  parms b0=0 b1=1 s2=1;
  model y ~ normal(b0 + b1 * x, s2);
  predict b0 + b1 * x out=work.p;
run;
