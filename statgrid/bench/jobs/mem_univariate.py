# Memory · Base SAS statistics: univariate on many variables by group (all values held per group).
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    xs = jobkit.head_columns(s, p.ds("customer120"), "v", 40)
    nums = [c for c in xs if int(c[1:]) % 5 not in (0, 1)]
    s.univariate(p.ds("customer120"), var=nums, by="v005", normal=True)
