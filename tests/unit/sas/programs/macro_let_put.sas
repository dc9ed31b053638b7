/* %LET and %PUT: &v, &v. with a suffix, &&v&i indirection, values of several words */
%let n = 3;
%LET v1 = alpha;  %let v2=beta;
%let  v3 =   gamma   ;            /* %LET drops leading and trailing blanks */
%let i = 2;
%put The value is &&v&i;
%put n=&n.x and &v1&v2;
%put [&v3];
%let phrase = &v1 and &v2;
%put phrase=&phrase;

data out.words;
   length w $ 8
          p $ 20;
   w = "&v3";        /* double quotes resolve */
   p = "&phrase";
   q = '&v1';        /* single quotes do not */
   n = &n * 2;
run;
