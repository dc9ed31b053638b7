data out.attrs(label='Payments by person');
  length default=4;
  length name $ 12;
  attrib amt   length=8 label='Amount paid' format=comma8.2
         paid  label='Date paid' format=date9. informat=date9.;
  label name = 'Person';
  input name $ amt paid :date9. small;
datalines;
ann 1234.5 01FEB2021 3
;
