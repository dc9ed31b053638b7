"""SURVEYLOGISTIC (Taylor-series variance) against R's survey::svyglm(family = quasibinomial) on
svydesign(ids =, strata =, weights =, fpc =).

Tolerances: estimates and standard errors 1e-6 relative. Where SAS and R differ: SAS multiplies G by
(n − 1)/(n − p) (VADJUST=DF, its default; n observations, p parameters), R does not — so statgrid's
standard errors equal R's times √((n − 1)/(n − p)), and equal R's exactly under vadjust='none'. The t tests
use SAS's design degrees of freedom (#clusters − #strata, or #observations − #strata without clusters),
the p-values are recomputed here with scipy from the estimate and standard error.
"""
from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy import stats

from statgrid.errors import StatgridError
from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog
from tests.support.rscript import r_numbers


@pytest.fixture
def survey(session, tmp_path):
    rng = np.random.default_rng(5)
    rows = []
    for st in range(1, 5):
        for psu in range(1, 7):
            u = rng.normal() * 0.6
            for j in range(8 + (st + psu) % 3):
                x = rng.normal()
                g = ["lo", "mid", "hi"][(j + psu) % 3]
                w = 10.0 + 5 * st + (j % 4) * 1.5
                eta = -0.4 + 0.8 * x + 0.4 * (g == "mid") + u
                rows.append((st, psu, x, g, w, int(rng.random() < 1 / (1 + math.exp(-eta)))))
    d = pd.DataFrame(rows, columns=["st", "psu", "x", "g", "w", "y"])
    session.write_table("work.s", pa.Table.from_pandas(d, preserve_index=False))
    csv = tmp_path / "s.csv"
    d.to_csv(csv, index=False)
    return d, csv


def rscript(code: str) -> list[float]:
    return r_numbers(code, packages=("survey",))


def r_svyglm(csv, design: str) -> tuple[np.ndarray, np.ndarray]:
    out = rscript(f"""suppressMessages(library(survey))
d <- read.csv('{csv}'); d$g <- factor(d$g, levels = c('hi', 'lo', 'mid')); contrasts(d$g) <- contr.sum(3)
d$N <- 60
des <- svydesign({design}, data = d)
f <- svyglm(y ~ x + g, design = des, family = quasibinomial)
cat(sprintf('%.15g', c(coef(f), sqrt(diag(vcov(f))))))""")
    return np.array(out[:4]), np.array(out[4:])


DESIGNS = {   # statgrid keywords → R's svydesign arguments, number of PSUs, number of strata
    "strata_cluster_weight": (dict(strata="st", cluster="st psu", weight="w"),
                              "ids = ~psu, strata = ~st, weights = ~w, nest = TRUE", 24, 4),
    "cluster_only": (dict(cluster="st psu"), "ids = ~interaction(st, psu)", 24, 1),
    "weight_only": (dict(weight="w"), "ids = ~1, weights = ~w", None, 1),
    "srs": ({}, "ids = ~1", None, 1),
    "fpc": (dict(strata="st", cluster="st psu", weight="w", rate=0.1),
            "ids = ~psu, strata = ~st, weights = ~w, fpc = ~N, nest = TRUE", 24, 4),
}


@pytest.mark.parametrize("name", list(DESIGNS))
def test_estimates_and_taylor_standard_errors_match_svyglm(session, survey, name):
    d, csv = survey
    kw, r_design, n_psu, n_strata = DESIGNS[name]
    r = session.surveylogistic("work.s", "y = x g", class_="g", event=1, print=False, **kw)
    est, se = r_svyglm(csv, r_design)
    n, p = len(d), 4
    got = {row[0]: row for row in r.rows}
    order = ["Intercept", "x", "g hi", "g lo"]
    np.testing.assert_allclose([got[k][1] for k in order], est, rtol=1e-6)
    np.testing.assert_allclose([got[k][2] for k in order], se * math.sqrt((n - 1) / (n - p)), rtol=1e-6)
    df = (n_psu if n_psu else n) - n_strata
    assert r.stats["df"] == df
    for k in order:
        t = got[k][1] / got[k][2]
        np.testing.assert_allclose([got[k][3], got[k][4]], [t, 2 * stats.t.sf(abs(t), df)], rtol=1e-10)


def test_vadjust_none_is_r_and_df_option(session, survey):
    d, csv = survey
    r = session.surveylogistic("work.s", "y = x g", class_="g", event=1, strata="st", cluster="st psu", weight="w",
                               vadjust="none", df=7, print=False)
    est, se = r_svyglm(csv, DESIGNS["strata_cluster_weight"][1])
    got = {row[0]: row for row in r.rows}
    np.testing.assert_allclose([got[k][2] for k in ("Intercept", "x", "g hi", "g lo")], se, rtol=1e-6)
    t = got["x"][1] / got["x"][2]
    assert r.stats["df"] == 7 and math.isclose(got["x"][4], 2 * stats.t.sf(abs(t), 7), rel_tol=1e-10)


def test_errors_name_the_variable_and_the_response(session, survey):
    with pytest.raises(StatgridError, match=r"CLUSTER variable 'school' is not in WORK.S"):
        session.surveylogistic("work.s", "y = x", cluster="school", print=False)
    with pytest.raises(StatgridError, match=r"must have exactly two levels"):
        session.surveylogistic("work.s", "st = x", print=False)


def run_sas(session, text):
    t, lst = io.StringIO(), io.StringIO()
    code = run_program(text, session, SasLog(SessionLog(text=t, jsonl=io.StringIO(), listing=lst)))
    return code, t.getvalue(), lst.getvalue()


def test_sas_statements(session, survey):
    code, log, lst = run_sas(session, """proc surveylogistic data=work.s;
  class g; model y(event='1') = x g; weight w; strata st; cluster psu;
run;
proc surveylogistic data=work.s; model y = x; run;""")
    assert code == 0, log
    assert "NOTE: The degrees of freedom for the t tests is 20." in lst
    assert f"NOTE: The degrees of freedom for the t tests is {len(survey[0]) - 1}." in lst     # SRS: n − 1
    assert "Probability modeled is y=1." in lst and "Probability modeled is y=0." in lst
    code, log, _ = run_sas(session, "proc surveylogistic data=work.s; model y = x; cluster school; run;")
    assert code == 1 and "Variable school not found in WORK.S" in log, log
    code, log, _ = run_sas(session, "proc surveylogistic data=work.s varmethod=jk; model y = x; run;")
    assert code == 1 and "VARMETHOD=JK is not supported" in log, log
