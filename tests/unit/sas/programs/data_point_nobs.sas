data base;
   do i = 1 to 5;
      v = i * 11;
      output;
   end;
run;
data out.picked;
  do p = nobs to 1 by -2;
    set base point=p nobs=nobs;
    output;
  end;
  stop;      /* POINT= never reaches the end of the file */
run;
