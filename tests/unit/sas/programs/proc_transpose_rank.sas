/* PROC TRANSPOSE (COLn, ID with PREFIX, BY) and PROC RANK (ties, GROUPS=, DESCENDING, RANKS, BY) */
data work.long;
  input id year score;
  label score = 'Test score';
  datalines;
1 2020 10
1 2021 12
2 2020 7
2 2021 .
;
proc transpose data=work.long out=out.wide prefix=y;
  by id;
  id year;
  var score;
run;
proc transpose data=work.long(where=(id=1)) out=out.cols;
  var year score;
run;
data work.r;
  input g x;
  datalines;
1 5
1 3
1 5
1 .
1 9
2 4
2 4
;
proc rank data=work.r out=out.ranks;
  var x;
  ranks rx;
run;
proc rank data=work.r out=out.grp groups=2 descending ties=low;
  by g;
  var x;
run;
