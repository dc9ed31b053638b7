data out.csvish;
  infile datalines dsd dlm=',' missover;
  input id city :$12. amount;
datalines;
1,"New York",10.5
2,,7
3,Boston,
;
data out.pairs;
   input k v @@;     * several observations per line;
   cards;
1 10 2 20
3 30
;
