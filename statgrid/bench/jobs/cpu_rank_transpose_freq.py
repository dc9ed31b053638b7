# CPU · Base SAS statistics: rank, transpose and frequency tables on the customer table.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    s.rank(p.ds("customer120"), "work.ranked", var="v002 v003 v004", groups=10)
    s.transpose("work.ranked", "work.long", var="v002 v003 v004", by="cust_id")
    s.freq("work.ranked", tables=["v005", "v005*v010", "v002*v005"], chisq=True)
