# IO · ETL: star schema — facts enriched from the customer dimension by hash lookup, then aggregated.
import statgrid
from statgrid.bench import datagen, jobkit

p = jobkit.params()
with statgrid.session() as s:
    datagen.evict_inputs(s, p.library, ["customer_dim", "sales_fact"])    # read from storage: data larger than memory
    s.import_fixed(p.text(s, "customer_dim"), "work.dim", datagen.layout("customer_dim"))
    s.lookup(p.ds("sales_fact"), "work.dim", key="cust_id", out="work.enriched", keep="region segment score")
    s.summary("work.enriched", var="amount qty", class_="region segment", out="work.region_segment")
