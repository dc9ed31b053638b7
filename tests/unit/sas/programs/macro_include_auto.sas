options source2;
%include inc;
%put syslast=&syslast;
%put syserr=&syserr;
data out.auto;
   dsn = "&syslast";
   if "&sysver" ne '' and "&sysscp" ne '' then ok = 1;
run;
