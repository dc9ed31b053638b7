# IO · Base SAS statistics: the big sort, small MEMSIZE so it spills to UTIL (temp ≈ 3× input).
import statgrid
from statgrid.bench import datagen, jobkit

p = jobkit.params()
with statgrid.session(memsize="256M") as s:
    datagen.evict_inputs(s, p.library, ["messy55"])    # read from storage: data larger than memory
    s.sort(p.ds("messy55"), by="cust_key label event_date", out="work.sorted")
    s.sort("work.sorted", by="cust_key", out="work.first_per_key", nodupkey=True)
