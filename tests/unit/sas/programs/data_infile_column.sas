/* Column and formatted input from a file with a header line */
data out.people;
  infile raw firstobs=2 truncover;
  input name $ 1-8 age 10-11 @13 born date9. +1 score comma6.;
  format born date9.;
run;
