data people;
  input name $ age sex $;
datalines;
ann 34 F
bob 10 M
cy 15 F
dan 40 M
eve 8 F
;
data out.adults(rename=(age=years))
     out.kids(drop=sex);
  set people(keep=name age sex);
  where sex = 'F' or age < 12;
  if age >= 18 then output out.adults;
  else output out.kids;
run;
data out.mid;
  set people(where=(age between 10 and 34 and name contains 'a'));
run;
data out.sub;
  set people(firstobs=2 obs=4 drop=sex);
  if age > 12;          /* subsetting IF */
run;
