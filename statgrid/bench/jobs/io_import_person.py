# IO · Base SAS statistics: fixed-width person file → data set, joined to households, frequencies.
import statgrid
from statgrid.bench import datagen, jobkit

p = jobkit.params()
with statgrid.session() as s:
    datagen.evict_inputs(s, p.library, ["person"])    # read from storage: data larger than memory
    s.import_fixed(p.text(s, "person"), "work.person", datagen.layout("person"))
    s.sql("CREATE TABLE work.per_hh AS SELECT hh_id, count(*) AS persons, avg(p003) AS p003_mean "
          "FROM work.person GROUP BY hh_id")
    s.freq("work.person", tables=["p001", "p001*p005"], out="work.person_freq")
