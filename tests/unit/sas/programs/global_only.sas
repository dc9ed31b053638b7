/* Global statements alone: the driver, the options table, TITLE, ENDSAS */
libname out list;
OPTIONS memsize=8G
        nosuchoption;
title1 'A'; title3 'C';
filename f1 "/nonexistent/dir/file.txt";
endsas;
data out.never; x = 1; run;
