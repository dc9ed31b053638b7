/* PROC SQL views: stored at CREATE VIEW, run when read (by PROC PRINT, a DATA step, another view) */
data a; input g $ x; datalines;
a 1
b 2
a 3
;
proc sql;
  create view work.v as select g, sum(x) as sx from work.a group by g;
  create view work.w as select * from work.a where g in (select g from work.v where sx > 3);
quit;
proc print data=work.v; run;
data out.b; set work.w; run;

