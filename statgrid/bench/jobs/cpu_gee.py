# CPU · advanced analytics: GEE — a binary outcome repeated over visits, exchangeable working correlation.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    r = s.gee(p.ds("design"), "event = a x visit", subject="subject", type="exch", dist="binomial",
              class_="a subject", descending=True, print=False)
    s.write_table("work.gee_est", r.to_arrow())
