"""BY … NOTSORTED in the PROC steps (SAS 9.4 Base Procedures, "Statements with the Same Function in Multiple
Procedures", BY): no sort check; a BY group is a set of contiguous observations with the same BY values, and the
same values appearing again later are a separate group. Output data sets, the listing's BY lines and ODS tables
keep the groups in data order. Expected rows come from plain Python over the input rows (`runs` below, or by
hand), never from the PROC under test."""
from __future__ import annotations

import re

import pytest

from tests.unit.sas.standins import rows, run_sas

# g = 1 1 2 2 1 1: three runs (1 | 2 | 1), g=1 seen twice
INPUT = [(1.0, "a", 1.0), (1.0, "b", 2.0), (2.0, "a", 3.0), (2.0, "a", 4.0), (1.0, "b", 5.0), (1.0, "b", 6.0)]
DATA = "data a; input g c $ x; datalines;\n" + "\n".join(f"{g:g} {c} {x:g}" for g, c, x in INPUT) + "\n;\nrun;\n"


def runs(data, key):
    """The input's runs of consecutive rows with equal key(row): [(key, [rows])], in order."""
    out = []
    for r in data:
        if not out or out[-1][0] != key(r):
            out.append((key(r), []))
        out[-1][1].append(r)
    return out


RUNS = runs(INPUT, lambda r: r[0])


def by_lines(listing: str) -> list[str]:
    """The listing's BY lines ("----- g=1 -----"), their text."""
    return [m.group(1) for m in (re.fullmatch(r"-{3,} (.+?) -{3,}", ln.strip()) for ln in listing.splitlines()) if m]


def run(session, text):
    code, log, lst = run_sas(session, DATA + text)
    assert code == 0, log
    assert "ERROR" not in log, log
    return log, lst


def test_runs_helper_sees_three_groups():
    assert [k for k, _ in RUNS] == [1.0, 2.0, 1.0]


def test_means_output_one_row_per_run_in_data_order(session):
    _, lst = run(session, "proc means data=a; by g notsorted; var x; output out=m mean=mx n=nx sum=sx; run;")
    want = [{"g": g, "_TYPE_": 0.0, "_FREQ_": float(len(rs)), "mx": sum(r[2] for r in rs) / len(rs),
             "nx": float(len(rs)), "sx": sum(r[2] for r in rs)} for g, rs in RUNS]
    assert rows(session, "work.m") == want
    assert by_lines(lst) == ["g=1", "g=2", "g=1"]


def test_means_class_and_by_notsorted(session):
    run(session, "proc means data=a noprint; by g notsorted; class c; var x; output out=m mean=mx; run;")
    want = []
    for g, rs in RUNS:
        xs = [r[2] for r in rs]
        want.append({"g": g, "c": "", "_TYPE_": 0.0, "_FREQ_": float(len(rs)), "mx": sum(xs) / len(xs)})
        for c in sorted({r[1] for r in rs}):
            cx = [r[2] for r in rs if r[1] == c]
            want.append({"g": g, "c": c, "_TYPE_": 1.0, "_FREQ_": float(len(cx)), "mx": sum(cx) / len(cx)})
    assert [{**r, "c": r["c"] or ""} for r in rows(session, "work.m")] == want      # type 0: c blank


def test_means_ods_summary_keeps_runs_apart_and_no_hidden_column(session):
    run(session, "ods output Summary=sm;\nproc means data=a; by g notsorted; var x; run;")
    got = rows(session, "work.sm")
    assert [(r["g"], r["x_N"], r["x_Mean"]) for r in got] == [
        (g, float(len(rs)), sum(r[2] for r in rs) / len(rs)) for g, rs in RUNS]
    assert not any(k.startswith("__") for r in got for k in r)


def _freq_want(cum: bool = False):
    want = []
    for g, rs in RUNS:
        running = 0
        for c in sorted({r[1] for r in rs}):
            n = sum(1 for r in rs if r[1] == c)
            running += n
            row = {"g": g, "c": c, "COUNT": float(n), "PERCENT": 100.0 * n / len(rs)}
            if cum:
                row.update(CUM_FREQ=float(running), CUM_PCT=100.0 * running / len(rs))
            want.append(row)
    return want


