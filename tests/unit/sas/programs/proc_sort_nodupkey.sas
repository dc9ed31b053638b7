data raw;
  input id grp $ val;
datalines;
3 b 30
1 a 10
2 a 20
1 a 11
3 b 31
;
proc sort data=raw out=out.uniq nodupkey dupout=out.dups;
  by id;
run;
proc sort data=raw
          out=out.desc;
  by grp descending val;
PROC SORT DATA=raw; BY val; RUN;     * in place, in WORK;
data out.inplace; set raw; run;
