"""ODS OUTPUT (statgrid/sas/ods.py): PROC tables written as data sets under SAS's table and column names, their
values checked against numpy, DuckDB and statsmodels computed here, and the statement's rules (the WARNING for a
table no PROC made, PERSIST=PROC, CLOSE, MATCH_ALL) and ODS SELECT/EXCLUDE/LISTING CLOSE on the listing."""
from __future__ import annotations

import duckdb
import numpy as np
import pytest

from tests.unit.sas.standins import run_sas

DATA = """data work.a;
  do i = 1 to 40;
    g = mod(i, 3); h = mod(i, 2);
    x = mod(i * 37, 101) / 25;
    y = 1 + 2 * x + (g = 1) + (mod(i * 29, 17) - 8) / 8;
    b = (mod(i * 53, 97) / 97 < 1 / (1 + exp(-(-1 + 0.8 * x))));
    output;
  end;
run;
"""


def _columns(i):
    g, h = i % 3, i % 2
    x = (i * 37 % 101) / 25
    y = 1 + 2 * x + (g == 1) + ((i * 29 % 17) - 8) / 8
    b = float((i * 53 % 97) / 97 < 1 / (1 + np.exp(-(-1 + 0.8 * x))))
    return g, h, x, y, b


ROWS = np.array([_columns(i) for i in range(1, 41)], dtype=float)


def run(session, text):
    """(exit code, log, listing) of `text` after the DATA step that makes WORK.A."""
    return run_sas(session, DATA + text, source="")


def table(session, name):
    ref = session.dataset(name)
    rel = session.con.sql(f"SELECT * FROM {ref.scan_sql()}")
    return list(rel.columns), rel.fetchall()


def ods_rows(session, text, member, columns):
    """The rows of ODS OUTPUT data set `member` after `text` ran without an ERROR, its columns checked to be
    `columns`; and the log and the listing."""
    code, log, lst = run(session, text)
    assert code == 0, log
    cols, rows = table(session, member)
    assert cols == columns
    return rows, log, lst


def test_reg_tables_match_least_squares(session):
    rows, log, _ = ods_rows(session, "ods output ParameterEstimates=pe ANOVA=av FitStatistics=fs;\n"
                                     "proc reg data=a; model y = x h; run;\n",
                                     "work.pe",
                                     ["Model", "Dependent", "Variable", "DF", "Estimate", "StdErr", "tValue", "Probt"])
    X = np.column_stack([np.ones(40), ROWS[:, 2], ROWS[:, 1]])
    y = ROWS[:, 3]
    beta, sse, *_ = np.linalg.lstsq(X, y, rcond=None)
    mse = float(sse[0]) / (40 - 3)
    se = np.sqrt(np.diag(np.linalg.inv(X.T @ X)) * mse)
    assert [r[2] for r in rows] == ["Intercept", "x", "h"]
    assert np.allclose([r[4] for r in rows], beta, rtol=1e-9)
    assert np.allclose([r[5] for r in rows], se, rtol=1e-9)
    cols, rows = table(session, "work.av")
    assert cols == ["Model", "Dependent", "Source", "DF", "SS", "MS", "FValue", "ProbF"]
    assert rows[1][2:5] == ("Error", 37.0, pytest.approx(float(sse[0]), rel=1e-9))
    cols, rows = table(session, "work.fs")
    assert cols == ["Model", "Dependent", "Label1", "cValue1", "nValue1", "Label2", "cValue2", "nValue2"]
    assert rows[0][2] == "Root MSE" and rows[0][4] == pytest.approx(np.sqrt(mse), rel=1e-9)
    assert "NOTE: The data set WORK.PE has 3 observations and 8 variables." in log


def test_means_summary_matches_duckdb(session):
    rows, log, _ = ods_rows(session, "ods output Summary=sm;\nproc means data=a; class g; var x y; run;\n",
                                     "work.sm", ["g", "NObs", "VName_x", "x_N", "x_Mean", "x_StdDev", "x_Min", "x_Max",
                                                 "VName_y", "y_N", "y_Mean", "y_StdDev", "y_Min", "y_Max"])
    con = duckdb.connect()
    con.register("t", {"g": ROWS[:, 0], "x": ROWS[:, 2], "y": ROWS[:, 3]})
    want = con.sql("SELECT g, count(*), count(x), avg(x), stddev_samp(x), min(x), max(x), "
                   "count(y), avg(y), stddev_samp(y), min(y), max(y) FROM t GROUP BY g ORDER BY g").fetchall()
    for got, w in zip(rows, want):
        nums = [got[0], got[1], *got[3:8], *got[9:14]]
        assert np.allclose(nums, w, rtol=1e-9)


