data m1; length name $3; name = 'abc'; k = 1; run;
data m2; length name $6; name = 'abcdef'; k = 1; run;
data out.a; merge m2 m1; by k; run;                  /* the longest first: nothing cut */
data out.c; length name $8; set m1 m2; run;          /* a LENGTH long enough */
options varlenchk=nowarn;
data out.d; set m1 m2; run;                          /* NOWARN */
