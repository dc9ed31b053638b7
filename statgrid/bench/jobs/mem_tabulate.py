# Memory · Base SAS statistics: multi-way summary tables over class grids.
import statgrid
from statgrid.bench import jobkit

p = jobkit.params()
with statgrid.session() as s:
    s.tabulate(p.ds("customer120"), rows="v005 v010", cols="v015", var="v002 v003", stats="n mean sum std pctsum",
               out="work.tab_cust")
    s.tabulate(p.ds("sales_fact"), rows="product_id", var="amount", stats="n sum mean max", out="work.tab_product")
