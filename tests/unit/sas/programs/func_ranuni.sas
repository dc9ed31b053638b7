* RANUNI: the first call's seed starts the stream, later calls continue it;
data out.uni;
  do i = 1 to 5;
    u = ranuni(12345);
    output;
  end;
run;
data out.again;      /* a new step starts a new stream from the seed */
  u = ranuni(12345);
run;