@pytest.mark.parametrize("noprint", ["", "noprint"])
def test_freq_out_per_run_printed_and_engine_paths(session, noprint):
    _, lst = run(session, f"proc freq data=a {noprint}; by g notsorted; tables c / out=f; run;")
    assert rows(session, "work.f") == _freq_want()
    if not noprint:
        assert by_lines(lst) == ["g=1", "g=2", "g=1"]


def test_freq_outcum_engine_path_runs_within_each_run(session):
    run(session, "proc freq data=a noprint; by g notsorted; tables c / out=f outcum; run;")
    assert rows(session, "work.f") == _freq_want(cum=True)


def test_tabulate_out_per_run(session):
    _, lst = run(session, "proc tabulate data=a out=tt; by g notsorted; class c; var x; table c all, x*sum; run;")
    want = []
    for g, rs in RUNS:
        want.append((g, None, "0", sum(r[2] for r in rs)))
        want += [(g, c, "1", sum(r[2] for r in rs if r[1] == c)) for c in sorted({r[1] for r in rs})]
    got = [(r["g"], r["c"] or None, r["_TYPE_"], r["x_Sum"]) for r in rows(session, "work.tt")]
    assert got == want
    assert by_lines(lst) == ["g=1", "g=2", "g=1"]


def test_rank_within_each_run(session):
    run(session, "proc rank data=a out=rk; by g notsorted; var x; ranks rx; run;")
    want = []
    for _, rs in RUNS:
        for r in rs:
            want.append(1.0 + sum(1 for o in rs if o[2] < r[2]))      # no ties here
    assert [r["rx"] for r in rows(session, "work.rk")] == want == [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]
    assert [r["x"] for r in rows(session, "work.rk")] == [r[2] for r in INPUT]


def test_univariate_output_and_listing_per_run(session):
    _, lst = run(session, "proc univariate data=a; by g notsorted; var x; output out=u mean=m n=n max=mx; run;")
    assert rows(session, "work.u") == [{"g": g, "m": sum(r[2] for r in rs) / len(rs), "n": float(len(rs)),
                                        "mx": max(r[2] for r in rs)} for g, rs in RUNS]
    assert by_lines(lst) == ["g=1", "g=2", "g=1"]


def test_transpose_by_notsorted(session):
    run(session, "proc transpose data=a out=t; by g notsorted; var x; run;")
    width = max(len(rs) for _, rs in RUNS)
    want = [{"g": g, "_NAME_": "x", **{f"COL{i + 1}": (rs[i][2] if i < len(rs) else None) for i in range(width)}}
            for g, rs in RUNS]
    assert rows(session, "work.t") == want


def test_descending_with_notsorted_is_accepted(session):
    run(session, "proc means data=a noprint; by descending g notsorted; var x; output out=m sum=s; run;")
    assert [(r["g"], r["s"]) for r in rows(session, "work.m")] == [(g, sum(r[2] for r in rs)) for g, rs in RUNS]


def test_two_by_variables_a_run_ends_when_either_changes(session):
    run(session, "proc means data=a noprint; by g c notsorted; var x; output out=m sum=s; run;")
    want = [(k[0], k[1], sum(r[2] for r in rs)) for k, rs in runs(INPUT, lambda r: (r[0], r[1]))]
    assert len(want) == 4
    assert [(r["g"], r["c"], r["s"]) for r in rows(session, "work.m")] == want


