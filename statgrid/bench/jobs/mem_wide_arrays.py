# Memory · advanced analytics: wide arrays — standardize and summarize all 297 columns at once.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    xs = jobkit.head_columns(s, p.ds("model297"), "x", 292)
    s.standardize(p.ds("model297"), "work.z", var=xs, method="std")
    s.means("work.z", var=xs, stats="n mean std min max", out="work.z_means")
