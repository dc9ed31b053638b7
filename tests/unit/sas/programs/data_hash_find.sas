data lookup;
   input code $ label $;
datalines;
a apple
b banana
;
data out.found(drop=rc);
  length code $ 8 label $ 8;
  if _n_ = 1 then do;
    declare hash h(dataset: 'lookup');
    h.defineKey('code');
    h.defineData('label');
    h.defineDone();
  end;
  input code $;
  rc = h.find();
  found = (rc = 0);
  if not found then label = 'none';
datalines;
b
z
a
;