def test_freq_tables_match_duckdb(session):
    rows, log, _ = ods_rows(session, "ods output OneWayFreqs=ow CrossTabFreqs=ct;\n"
                                     "proc freq data=a; tables g g*h; run;\n",
                                     "work.ow", ["Table", "g", "Frequency", "Percent", "CumFrequency", "CumPercent"])
    counts = np.bincount(ROWS[:, 0].astype(int))
    assert [r[2] for r in rows] == list(counts)
    assert np.allclose([r[5] for r in rows], 100 * np.cumsum(counts) / 40)
    cols, rows = table(session, "work.ct")
    assert cols == ["Table", "g", "h", "_TYPE_", "_TABLE_", "Frequency", "Percent", "RowPercent", "ColPercent",
                    "Missing"]
    cells = {(r[1], r[2]): r[5] for r in rows if r[3] == "11"}
    for gv in range(3):
        for hv in range(2):
            n = int(np.sum((ROWS[:, 0] == gv) & (ROWS[:, 1] == hv)))
            assert cells[(gv, hv)] == n
    assert [r[5] for r in rows if r[3] == "00"] == [40]


def test_glm_and_logistic_estimates_match_statsmodels(session):
    sm = pytest.importorskip("statsmodels.api")
    code, log, _ = run(session, "ods output ParameterEstimates=gpe OverallANOVA=gav;\n"
                                "proc glm data=a; model y = x; run;\n"
                                "ods output ParameterEstimates=lpe;\n"
                                "proc logistic data=a descending; model b = x; run;\n")
    assert code == 0, log
    ols = sm.OLS(ROWS[:, 3], sm.add_constant(ROWS[:, 2])).fit()
    cols, rows = table(session, "work.gpe")
    assert cols == ["Dependent", "Parameter", "Estimate", "Biased", "StdErr", "tValue", "Probt"]
    assert np.allclose([r[2] for r in rows], ols.params, rtol=1e-8)
    assert np.allclose([r[4] for r in rows], ols.bse, rtol=1e-8)
    _, av = table(session, "work.gav")
    assert av[0][1] == "Model" and av[0][5] == pytest.approx(ols.fvalue, rel=1e-8)
    logit = sm.Logit(ROWS[:, 4], sm.add_constant(ROWS[:, 2])).fit(disp=0)
    cols, rows = table(session, "work.lpe")
    assert cols == ["Variable", "DF", "Estimate", "StdErr", "WaldChiSq", "ProbChiSq", "_ESTTYPE_"]
    assert np.allclose([r[2] for r in rows], logit.params, rtol=1e-6)
    assert np.allclose([r[3] for r in rows], logit.bse, rtol=1e-5)


def test_table_not_made_warns_and_selection_ends_with_the_step(session):
    code, log, _ = run(session, "ods output ParameterEstimates=pe Nonesuch=zz;\n"
                                "proc means data=a; var x; run;\n"
                                "proc reg data=a; model y = x; run;\n")
    assert code == 0
    assert "WARNING: Output 'ParameterEstimates' was not created." in log
    assert "WARNING: Output 'Nonesuch' was not created." in log
    assert "WORK.PE" not in log                      # cleared after MEANS: REG's table is not kept


def test_noprint_makes_no_table(session):
    _, log, _ = run(session, "ods output Summary=sm;\nproc means data=a noprint; var x; output out=o; run;\n")
    assert "WARNING: Output 'Summary' was not created." in log


def test_persist_proc_match_all_and_close(session):
    code, log, _ = run(session, "proc sort data=a out=s; by h; run;\n"
                                "ods output Fit.y.ParameterEstimates(persist=proc)=pe "
                                "ANOVA(match_all=names)=av;\n"
                                "proc reg data=s; by h; model y = x; run;\n"
                                "proc reg data=s; model y = x g; run;\n"
                                "ods output close;\n"
                                "proc reg data=s; model y = g; run;\n"
                                "%put NAMES=&names;\n")
    assert code == 0, log
    assert "NAMES=WORK.AV WORK.AV1" in log
    cols, rows = table(session, "work.pe")           # the second REG replaced it (persisted), the third did not
    assert cols[:3] == ["Model", "Dependent", "Variable"] and [r[2] for r in rows] == ["Intercept", "x", "g"]
    _, rows = table(session, "work.av1")
    X = np.column_stack([np.ones(20), ROWS[ROWS[:, 1] == 1, 2]])
    y = ROWS[ROWS[:, 1] == 1, 3]
    sse = float(np.sum((y - X @ np.linalg.lstsq(X, y, rcond=None)[0]) ** 2))
    assert rows[1][0] == 1 and rows[1][5] == pytest.approx(sse, rel=1e-9)    # BY variable first: h=1
    assert "was not created" not in log


def test_select_exclude_and_listing_close(session):
    _, _, lst = run(session, "ods select ParameterEstimates;\nproc reg data=a; model y = x; run;\n")
    assert "Parameter Estimates" in lst and "Analysis of Variance" not in lst
    _, _, lst = run(session, "ods exclude ANOVA FitStatistics;\nproc reg data=a; model y = x; run;\n"
                             "proc reg data=a; model y = h; run;\n")
    assert lst.count("Analysis of Variance") == 1        # the list ends with the first step
    code, log, lst = run(session, "ods listing close;\nods output Summary=sm;\nproc means data=a; var x; run;\n")
    assert code == 0 and "The MEANS Procedure" not in lst and "WORK.SM has 1 observations" in log


def test_bad_ods_output_option_is_an_error(session):
    code, log, _ = run(session, "ods output ParameterEstimates(persist=step)=pe;\n")
    assert code == 1 and "PERSIST=step is not valid" in log