def test_missing_by_values_form_runs_and_where_comes_first(session):
    code, log, _ = run_sas(session, DATA + "data b; input g x; datalines;\n. 1\n. 2\n1 3\n. 4\n2 5\n1 6\n;\n"
                                    "proc means data=b noprint; by g notsorted; var x; output out=m sum=s; run;\n"
                                    "proc means data=a noprint; where g ne 2; by g notsorted; var x; "
                                    "output out=w sum=s; run;")
    assert code == 0, log
    # by hand: runs . (1 2) | 1 (3) | . (4) | 2 (5) | 1 (6)
    assert [(r["g"], r["s"]) for r in rows(session, "work.m")] == [(None, 3.0), (1.0, 3.0), (None, 4.0), (2.0, 5.0),
                                                                    (1.0, 6.0)]
    # WHERE drops g=2 first: the g=1 rows are then contiguous, one group
    assert [(r["g"], r["s"]) for r in rows(session, "work.w")] == [(1.0, sum(r[2] for r in INPUT if r[0] == 1))]


def test_character_by_notsorted(session):
    run(session, "proc means data=a noprint; by c notsorted; var x; output out=m sum=s; run;")
    assert [(r["c"], r["s"]) for r in rows(session, "work.m")] == [
        (c, sum(r[2] for r in rs)) for c, rs in runs(INPUT, lambda r: r[1])]


SORTED_STEPS = [
    ("proc means data=s noprint; by g{ns}; class c; var x; output out=o{i} mean=m; run;"),
    ("proc freq data=s noprint; by g{ns}; tables c / out=o{i} outcum; run;"),
    ("proc freq data=s; by g{ns}; tables c / out=o{i}; run;"),
    ("proc tabulate data=s out=o{i}; by g{ns}; class c; var x; table c all, x*(sum n); run;"),
    ("proc rank data=s out=o{i}; by g{ns}; var x; run;"),
    ("proc univariate data=s noprint; by g{ns}; var x; output out=o{i} mean=m median=md; run;"),
    ("proc transpose data=s out=o{i}; by g{ns}; var x; run;"),
    ("proc reg data=s outest=o{i} noprint; by g{ns}; model x = y; run;"),
]


@pytest.mark.parametrize("step", SORTED_STEPS)
def test_sorted_data_same_with_and_without_notsorted(session, step):
    code, log, _ = run_sas(session, "data s; input g c $ x y; datalines;\n1 a 1 1\n1 b 2 3\n1 b 4 4\n2 a 3 1\n"
                                    "2 a 5 2\n2 b 8 4\n3 a 1 1\n3 a 2 5\n3 b 4 2\n;\n"
                                    + step.format(ns="", i=1) + "\n" + step.format(ns=" notsorted", i=2))
    assert code == 0 and "ERROR" not in log, log
    one, two = rows(session, "work.o1"), rows(session, "work.o2")
    assert one == two and len(one) >= 3


def test_reg_by_notsorted_fits_each_run(session):
    """y = 2x | y = x | y = 3 + 2x over three runs (g = 1 | 2 | 1): each run's exact fit, by hand; OUTPUT P= is
    each row's own run's prediction, so it equals y."""
    code, log, _ = run_sas(session, "data r; input g x y; datalines;\n1 1 2\n1 2 4\n1 3 6\n2 1 1\n2 2 2\n2 3 3\n"
                                    "1 1 5\n1 2 7\n1 3 9\n;\n"
                                    "proc reg data=r outest=e noprint; by g notsorted; model y = x; "
                                    "output out=p p=yhat; run;")
    assert code == 0 and "ERROR" not in log, log
    est = [(r["g"], round(r["Intercept"], 9), round(r["x"], 9)) for r in rows(session, "work.e")]
    assert est == [(1.0, 0.0, 2.0), (2.0, 0.0, 1.0), (1.0, 3.0, 2.0)]
    assert all(abs(r["yhat"] - r["y"]) < 1e-9 for r in rows(session, "work.p"))
    assert not any(k.startswith("__") for r in rows(session, "work.p") for k in r)


