"""The SAS expression parser and WHERE → SQL: precedence by SAS 9.4 Language Reference ("Order of Evaluation
in Compound Expressions"), literals, WHERE-only operators; WHERE's missing-value order checked on DuckDB."""
from __future__ import annotations

import duckdb
import pytest

from statgrid.sas.errors import SasError
from statgrid.sas.parse import ast as A
from statgrid.sas.parse.expr import parse_expression_text as p
from statgrid.sas.values import SpecialMissing
from statgrid.sas.where_sql import Column, WhereNotSql, register_udfs, soundex, where_sql


def shape(n):
    """A compact Lisp-like text of a tree, for precedence checks."""
    if isinstance(n, A.Num):
        return n.text
    if isinstance(n, A.Str):
        return repr(n.value)
    if isinstance(n, A.Var):
        return n.name.lower()
    if isinstance(n, A.Unary):
        return f"({n.op.lower()} {shape(n.operand)})"
    if isinstance(n, (A.Binary, A.Compare)):
        return f"({n.op.lower()}{':' if getattr(n, 'colon', False) else ''} {shape(n.left)} {shape(n.right)})"
    if isinstance(n, A.Call):
        return f"{n.name.lower()}[{' '.join(shape(a) if not isinstance(a, A.OfList) else 'of' for a in n.args)}]"
    return type(n).__name__


@pytest.mark.parametrize("text, expected", [
    ("-x**2", "(- (** x 2))"),
    ("2**3**2", "(** 2 (** 3 2))"),                  # group I: right to left
    ("a+b*c-d/e", "(- (+ a (* b c)) (/ d e))"),
    ("a||b = c and d or e", "(or (and (eq (|| a b) c) d) e)"),
    ("a <> b * c", "(* (max a b) c)"),               # MAX is group I
    ("a >< b", "(min a b)"),
    ("not a = 1", "(not (eq a 1))"),
    ("x eq: 'ab'", "(eq: x 'ab')"),
    ("1 < x <= 5", "(and (lt 1 x) (le x 5))"),
    ("a & b | c", "(or (and a b) c)"),
    ("x ^= 3", "(ne x 3)"),
    ("x ne -3", "(ne x -3)"),
])
def test_precedence(text, expected):
    assert shape(p(text)) == expected


def test_literals_and_names():
    assert p("'01jan2020'd").value == 21915.0                       # days since 1960-01-01
    assert p("'01JAN60'd").value == 0.0
    assert p("'10:30't").value == 37800.0
    assert p("'02jan1960:00:00:01'dt").value == 86401.0
    assert p("'41'x").value == "A"
    m = p(".A").value
    assert isinstance(m, SpecialMissing) and m.code == "A"
    assert p("._").value.code == "_" and p(".").value != p(".").value
    assert p("first.id").name == "FIRST.ID"
    assert p("'my var'n").name == "MY VAR"
    call = p("sum(of x1-x3 a--c _numeric_ arr{*} pre:, 1)")
    assert call.args[0].items == [("range", "x1", "x3"), ("dashes", "A", "C", ""), ("special", "_NUMERIC_"),
                                  ("array", "ARR"), ("prefix", "PRE")]
    assert isinstance(p("a{i, 2}"), A.Index) and p("a[*]").subs == ["*"]
    assert isinstance(p("a(1)"), A.Call)                               # array or function: the compiler decides
    meth = p("h.find(key: id)")
    assert (meth.obj, meth.method, meth.args[0][0]) == ("H", "FIND", "KEY")
    node = p("x in (1, 2 3:5)")
    assert isinstance(node, A.In) and node.items[2][0] == "range"


def test_errors_name_the_place():
    with pytest.raises(SasError) as e:
        p("x + * 2")
    assert e.value.line == 1 and e.value.col == 5
    with pytest.raises(SasError, match="Invalid date constant"):
        p("'31feb2020'd")


ROWS = [(1.0, "ann"), (None, "bob  "), (7.0, None), (3.0, "Anne")]


def run_where(text):
    con = duckdb.connect()
    register_udfs(con)
    con.execute("CREATE TABLE t(x DOUBLE, s VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?)", ROWS)
    cols = {"X": Column('"x"', "num"), "S": Column('"s"', "char", 5)}
    cond = where_sql(p(text, where=True), cols, "WORK.T")
    return [r[0] for r in con.execute(f"SELECT x FROM t WHERE {cond} ORDER BY rowid").fetchall()]


@pytest.mark.parametrize("text, expected", [
    ("x < 5", [1.0, None, 3.0]),                  # missing is smaller than every number
    ("x = .", [None]),
    ("x > .", [1.0, 7.0, 3.0]),
    ("x between 2 and 7", [7.0, 3.0]),
    ("x not between 2 and 7", [1.0, None]),
    ("s = 'bob'", [None]),                        # trailing blanks do not count
    ("s = ''", [7.0]),                            # a NULL character value is blank
    ("s is missing", [7.0]),
    ("x is not null", [1.0, 7.0, 3.0]),
    ("s contains 'nn'", [1.0, 3.0]),
    ("s ? 'An'", [3.0]),
    ("s like 'a%'", [1.0]),
    ("s not like 'a%'", [None, 7.0, 3.0]),
    ("s =: 'an'", [1.0]),
    ("s in ('ann', 'bob')", [1.0, None]),
    ("x not in (1, 3)", [None, 7.0]),
    ("x in (2:7)", [7.0, 3.0]),
    ("x <> 1", [None, 7.0, 3.0]),                  # <> is "not equal" in WHERE
    ("x", [1.0, 7.0, 3.0]),                        # truth: neither 0 nor missing
    ("x / 0 = .", [1.0, None, 7.0, 3.0]),          # division by zero gives missing
    ("x + 1 < 3", [1.0, None]),
    ("(x max 2) = 2", [1.0, None]),
    ("upcase(s) = 'ANNE'", [3.0]),
    ("s || 'x' = 'ann  x'", [1.0]),                # concatenation sees the padded value
    ("s =* 'an'", [1.0, 3.0]),
    ("missing(x) or x > 6", [None, 7.0]),
    ("index(s, 'nn') = 2", [1.0, 3.0]),
    ("length(s) = 3", [1.0, None]),                # trailing blanks do not count
    ("length(s) = 1", [7.0]),                      # a blank value has length 1
    ("mod(x, 2) = 1", [1.0, 7.0, 3.0]),
    ("coalesce(x, 0) = 0", [None]),
])
def test_where_semantics_on_duckdb(text, expected):
    assert run_where(text) == expected


def test_where_errors():
    with pytest.raises(SasError, match="Variable nope is not on file WORK.T"):
        run_where("nope = 1")
    with pytest.raises(WhereNotSql):
        run_where("scan(s, 1) = 'a'")
    assert soundex("Smith") == soundex("Smyth") == "S53"
