/* CPU · Base SAS statistics: a codegen-heavy macro job — %DO loops generate one PROC SUMMARY step per
   analysis variable × class variable (40 × 5 = 200 steps) on the customer table.
   The SAS twin of macro_codegen.py. The variable list comes from DICTIONARY.COLUMNS: the continuous
   variables (V002-V004, V007-V009, …: the number's remainder by 5 is 2, 3 or 4), the first 40. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc sql noprint;
  select name into :numvars separated by ' '
    from dictionary.columns
    where libname = upcase("&lib") and memname = 'CUSTOMER120' and type = 'num'
          and name like 'v%' and mod(input(substr(name, 2), 3.), 5) >= 2
    order by varnum;
quit;

%macro codegen(nvars, classes);
  %local i j v c;
  %do i = 1 %to &nvars;
    %let v = %scan(&numvars, &i);
    %do j = 1 %to %sysfunc(countw(&classes));
      %let c = %scan(&classes, &j);
      proc summary data=&lib..customer120 nway;
        class &c;
        var &v;
        output out=work.s_&v._&c n=n mean=mean std=std min=min max=max;
      run;
    %end;
  %end;
%mend codegen;
%codegen(40, v005 v010 v015 v020 v025)
