proc format;
  value agegrp low -< 13 = 'Child'
               13 - 19  = 'Teen'
               20 - high = 'Adult'
               other = 'Unknown';
  value $sexf 'F' = 'Female'
              'M' = 'Male';
run;

data out.fmt;
  input age sex $;
  length grp $ 8 sx $ 6;
  grp = put(age, agegrp.);
  sx = put(sex, $sexf.);
datalines;
5 F
13 M
19.5 F
40 M
. F
;
