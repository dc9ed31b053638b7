# CPU · advanced analytics: stepwise regression on all 292 x variables of the modelling table.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    xs = jobkit.head_columns(s, p.ds("model297"), "x", 292)
    s.reg(p.ds("model297"), "amount = " + " ".join(xs), selection="stepwise", sle=0.01, sls=0.01,
          outest="work.wide_est")
