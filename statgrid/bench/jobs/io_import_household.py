# IO · Base SAS statistics: fixed-width census household file → data set, then a summary by a code.
import statgrid
from statgrid.bench import datagen, jobkit

p = jobkit.params()
with statgrid.session() as s:
    datagen.evict_inputs(s, p.library, ["household"])    # read from storage: data larger than memory
    s.import_fixed(p.text(s, "household"), "work.hh", datagen.layout("household"))
    s.means("work.hh", var="h003 h006 h011", class_="h001", out="work.hh_means")
    s.sort("work.hh", by="h002 hh_id", out="work.hh_sorted")
