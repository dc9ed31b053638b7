# CPU · advanced analytics: stepwise regression on the 297-column modelling table.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    xs = jobkit.head_columns(s, p.ds("model297"), "x", 120)
    s.reg(p.ds("model297"), "amount = " + " ".join(xs), selection="stepwise", sle=0.01, sls=0.01,
          outest="work.reg_est")
