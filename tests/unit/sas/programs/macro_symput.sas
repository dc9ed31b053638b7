data scores;
  input name $ score;
datalines;
ann 10
bob 25
cy 7
;
data _null_;
  set scores end=last;
  total + score;
  call symputx(cats('n', _n_), name);
  if last then do;
    call symput('total', put(total, 8.));     /* SYMPUT keeps the leading blanks */
    call symputx('count', _n_);              /* SYMPUTX trims them */
  end;
run;
%put total=[&total];
%put count=[&count];
%put last=&&n&count;
DATA out.summary;
  LENGTH who $ 8;
  total = &total;
  count = &count;
  mean = total / count;
  who = symget('n2');
RUN;
