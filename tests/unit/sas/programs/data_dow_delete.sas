data trans;
  input id amt;
datalines;
1 10
1 20
2 5
;
/* the DOW loop: one implicit iteration per BY group */
data out.dow;
  do until (last.id);
    set trans;
    by id;
    total = sum(total, amt);
    n = sum(n, 1);
  end;
  avg = total / n;
  drop amt;
run;
data out.nodel;
  set trans;
  obs = _n_;
  if amt < 10 then delete;
run;
