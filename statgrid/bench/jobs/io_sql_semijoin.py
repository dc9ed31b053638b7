# IO · ETL: SQL semi-join of the fact table to a filtered dimension (IN (subquery)).
import statgrid
from statgrid.bench import datagen, jobkit

p = jobkit.params()
with statgrid.session() as s:
    datagen.evict_inputs(s, p.library, ["customer_dim", "sales_fact"])    # read from storage: data larger than memory
    s.import_fixed(p.text(s, "customer_dim"), "work.dim", datagen.layout("customer_dim"))
    s.sql(f"CREATE TABLE work.seg_a AS SELECT * FROM {p.ds('sales_fact')} "
          "WHERE cust_id IN (SELECT cust_id FROM work.dim WHERE segment = 'A')")
    s.sql("CREATE TABLE work.seg_a_month AS SELECT date_trunc('month', sale_date) AS month, sum(amount) AS amount, "
          "count(*) AS n FROM work.seg_a GROUP BY 1 ORDER BY 1")
