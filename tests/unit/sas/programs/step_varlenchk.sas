data m1; length name $3; name = 'abc'; k = 1; run;
data m2; length name $6; name = 'abcdef'; k = 1; run;
data out.b;
  set m1 m2;        /* name is $3 from M1; M2's $6 values are cut */
run;
