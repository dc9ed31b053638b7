"""The demo job: a small mixed workload in one session — data generation, export and import of
delimited text, a DATA step, a sort, MEANS, FREQ with chi-square, CONTENTS and PRINT."""
import os

import statgrid

ROWS = int(os.environ.get("STATGRID_DEMO_ROWS", "200000"))

with statgrid.session() as s:
    s.sql(f"""
        CREATE TABLE work.sales AS
        SELECT i AS order_id,
               ['north', 'south', 'east', 'west'][1 + (hash(i) % 4)::INT] AS region,
               ['widget', 'gadget', 'gizmo'][1 + (hash(i * 7) % 3)::INT] AS product,
               round(10 + 90 * ((hash(i * 13) % 10000) / 10000.0), 2) AS amount,
               1 + (hash(i * 17) % 20)::INT AS quantity
        FROM range({ROWS}) t(i)
    """)
    csv_path = os.path.join(s.work.path, "sales.csv")
    s.export_csv("work.sales", csv_path)
    s.import_csv(csv_path, out="work.sales_in", types={"amount": "DOUBLE"})
    s.data("work.big", set="work.sales_in", where="amount > 20",
           compute={"revenue": "amount * quantity"}, drop=["order_id"])
    s.sort("work.big", by=["region", "revenue desc"], out="work.big_sorted")
    s.means("work.big_sorted", var=["amount", "revenue"], class_=["region"],
            stats=["n", "mean", "std", "min", "median", "max"])
    s.freq("work.big_sorted", tables=["region*product"], chisq=True)
    s.contents("work.big_sorted")
    s.print("work.big_sorted", obs=5)
