# Data mining: random forest on a sample of the modelling table, with variable importance.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    n = s.nrows(s.dataset(p.ds("model297")))
    s.surveyselect(p.ds("model297"), "work.sample", n=min(n, 20000), seed=p.seed)
    xs = jobkit.head_columns(s, "work.sample", "x", 30)
    s.forest("work.sample", "target", xs + ["segment", "region"], kind="classification", class_="segment region",
             ntrees=50, seed=p.seed, out="work.scored")
