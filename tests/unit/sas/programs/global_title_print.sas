options nodate nonumber nocenter;
title 'Quarterly Report';
title2 "Region: North";
footnote 'Confidential';
data sales;
  input name $ amount;
datalines;
ann 10
bob 25
;
proc print data=sales;
run;
title;
footnote;
proc print data=sales(obs=1);
run;