def test_glm_by_notsorted_ods_parameter_estimates_per_run(session):
    code, log, _ = run_sas(session, "data r; input g x y; datalines;\n1 1 2\n1 2 4\n1 3 6.5\n2 1 1\n2 2 2\n"
                                    "2 3 3.5\n1 1 5\n1 2 7\n1 3 9.5\n;\n"
                                    "ods output ParameterEstimates=pe;\n"
                                    "proc glm data=r; by g notsorted; model y = x; run; quit;")
    assert code == 0 and "ERROR" not in log, log
    got = [(r["g"], r["Parameter"].strip(), round(r["Estimate"], 9)) for r in rows(session, "work.pe")]
    # least squares by hand on x = 1 2 3: slope = (y3 - y1) / 2, intercept = mean(y) - 2 * slope
    want = []
    for g, ys in ((1.0, (2, 4, 6.5)), (2.0, (1, 2, 3.5)), (1.0, (5, 7, 9.5))):
        slope = (ys[2] - ys[0]) / 2
        want += [(g, "Intercept", round(sum(ys) / 3 - 2 * slope, 9)), (g, "x", round(slope, 9))]
    assert got == want


def test_corr_outp_and_ttest_statistics_per_run(session):
    """Through ByInput (step.py): CORR's OUTP= MEAN rows and TTEST's Statistics table, one per run, in data order;
    the means by hand from INPUT's runs."""
    run(session, "data a2; set a; y = x * x; run;\n"
                 "proc corr data=a2 outp=cp noprint; by g notsorted; var x y; run;\n"
                 "ods output Statistics=ts;\nproc ttest data=a; by g notsorted; var x; run;")
    means = [sum(r[2] for r in rs) / len(rs) for _, rs in RUNS]
    got = [(r["g"], r["x"]) for r in rows(session, "work.cp") if r["_TYPE_"] == "MEAN"]
    assert got == [(g, m) for (g, _), m in zip(RUNS, means)]
    assert [(r["g"], r["Mean"]) for r in rows(session, "work.ts")] == [(g, m) for (g, _), m in zip(RUNS, means)]


def test_ods_output_tables_keep_runs_in_data_order(session):
    """FREQ's OneWayFreqs and UNIVARIATE's Moments through ODS OUTPUT: the BY column first, one block per run."""
    run(session, "ods output OneWayFreqs=ow;\nproc freq data=a; by g notsorted; tables c; run;\n"
                 "ods output Moments=mo;\nproc univariate data=a; by g notsorted; var x; run;")
    want = [(g, c, float(sum(1 for r in rs if r[1] == c))) for g, rs in RUNS for c in sorted({r[1] for r in rs})]
    assert [(r["g"], r["c"], r["Frequency"]) for r in rows(session, "work.ow")] == want
    mo = rows(session, "work.mo")
    assert not any(k.startswith("__") for r in mo for k in r)
    # the Moments rows of each run carry its g; the runs appear in data order
    assert [g for g, _ in runs([(r["g"],) for r in mo], lambda r: r[0])] == [g for g, _ in RUNS]


def test_stdize_by_checks_the_order_and_takes_notsorted_runs_that_do_not_come_back(session):
    """PROC STDIZE: BY over unsorted data is SAS's ERROR; BY … NOTSORTED whose runs are the values' groups
    standardizes each run (by hand: g=3 runs 1 1 | 2 2 2 | 0 0 → x - mean per run with METHOD=MEAN); a value
    that comes back in a later run gets a clear ERROR (not built), never a silent merge of the two runs."""
    from tests.unit.sas.standins import rows, run_sas as _run
    code, log, _ = _run(session, """data a; input g x; datalines;
3 1
3 3
1 2
1 4
1 6
2 5
2 7
;
proc stdize data=a out=s method=mean; by g notsorted; var x; run;
proc stdize data=a out=u method=mean; by g; var x; run;
data b; input g x; datalines;
1 1
2 2
1 3
;
proc stdize data=b out=v method=mean; by g notsorted; var x; run;""")
    assert [r["x"] for r in rows(session, "work.s")] == [-1.0, 1.0, -2.0, 0.0, 2.0, -1.0, 1.0]
    assert "ERROR: Data set WORK.A is not sorted in ascending sequence" in log
    assert "PROC STDIZE in statgrid takes BY … NOTSORTED only when no BY value comes back in a later run" in log
    assert code == 1
