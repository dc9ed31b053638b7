/* FILENAME with a list of files: read as one stream */
filename both ("%sysget(DATADIR)/part1.txt"
               "%sysget(DATADIR)/part2.txt");
data out.parts;
  infile both;
  input id name $;
run;
filename both clear;
