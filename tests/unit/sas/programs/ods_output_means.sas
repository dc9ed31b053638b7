/* ODS OUTPUT: PROC MEANS's Summary table as a data set (SAS's column names), a table no PROC made, CLOSE */
data work.a;
  do i = 1 to 30;
    g = mod(i, 3);
    x = i * 1.5;
    output;
  end;
run;
ods output Means.Summary=out.sm NoSuchTable=out.nope;
proc means data=work.a;
  class g;
  var x;
run;
ods output Summary(persist=proc)=out.kept;
ods output close;
proc means data=work.a;
  var x;
run;
