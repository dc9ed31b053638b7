# CPU · advanced analytics: generalized linear models — Poisson and negative binomial counts, gamma.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    s.genmod(p.ds("design"), "count = a c x", dist="poisson", class_="a c")
    s.genmod(p.ds("design"), "count = a c x", dist="negbin", class_="a c")
    s.genmod(p.ds("model297"), "amount = segment x1 x2 x4", dist="normal", class_="segment")
