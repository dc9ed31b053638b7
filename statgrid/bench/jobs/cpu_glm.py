# CPU · Base SAS statistics: GLM with class interactions, Type I/III and LS-means.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    s.glm(p.ds("design"), "y count = a|b|c x", class_="a b c", lsmeans="a a*b", outstat="work.glm_ss")
