/* A macro that generates one DATA step per value of a list (%SCAN, %DO %WHILE), %LOCAL and %GLOBAL */
data base;
  input region $ amount;
  datalines;
north 10
south 20
north 5
east 7
;
%global total_steps;
%let total_steps = 0;
%macro split(ds, values);
  %local i v;
  %let i = 1;
  %do %while(%length(%scan(&values, &i)) > 0);
    %let v = %scan(&values, &i);
    data out.&ds._&v;
      set base;
      where region = "&v";
    %let i = %eval(&i + 1);
    %let total_steps = %eval(&total_steps + 1);
  %end;
  run;
%mend split;
%split(sales, north south)
%put steps=&total_steps;
%put i_outside=&i;
