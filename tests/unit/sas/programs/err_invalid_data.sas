data out.nums;
  input id x;
datalines;
1 5
2 abc
3 7
;
