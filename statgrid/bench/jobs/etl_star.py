# ETL: load the dimension, build a star-schema mart in DATA, aggregate by month and region.
import statgrid
from statgrid.bench import datagen, jobkit

p = jobkit.params()
with statgrid.session() as s:
    s.import_fixed(p.text(s, "customer_dim"), "work.dim", datagen.layout("customer_dim"))
    s.lookup(p.ds("sales_fact"), "work.dim", key="cust_id", out="work.mart", keep="region segment")
    s.sql("CREATE TABLE work.mart_month AS SELECT region, date_trunc('month', sale_date) AS month, "
          "sum(amount) AS amount, sum(qty) AS qty FROM work.mart GROUP BY ALL ORDER BY ALL")
    s.sort("work.mart", by="region sale_date", out="work.mart_sorted")
