"""The SAS front end: a SAS program (.sas) run as one statgrid session.

    lexer → macro processor (macro/) → statements → global statements (program.py) or steps:
    DATA steps (datastep/) and PROC steps (procs/) → the session's engine (DuckDB, Parquet libraries)
    values.py, functions/, formats/ are shared by all of them; saslog.py writes the SAS log and listing.
"""
