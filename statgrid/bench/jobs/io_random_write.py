# IO · Base SAS statistics: read 1 KB rows at random, change them, write them back as a new data set.
import numpy as np

import statgrid
from statgrid.bench import datagen, jobkit

p = jobkit.params()
rng = np.random.default_rng(p.seed + 1)
with statgrid.session() as s:
    datagen.evict_inputs(s, p.library, ["rows1k"])    # read from storage: data larger than memory
    n = s.nrows(s.dataset(p.ds("rows1k")))
    s.point(p.ds("rows1k"), rng.integers(1, n + 1, max(100, n // 50)), out="work.picked")
    s.data("work.updated", "work.picked", compute={"k": "k + 1", "payload": "upper(payload)"})
    s.copy("work.updated", "work.updated_copy")
