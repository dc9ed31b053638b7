"""Parsers of the SAS front end owned by the DATA step: expressions (expr.py → ast.py) and DATA step
statements (statements.py)."""
