/* PROC SQL: SAS's dialect over the data-set layer */
data work.a;
  input g $ h x y d :date9.;
  format d date9.;
  datalines;
a 1 1 10 01JAN2020
a 2 2 20 15MAR2020
b 1 3 . 01JAN2021
b 1 4 40 .
c 2 5 50 31DEC2019
;
proc sql noprint;
  create table out.grp as
    select g, sum(x) as sx, mean(y) as my format=8.2 label='Mean of y', count(*) as n
      from work.a
      group by g;
  select count(*) into :nlow trimmed from work.a where y < 25;   /* a missing y counts: missing < 25 */
  select distinct g into :glist separated by ',' from work.a;
  select x into :x1 - :x3 from work.a where g in ("a", 'b') order by x desc;
  create table out.calc as
    select g, x * 2 as dbl, calculated dbl + 1 as dbl1,
           case when y is missing then 'none' else 'some' end as has,
           put(x, z3.) as xz, year(d) as yr
      from work.a
      where d >= '01jan2020'd and g in (select g from out.grp where sx > 3)
      order by x;
  create table out.mod as select * from work.a(keep=g x);
  insert into out.mod values ('z', 99);
  update out.mod set x = x + 100 where g = 'a';
  delete from out.mod where g eq 'b';
  create table out.cols as select name, type from dictionary.columns
    where libname = 'OUT' and memname = 'GRP';
  create table out.missjoin as
    select l.g, r.h from work.a as l, work.a as r where l.y = r.y and l.g = 'b' and r.h = 1;
quit;
%put NOTE: nlow=&nlow glist=&glist x1=&x1 x3=&x3 sqlobs=&sqlobs;
