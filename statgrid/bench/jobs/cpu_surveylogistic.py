# CPU · advanced analytics: survey-weighted logistic regression — strata, clusters (PSUs) and weights,
# Taylor-series variance.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    s.write("work.svy", f"SELECT id, target, segment, region, x1, x2, x3, x4, x5, (id % 40)::DOUBLE AS psu, "
                        f"(1 + id % 3)::DOUBLE AS w FROM {s.dataset(p.ds('model297')).scan_sql()}")
    r = s.surveylogistic("work.svy", "target = segment x1 x2 x3 x4 x5", class_="segment", event=1,
                         weight="w", strata="region", cluster="psu", print=False)
    s.write_table("work.svy_est", r.to_arrow())
