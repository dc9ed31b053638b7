# Data mining: k-means segmentation of the customer table.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    s.fastclus(p.ds("customer120"), var="v002 v003 v004 v007 v008 v009", maxclusters=8, seed=p.seed,
               standardize=True, out="work.segments")
