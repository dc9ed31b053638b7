# CPU · Base SAS statistics: a codegen-heavy job — one summary step per analysis variable × class
# variable (40 × 5 = 200 steps) on the customer table, as macro_codegen.sas generates with %DO loops.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    vs = [c for c in jobkit.head_columns(s, p.ds("customer120"), "v", 119) if int(c[1:]) % 5 >= 2][:40]
    for v in vs:
        for c in ("v005", "v010", "v015", "v020", "v025"):
            s.summary(p.ds("customer120"), var=v, class_=c, stats="n mean std min max", nway=True,
                      out=f"work.s_{v}_{c}")
