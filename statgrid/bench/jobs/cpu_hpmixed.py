# CPU · advanced analytics: a sparse mixed model — one random intercept per subject (thousands of levels).
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    r = s.mixed(p.ds("design"), "y = a b x visit", class_="a b", random="intercept", subject="subject",
                print=False)
    s.write_table("work.hpm_solution", r.to_arrow())
