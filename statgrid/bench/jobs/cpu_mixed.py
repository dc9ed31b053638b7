# CPU · advanced analytics: mixed model — random intercept and slope per subject.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    s.mixed(p.ds("design"), "y = a x visit", class_="a", random="intercept visit", subject="subject")
