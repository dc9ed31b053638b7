x 'touch shell_ran_marker';
X "echo hello";
data out.after;     /* an ERROR in a global statement does not start syntax-check mode */
  x = 1;
run;
