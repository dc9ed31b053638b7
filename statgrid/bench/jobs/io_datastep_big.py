# IO · Base SAS statistics: a very large data step over the messy table (derive, filter, write).
import statgrid
from statgrid.bench import datagen, jobkit

p = jobkit.params()
with statgrid.session() as s:
    datagen.evict_inputs(s, p.library, ["messy55"])    # read from storage: data larger than memory
    s.data("work.clean", p.ds("messy55"), where="c01 IS NOT NULL",
           compute={"label_clean": "upper(trim(label))", "year": "year(event_date)",
                    "ratio": "c01 / nullif(c02, 0)", "flag": "coalesce(c04, false)"})
    s.means("work.clean", var="c01 c02 c05 ratio", class_="year", out="work.by_year")
