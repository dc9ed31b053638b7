# IO · Base SAS statistics: random reads by observation number (SET POINT=) on 128 B, 1 KB, 10 KB rows.
import numpy as np

import statgrid
from statgrid.bench import datagen, jobkit

p = jobkit.params()
rng = np.random.default_rng(p.seed)
with statgrid.session() as s:
    datagen.evict_inputs(s, p.library, ["rows128", "rows1k", "rows10k"])    # read from storage: data larger than memory
    for name in ("rows128", "rows1k", "rows10k"):
        n = s.nrows(s.dataset(p.ds(name)))
        s.point(p.ds(name), rng.integers(1, n + 1, max(100, n // 100)), out=f"work.pick_{name}")
