/* INPUT into arrays and variable lists; MISSOVER and TRUNCOVER on short lines */
data out.arr;
  array x{3};
  input x{*} name $;
  datalines;
1 2 3 bob
4 5 6 amy
;
data out.sub;
  array s{0:2} s0-s2;
  do i = 0 to 2;
    input s{i} @;
  end;
  input;
  drop i;
  datalines;
7 8 9
10 11 12
;
data out.numbered;
  input id q1-q3;
  datalines;
1 10 20 30
2 40 50 60
;
data out.grouped;
  input (a b c) (2. 3.) (d1-d2) (:$4.);
  datalines;
1122233abc de
;
data out.trunc;
  infile datalines truncover;
  input id 1-2 code $ 4-8;
  datalines;
1  ab
22 cdefgh
3
;
data out.miss;
  infile datalines missover;
  input id 1-2 code $ 4-8;
  datalines;
1  ab
22 cdefgh
3
;
run;
