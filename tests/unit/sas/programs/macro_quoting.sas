%let a = %str(x; y);
%put a=&a;
%let b = %nrstr(&notresolved);
%put b=&b;
%let c = %str(  padded  );
%put [&c];
%let d = a%str(,)b;
%put second=%scan(&d, 2, %str(,));
%macro q(p);
  %put p=&p;
%mend q;
%q(%str(a,b))
%let e = %superq(b);
%put e=&e;
options symbolgen;
%let city = Paris;
%put &city;
options nosymbolgen;
%put done;
