/* IO · Base SAS statistics: fixed-width census household file → data set, then a summary by a code.
   The SAS twin of io_import_household.py. Parameters come from the job's environment, which the grid
   gives every job (statgrid bench mixed sets them; `statgrid run` takes -set NAME VALUE). */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);
%let textdir = %sysfunc(pathname(&lib));

data work.hh;
  infile "&textdir/household.txt" lrecl=549 truncover;
  input
    hh_id 1-10  h001 11-12  h002 13-16  h003 17-25  h004 $ 26-31  h005 32-32
    h006 33-39  h007 $ 40-42  h008 43-48  h009 49-50  h010 51-54  h011 55-63
    h012 $ 64-69  h013 70-70  h014 71-77  h015 $ 78-80  h016 81-86  h017 87-88
    h018 89-92  h019 93-101  h020 $ 102-107  h021 108-108  h022 109-115  h023 $ 116-118
    h024 119-124  h025 125-126  h026 127-130  h027 131-139  h028 $ 140-145  h029 146-146
    h030 147-153  h031 $ 154-156  h032 157-162  h033 163-164  h034 165-168  h035 169-177
    h036 $ 178-183  h037 184-184  h038 185-191  h039 $ 192-194  h040 195-200  h041 201-202
    h042 203-206  h043 207-215  h044 $ 216-221  h045 222-222  h046 223-229  h047 $ 230-232
    h048 233-238  h049 239-240  h050 241-244  h051 245-253  h052 $ 254-259  h053 260-260
    h054 261-267  h055 $ 268-270  h056 271-276  h057 277-278  h058 279-282  h059 283-291
    h060 $ 292-297  h061 298-298  h062 299-305  h063 $ 306-308  h064 309-314  h065 315-316
    h066 317-320  h067 321-329  h068 $ 330-335  h069 336-336  h070 337-343  h071 $ 344-346
    h072 347-352  h073 353-354  h074 355-358  h075 359-367  h076 $ 368-373  h077 374-374
    h078 375-381  h079 $ 382-384  h080 385-390  h081 391-392  h082 393-396  h083 397-405
    h084 $ 406-411  h085 412-412  h086 413-419  h087 $ 420-422  h088 423-428  h089 429-430
    h090 431-434  h091 435-443  h092 $ 444-449  h093 450-450  h094 451-457  h095 $ 458-460
    h096 461-466  h097 467-468  h098 469-472  h099 473-481  h100 $ 482-487  h101 488-488
    h102 489-495  h103 $ 496-498  h104 499-504  h105 505-506  h106 507-510  h107 511-519
    h108 $ 520-525  h109 526-526  h110 527-533  h111 $ 534-536  h112 537-542  h113 543-544
    h114 545-548;
run;

proc means data=work.hh noprint;
  class h001;
  var h003 h006 h011;
  output out=work.hh_means;
run;

proc sort data=work.hh out=work.hh_sorted;
  by h002 hh_id;
run;
