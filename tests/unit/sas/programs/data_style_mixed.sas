*------------------------------------------------------*
 * Written the way production code looks: mixed case,  *
 * statements over lines, every kind of comment.       *
 *------------------------------------------------------*;
%* a macro comment in open code;
OPTIONS NOCENTER
        LS=100 ;
DATA Work.Raw ;
  Length Name $ 10 ;
  INPUT Name $
        Height       /* inches */
        Weight ;     /* pounds */
  BMI = Weight /
        ( Height ** 2 ) * 703 ;
CARDS;
Ann 60 120
Bob 70 180
;
data OUT.Tall; SET raw; IF height > 65;  * subsetting IF;
Data out.NAMES (Keep = name)  ;   set RAW
   ;
Run ;
