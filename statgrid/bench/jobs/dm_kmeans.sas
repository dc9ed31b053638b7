/* Data mining: k-means segmentation of the customer table (inputs standardized).
   The SAS twin of dm_kmeans.py. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

proc hpclus data=&lib..customer120 maxclusters=8 seed=&seed standardize=std;
  input v002 v003 v004 v007 v008 v009 / level=interval;
  score out=work.segments;
run;
