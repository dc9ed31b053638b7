"""Reports from saved results: tables and charts (model.py) built once (build.py, tables.py) and
written by one exporter per format (md.py, csv_out.py, json_out.py, html.py; charts.py draws)."""
