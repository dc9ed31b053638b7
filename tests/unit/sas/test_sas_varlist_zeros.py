"""Numbered range lists with leading zeros (statgrid/sas/parse/varlist.py expand_numbered) and variable lists in
the MODEL statement of LOGISTIC and GLM (statgrid/sas/procs/models.py _model), checked against statsmodels."""
from __future__ import annotations

import io

import numpy as np
import pytest

from statgrid.sas.cursor import TokenCursor
from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import tokenize
from statgrid.sas.parse.varlist import expand_numbered
from statgrid.sas.procs.models import _model
from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


@pytest.mark.parametrize("a, b, want", [
    ("v002", "v004", ["v002", "v003", "v004"]),
    ("sales08", "sales11", ["sales08", "sales09", "sales10", "sales11"]),
    ("x001", "x1000", [f"x{k:03d}" for k in range(1, 1001)]),
    ("v1", "v3", ["v1", "v2", "v3"]),                      # no leading zero: no padding
    ("v0", "v2", ["v0", "v1", "v2"]),                      # a lone 0 is not a leading zero
    ("v004", "v002", ["v004", "v003", "v002"]),
])
def test_leading_zeros_keep_the_width(a, b, want):
    assert expand_numbered(a, b) == want


def test_last_suffix_shorter_than_a_zero_padded_first_is_an_error():
    with pytest.raises(SasError, match="sales001-sales99.*at least 3 digits"):
        expand_numbered("sales001", "sales99")


def test_leading_zeros_in_a_var_statement(session):
    out, lst = io.StringIO(), io.StringIO()
    code = run_program("data a; v001 = 1; v002 = 2; v003 = 3; v010 = 10; run;\n"
                       "proc means data=a sum; var v001-v003; output out=s sum=; run;\n",
                       session, SasLog(SessionLog(text=out, jsonl=io.StringIO(), listing=lst)), source="")
    assert code == 0, out.getvalue()
    rel = session.con.sql(f"SELECT * FROM {session.dataset('work.s').scan_sql()}")
    assert rel.columns[-3:] == ["v001", "v002", "v003"] and rel.fetchall()[0][-3:] == (1, 2, 3)


# ------------------------------------------------------------------------------------------ MODEL lists
COLS = [ColumnInfo(n, t, 8) for n, t in [("y", "num"), ("a", "num"), ("s", "char"), ("c", "num"), ("x1", "num"),
                                         ("x2", "num"), ("xz", "num"), ("b", "num")]]


def _parse(text, cols=COLS):
    c = TokenCursor(list(tokenize(text)), text)
    c.next()
    return _model(c, cols)


@pytest.mark.parametrize("text, effects", [
    ("model y = x1-x3;", "x1 x2 x3"),
    ("model y = v08-v10 a;", "v08 v09 v10 a"),
    ("model y = a--c;", "a s c"),
    ("model y = a-numeric-c;", "a c"),
    ("model y = x:;", "x1 x2 xz"),
    ("model y = a b(a) a*b a|b|c@2;", "a b(a) a*b a|b|c @ 2"),      # effects kept as written
    ("model y = x1-x2 a*b / noint;", "x1 x2 a*b"),
])
def test_model_effects_expand_variable_lists(text, effects):
    assert _parse(text)[1] == effects


def test_model_responses_and_options_around_lists():
    dep, effects, dep_opts, opts = _parse("model y(event='1') = x: / selection=stepwise;")
    assert (dep, effects, dep_opts, opts) == ("y", "x1 x2 xz", {"EVENT": "1"}, {"SELECTION": "stepwise"})
    assert _parse("model x1-x2 = a;")[0] == "x1 x2"


def test_name_range_without_columns_is_an_error():
    with pytest.raises(SasError, match="variable list starting at a needs the data set's variables"):
        _parse("model y = a--c;", None)


DATA = """data work.m;
  do i = 1 to 60;
    x01 = mod(i * 37, 101) / 25; x02 = mod(i, 2); x03 = mod(i * 7, 5) / 2;
    y = 1 + 2 * x01 - x02 + 0.5 * x03 + (mod(i * 29, 17) - 8) / 8;
    b = (mod(i * 53, 97) / 97 < 1 / (1 + exp(-(-1 + 0.8 * x01 - 0.5 * x03))));
    output;
  end;
run;
"""


def _design():
    i = np.arange(1, 61)
    x01, x02, x03 = (i * 37 % 101) / 25, (i % 2).astype(float), (i * 7 % 5) / 2
    y = 1 + 2 * x01 - x02 + 0.5 * x03 + ((i * 29 % 17) - 8) / 8
    b = ((i * 53 % 97) / 97 < 1 / (1 + np.exp(-(-1 + 0.8 * x01 - 0.5 * x03)))).astype(float)
    return np.column_stack([np.ones(60), x01, x02, x03]), y, b


def test_numbered_list_through_logistic_and_glm(session):
    sm = pytest.importorskip("statsmodels.api")
    out, lst = io.StringIO(), io.StringIO()
    code = run_program(DATA + "ods output ParameterEstimates=lpe;\n"
                       "proc logistic data=m descending; model b = x01-x03; run;\n"
                       "ods output ParameterEstimates=gpe;\nproc glm data=m; model y = x01-x03; run;\n",
                       session, SasLog(SessionLog(text=out, jsonl=io.StringIO(), listing=lst)), source="")
    assert code == 0, out.getvalue()
    X, y, b = _design()
    rows = session.con.sql(f"SELECT * FROM {session.dataset('work.lpe').scan_sql()}").fetchall()
    assert [r[0] for r in rows] == ["Intercept", "x01", "x02", "x03"]
    assert np.allclose([r[2] for r in rows], sm.Logit(b, X).fit(disp=0).params, rtol=1e-6)
    rows = session.con.sql(f"SELECT * FROM {session.dataset('work.gpe').scan_sql()}").fetchall()
    assert [r[1] for r in rows] == ["Intercept", "x01", "x02", "x03"]
    assert np.allclose([r[2] for r in rows], sm.OLS(y, X).fit().params, rtol=1e-8)
