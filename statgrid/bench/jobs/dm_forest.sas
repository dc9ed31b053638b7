/* Data mining: random forest on a sample of the modelling table, with variable importance.
   The SAS twin of dm_forest.py: SURVEYSELECT draws at most 20,000 rows, HPFOREST grows 50 trees
   (its listing has the variable importance), HP4SCORE scores the sample with the saved model. */
%let lib  = %sysget(STATGRID_BENCH_LIBRARY);
%let seed = %sysget(STATGRID_BENCH_SEED);

data _null_;
  if 0 then set &lib..model297 nobs=nobs;
  call symputx("sample_n", min(nobs, 20000));
  stop;
run;

proc surveyselect data=&lib..model297 out=work.sample method=srs n=&sample_n seed=&seed;
run;

%let model_file = %sysfunc(pathname(work))/forest.bin;

proc hpforest data=work.sample seed=&seed maxtrees=50;
  target target / level=binary;
  input x1-x30 / level=interval;
  input segment region / level=nominal;
  save file="&model_file";
run;

proc hp4score data=work.sample;
  id id;
  score file="&model_file" out=work.scored;
run;
