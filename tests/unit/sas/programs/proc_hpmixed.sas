/* PROC HPMIXED: a random intercept per subject and a COLLECTION effect tested as one effect */
data work.a;
  do i = 1 to 96;
    g = mod(i, 8); a = mod(i * 5, 3); b = mod(i * 7, 4);
    x = mod(i * 37, 101) / 25;
    z = 2 + x + (a = 1) - 0.5 * (b = 2) + (mod(g * 29, 7) - 3) / 4 + (mod(i * 29, 17) - 8) / 8;
    output;
  end;
run;
proc hpmixed data=work.a;
  class a b g;
  effect ab = collection(a b);
  model z = ab x / solution;
  random intercept / subject=g;
  nloptions maxiter=100;
run;
