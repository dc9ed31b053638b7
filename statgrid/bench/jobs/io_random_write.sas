/* IO · Base SAS statistics: read 1 KB rows at random, change them, write them back as a new data set.
   The SAS twin of io_random_write.py (max(100, n/50) observations by POINT=, drawn with RANUNI). */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

data work.picked;
  do _k = 1 to max(100, floor(_nobs / 50));
    _obs = ceil(ranuni(&seed + 1) * _nobs);
    set &lib..rows1k point=_obs nobs=_nobs;
    output;
  end;
  stop;
  drop _k;
run;

data work.updated;
  set work.picked;
  k = k + 1;
  payload = upcase(payload);
run;

data work.updated_copy;
  set work.updated;
run;
