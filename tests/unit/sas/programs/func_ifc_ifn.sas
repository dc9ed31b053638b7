/* IFC and IFN: the value for true, false and (when given) missing */
data out.x; do i = 0, 1, .; c = ifc(i, 'yes', 'no', 'miss'); n = ifn(i, 10, 20); n2 = ifn(i, 1, 2, 3); output; end; run;

