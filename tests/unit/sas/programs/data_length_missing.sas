data out.lens;
  length short $3 long $10;
  short = 'abcdef';         /* truncated to its length */
  long = 'abcdef';
  implicit = 'xy';          * first use fixes the length at 2;
  implicit = 'xyz123';
  cat = short || '|';
run;
data out.miss(drop=val);
  missing a;
  input id val;
  length kind $ 8;
  if val = .a then kind = 'special';
  else if val = . then kind = 'plain';
  else kind = 'number';
  lowest = (val < -1000);
  is_miss = missing(val);
  bigger = (.a > .);
  total = sum(val, 1);
  plus = val + 1;
datalines;
1 5
2 .
3 A
;
