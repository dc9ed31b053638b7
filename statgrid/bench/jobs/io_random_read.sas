/* IO · Base SAS statistics: random reads by observation number (SET POINT=) on 128 B, 1 KB, 10 KB rows.
   The SAS twin of io_random_read.py: max(100, n/100) observations of each table, numbers drawn with
   RANUNI (the rows differ from the Python twin's, which draws with numpy; the count is the same). */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

%macro pick(tables);
  %local i name;
  %do i = 1 %to %sysfunc(countw(&tables));
    %let name = %scan(&tables, &i);
    data work.pick_&name;
      do _k = 1 to max(100, floor(_nobs / 100));
        _obs = ceil(ranuni(&seed) * _nobs);
        set &lib..&name point=_obs nobs=_nobs;
        output;
      end;
      stop;
      drop _k;
    run;
  %end;
%mend pick;
%pick(rows128 rows1k rows10k)
