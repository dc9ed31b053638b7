data out.n;
  length k 4 j 3;
  k = 2097153;      /* length 4: integers exact up to 2,097,152 */
  j = 8193;         /* length 3: integers exact up to 8,192 */
  full = k;         /* the PDV keeps all 8 bytes until the value is written */
  output;
  k = 2097152; j = .; full = k; output;
run;
data out.d;
  length default=4;
  m = 2097153;
run;
