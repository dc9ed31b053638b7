# CPU · advanced analytics: stepwise logistic regression on the 297-column modelling table.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    xs = jobkit.head_columns(s, p.ds("model297"), "x", 40)
    s.logistic(p.ds("model297"), "target = segment region " + " ".join(xs), class_="segment region", event=1,
               selection="stepwise", sle=0.01, sls=0.01, lackfit=True,
               outest="work.logit_est")
