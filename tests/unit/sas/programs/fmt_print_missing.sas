options nodate nonumber nocenter;
title 'Payments';
data pay;
  input who $ when :date9. amt;
  format when date9. amt comma8.2;
datalines;
ann 01FEB2021 1234.5
bob 15MAR2021 .
;
options missing='-';
proc print data=pay noobs;
run;
