%macro classify(val);
  %if &val > 10 %then %put &val is big;
  %else %put &val is small;
%mend classify;
%classify(5)
%classify(12)

%put sum=%eval(7 + 3 * 2);
%put div=%eval(7/2);
%put f=%sysevalf(7/2);
%put c=%sysevalf(2.6, ceil);
%put cmp=%eval(abc < abd);   %* character comparison when an operand is not a number;

%let list = red green blue;
%put second=%scan(&list, 2);
%put up=%upcase(&list);
%put len=%length(&list);
%put sub=%substr(&list, 5, 5);
%put idx=%index(&list,blue);

%macro count;
  %let k = 1;
  %do %while(&k <= 4);
     %let k = %eval(&k * 2);
  %end;
  %put k=&k;
  %let j = 10;
  %do %until(&j < 5);
     %let j = %eval(&j - 4);
  %end;
  %put j=&j;
%mend;
%count
