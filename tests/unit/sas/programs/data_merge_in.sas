data emp; input id name $; datalines;
1 ann
2 bob
4 dan
;
data pay; input id salary; datalines;
1 100
3 300
4 400
4 450
;
data out.both out.only_emp(keep=id name) out.only_pay(keep=id salary);
  merge emp(in=e) pay(in=p);
  by id;
  if e and p then output out.both;
  else if e then output out.only_emp;
  else output out.only_pay;
run;
