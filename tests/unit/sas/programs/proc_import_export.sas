/* PROC IMPORT of a CSV (names made valid, types guessed, dates as SAS dates) and PROC EXPORT back */
proc import datafile="%sysget(DATADIR)/sales_import.csv" out=out.sales dbms=csv replace;
  getnames=yes;
  guessingrows=max;
run;
proc export data=out.sales outfile="%sysget(OUTDIR)/sales_out.csv" dbms=csv replace;
run;
data out.back;
  infile "%sysget(OUTDIR)/sales_out.csv" dsd firstobs=2 truncover;
  length region_name $12 when_text $9 flag $3;
  input region_name $ sales_amt when_text $ flag $;
run;
