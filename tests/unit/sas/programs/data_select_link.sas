DATA out.grades;
  INPUT name $ score;
  SELECT;
    WHEN (score >= 90) grade = 'A';
    WHEN (score >= 80) grade = 'B';
    OTHERWISE          grade = 'C';
  END;
  select (grade);
    when ('A', 'B') pass = 1;
    otherwise pass = 0;
  end;
  link bonus;
  return;           /* back to the top: the implicit OUTPUT happens here */
bonus:
  if pass then points = score + 5;
  else points = score;
  return;           /* back after the LINK */
DATALINES;
ann 95
bob 85
cy 50
;
