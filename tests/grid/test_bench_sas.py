"""The Mixed Analytics templates' SAS twins (issue 27 item 3). Each .sas twin runs as a job's SAS program
does (statgrid.sas.program.run_program in a session of its own) on datagen's data at a tiny scale, ends
with exit 0, and writes the data sets its Python twin writes, with the same contents: the Python twin,
run the same way (statgrid.session() inside a runner's session), is the independent check — row counts,
sums, estimates and listings compared with a tolerance where arithmetic may differ in the last digits.
Then `bench mixed --lang sas` end to end on an embedded grid, and `report --compare` of its bundle with a
Python one, each side labelled with its language."""
from __future__ import annotations

import io
import runpy
from pathlib import Path

import pytest

from conftest import run_cli
from statgrid.bench import datagen, mixed
from statgrid.bench import workload as W

SCALE, SEED = 0.0001, 1
BUNDLE = Path(__file__).resolve().parents[1] / "data" / "bundle_ma2"      # a Python MA2 bundle kept with the tests
REL = 1e-9


@pytest.fixture(scope="module")
def bench_home(tmp_path_factory):
    """A home whose DATA library holds datagen's data at SCALE, and the jobs' parameters in the
    environment as bench mixed gives them."""
    from statgrid.config import load_config

    home = tmp_path_factory.mktemp("benchsas") / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STATGRID_HOME", str(home))
        mp.delenv("STATGRID_CONFIG", raising=False)
        for k, v in (("LIBRARY", "data"), ("SCALE", repr(SCALE)), ("SEED", str(SEED))):
            mp.setenv(f"STATGRID_BENCH_{k}", v)
        datagen.run_all(load_config(), SCALE, SEED, "data", local=True, echo=lambda m: None)
        yield home


class Ran:
    """A job run in a session of its own, kept open so its WORK data sets can be read."""

    def __init__(self, template: str, lang: str):
        from statgrid.session import set_runner_session
        from statgrid.session.core import Session
        from statgrid.session.log import SessionLog

        self.listing = io.StringIO()
        self.s = Session(log=SessionLog(text=io.StringIO(), jsonl=io.StringIO(), listing=self.listing))
        path = W.TEMPLATES[template].job_path(lang)
        try:
            if lang == "sas":
                from statgrid.sas.program import run_program
                self.code = run_program(path.read_text(), self.s)
            else:
                set_runner_session(self.s)
                try:
                    runpy.run_path(str(path), run_name="__main__")
                finally:
                    set_runner_session(None)
                self.code = 0
        except BaseException:
            self.s.close()
            raise

    def members(self) -> set[str]:
        return set(self.s.libraries.get("work").members())

    def q(self, member: str, sql: str) -> list[tuple]:
        """Rows of `sql` with {t} standing for WORK.member."""
        return self.s.execute(sql.format(t=self.s.dataset(f"work.{member}").scan_sql())).fetchall()

    def one(self, member: str, sql: str):
        return self.q(member, sql)[0]


@pytest.fixture
def twins(bench_home, request):
    template = request.param
    py = Ran(template, "python")
    try:
        sas = Ran(template, "sas")
        try:
            assert sas.code == 0, sas.s.log.text.getvalue()[-4000:]
            yield py, sas
        finally:
            sas.s.close()
    finally:
        py.s.close()


def approx_rows(a: list[tuple], b: list[tuple]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert [pytest.approx(v, rel=REL, abs=1e-9, nan_ok=True) if isinstance(v, float) else v for v in x] == list(y)


def stats_py(r: Ran, member: str, keys: str, where: str = "_type_ = (SELECT max(_type_) FROM {t})") -> list[tuple]:
    """Python MEANS/SUMMARY out= (long by variable): (keys…, variable, n, mean) of the finest _TYPE_."""
    return r.q(member, f"SELECT {keys}, lower(variable), n::DOUBLE, mean FROM {{t}} WHERE {where} "
                       f"ORDER BY ALL NULLS FIRST")


def stats_sas(r: Ran, member: str, keys: str, variables: list[str]) -> list[tuple]:
    """SAS OUTPUT OUT= (_STAT_ layout) → the same (keys…, variable, n, mean) rows."""
    parts = [f"SELECT {keys}, '{v}' AS variable, max({v}) FILTER (WHERE _STAT_ = 'N') AS n, "
             f"max({v}) FILTER (WHERE _STAT_ = 'MEAN') AS mean FROM {{t}} "
             f"WHERE _TYPE_ = (SELECT max(_TYPE_) FROM {{t}}) GROUP BY {keys}" for v in variables]
    return r.q(member, " UNION ALL ".join(parts) + " ORDER BY ALL NULLS FIRST")


def norm_lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def in_order(sub: list[str], seq: list[str]) -> bool:
    it = iter(seq)
    return all(any(x == y for y in it) for x in sub)


def same_listing(py: Ran, sas: Ran, keep=lambda line: not line.startswith("Data Set ")) -> None:
    """Every line of the Python twin's listing (the procedures' tables) is in the SAS twin's, in order."""
    a = [x for x in norm_lines(py.listing.getvalue()) if keep(x)]
    b = norm_lines(sas.listing.getvalue())
    assert a and in_order(a, b), [x for x in a if x not in b][:5]


# ------------------------------------------------------------------------------------ the templates
def check_io_import_household(py, sas):
    sums = "SELECT count(*), sum(hh_id), sum(h003), sum(h011), count(h004), count(h114) FROM {t}"
    approx_rows([py.one("hh", sums)], [sas.one("hh", sums)])
    approx_rows(stats_py(py, "hh_means", "h001", "_type_ = 1 AND h001 IS NOT NULL"),
                stats_sas(sas, "hh_means", "h001", ["h003", "h006", "h011"]))
    order = "SELECT hh_id::BIGINT FROM {t}"
    assert py.q("hh_sorted", order) == sas.q("hh_sorted", order)


def check_io_import_person(py, sas):
    sums = "SELECT count(*), sum(person_id), sum(p003), count(p004), sum(p126) FROM {t}"
    approx_rows([py.one("person", sums)], [sas.one("person", sums)])
    per = "SELECT hh_id::DOUBLE, persons::DOUBLE, p003_mean FROM {t} ORDER BY 1"
    approx_rows(py.q("per_hh", per), sas.q("per_hh", per))
    freq = ("SELECT p001::DOUBLE, p005::DOUBLE, count::DOUBLE, percent, pct_row, pct_col FROM {t} "
            "WHERE p001 IS NOT NULL AND p005 IS NOT NULL ORDER BY 1, 2")
    approx_rows(py.q("person_freq", freq), sas.q("person_freq", freq))


def check_io_datastep_big(py, sas):
    sums = ("SELECT count(*), sum(ratio), count(ratio), sum(year), sum(flag::INT), count(DISTINCT label_clean), "
            "min(label_clean), max(label_clean), sum(length(label_clean)) FROM {t}")
    approx_rows([py.one("clean", sums)], [sas.one("clean", sums)])
    approx_rows(stats_py(py, "by_year", "year::DOUBLE", "_type_ = 1"),
                stats_sas(sas, "by_year", "year", ["c01", "c02", "c05", "ratio"]))


def check_io_sql_semijoin(py, sas):
    sums = "SELECT count(*), sum(amount), sum(cust_id) FROM {t}"
    approx_rows([py.one("seg_a", sums)], [sas.one("seg_a", sums)])
    approx_rows(py.q("seg_a_month", "SELECT month::DATE, amount, n::DOUBLE FROM {t} ORDER BY 1"),
                sas.q("seg_a_month", "SELECT DATE '1960-01-01' + month::INT, amount, n FROM {t} ORDER BY 1"))


def check_io_big_sort(py, sas):
    seq = "SELECT cust_key::BIGINT, label, c01 FROM {t}"
    assert py.q("sorted", seq) == sas.q("sorted", seq)
    assert py.q("first_per_key", seq) == sas.q("first_per_key", seq)


def check_io_etl_lookup(py, sas):
    sums = "SELECT count(*), sum(score), count(region), count(segment), sum(amount) FROM {t}"
    approx_rows([py.one("enriched", sums)], [sas.one("enriched", sums)])
    approx_rows(stats_py(py, "region_segment", "region::DOUBLE, segment", "_type_ = 3"),
                stats_sas(sas, "region_segment", "region, segment", ["amount", "qty"]))


def check_etl_star(py, sas):
    sums = "SELECT count(*), sum(region), count(segment), sum(amount) FROM {t}"
    approx_rows([py.one("mart", sums)], [sas.one("mart", sums)])
    approx_rows(py.q("mart_month", "SELECT region::DOUBLE, month::DATE, amount, qty FROM {t} ORDER BY ALL NULLS FIRST"),
                sas.q("mart_month", "SELECT region, DATE '1960-01-01' + month::INT, amount, qty FROM {t} "
                                    "ORDER BY ALL NULLS FIRST"))
    seq = "SELECT sale_id::BIGINT FROM {t}"
    assert py.q("mart_sorted", seq) == sas.q("mart_sorted", seq)


def _check_points(r: Ran, member: str, source: str, n_wanted: int) -> None:
    """`member` has n_wanted rows, each one of `source`'s rows as it is there."""
    src = r.s.dataset(f"data.{source}").scan_sql()
    got = r.one(member, f"SELECT count(*), count(s.id) FROM {{t}} AS p LEFT JOIN {src} AS s "
                        "ON s.id = p.id AND s.k = p.k AND s.payload = p.payload")
    assert got == (n_wanted, n_wanted)


def check_io_random_read(py, sas):
    for name in ("rows128", "rows1k", "rows10k"):
        n = py.s.nrows(py.s.dataset(f"data.{name}"))
        for r in (py, sas):
            _check_points(r, f"pick_{name}", name, max(100, n // 100))


def check_io_random_write(py, sas):
    n = max(100, py.s.nrows(py.s.dataset("data.rows1k")) // 50)
    for r in (py, sas):
        _check_points(r, "picked", "rows1k", n)
        changed = r.one("updated", "SELECT count(*) FROM {t}")[0]
        picked = r.s.dataset("work.picked").scan_sql()
        same = r.one("updated", f"SELECT count(*) FROM (SELECT row_number() OVER () AS i, * FROM {{t}}) u "
                                f"JOIN (SELECT row_number() OVER () AS i, * FROM {picked}) p ON u.i = p.i "
                                "WHERE u.k = p.k + 1 AND u.payload = upper(p.payload)")[0]
        assert changed == same == n
        assert r.q("updated_copy", "SELECT * FROM {t}") == r.q("updated", "SELECT * FROM {t}")


def _reg_estimates(py: Ran, sas: Ran, member: str) -> None:
    """Python OUTEST= (one row per chosen variable) against SAS's OUTEST= (one row, a column per
    regressor; missing where stepwise left it out)."""
    want = dict(py.q(member, "SELECT Variable, Estimate FROM {t}"))
    table = sas.s.fetch_arrow(f"SELECT * FROM {sas.s.dataset(f'work.{member}').scan_sql()}").to_pylist()
    assert len(table) == 1
    row = {k: v for k, v in table[0].items() if k not in ("_MODEL_", "_TYPE_", "_DEPVAR_", "_RMSE_", "amount")}
    got = {k: v for k, v in row.items() if v is not None and v == v}
    assert set(got) == set(want) and len(want) > 1
    assert got == pytest.approx(want, rel=1e-8)


def check_cpu_stepwise_reg(py, sas):
    _reg_estimates(py, sas, "reg_est")


def check_cpu_stepwise_wide(py, sas):
    _reg_estimates(py, sas, "wide_est")


def check_cpu_stepwise_logistic(py, sas):
    est = "SELECT Parameter, DF, Estimate, StdErr FROM {t} ORDER BY Parameter"
    approx_rows(py.q("logit_est", est), sas.q("logit_est", est))


def check_cpu_glm(py, sas):
    ss = "SELECT _NAME_, _SOURCE_, _TYPE_, DF, SS, F, PROB FROM {t} ORDER BY ALL"
    approx_rows(py.q("glm_ss", ss), sas.q("glm_ss", ss))


def check_cpu_genmod(py, sas):
    """The SAS twin's ODS ParameterEstimates against the Python API's fits of the same models."""
    lib = "data"
    for member, data, model, dist, cls in (("ods_pe_poisson", "design", "count = a c x", "poisson", "a c"),
                                           ("ods_pe_negbin", "design", "count = a c x", "negbin", "a c"),
                                           ("ods_pe_normal", "model297", "amount = segment x1 x2 x4", "normal",
                                            "segment")):
        want = py.s.genmod(f"{lib}.{data}", model, dist=dist, class_=cls, print=False)
        got = sas.q(member, "SELECT Estimate, StdErr FROM {t}")
        assert len(got) == len(want.rows)
        nan = float("nan")
        for k, column in ((0, "Estimate"), (1, "StdErr")):        # an aliased parameter's values are missing
            assert [nan if g[k] is None else g[k] for g in got] == pytest.approx(
                [nan if v is None else v for v in want.column(column)], rel=1e-6, abs=1e-9, nan_ok=True)


def check_cpu_mixed(py, sas):
    """The SAS twin's ODS SolutionF and CovParms against the Python API's fit of the same model."""
    want = py.s.mixed("data.design", "y = a x visit", class_="a", random="intercept visit", subject="subject",
                      print=False)
    got = sas.q("ods_solutionf", "SELECT Estimate FROM {t}")
    assert [g[0] for g in got] == pytest.approx(list(want.column("Estimate")), rel=1e-6, abs=1e-9)
    cov = sas.q("ods_covparms", "SELECT Estimate FROM {t}")
    assert [c[0] for c in cov] == pytest.approx([c["Estimate"] for c in want.stats["covparms"]], rel=1e-6)


def check_cpu_rank_transpose_freq(py, sas):
    ranks = "SELECT cust_id::DOUBLE, v002, v003, v004, v005 FROM {t} ORDER BY 1"
    approx_rows(py.q("ranked", ranks), sas.q("ranked", ranks))
    long = "SELECT cust_id::DOUBLE, _NAME_, COL1 FROM {t} ORDER BY 1, 2"
    approx_rows(py.q("long", long), sas.q("long", long))


def check_mem_tabulate(py, sas):
    for member, cols in (("tab_cust", "v005, v010, v015, _TYPE_, v002_N::DOUBLE, v002_Mean, v002_Sum, v002_Std, "
                                      "v002_PctSum, v003_N::DOUBLE, v003_Sum"),
                         ("tab_product", "product_id::DOUBLE, _TYPE_, amount_N::DOUBLE, amount_Sum, amount_Mean, "
                                         "amount_Max")):
        q = f"SELECT {cols} FROM {{t}} ORDER BY ALL NULLS FIRST"
        approx_rows(py.q(member, q), sas.q(member, q))


def check_mem_univariate(py, sas):
    """The SAS twin's ODS Moments (N and Sum Observations per BY group and variable) against DuckDB over
    the data."""
    n_rows = sas.q("ods_moments", "SELECT v005, VarName, nValue1 FROM {t} WHERE Label1 = 'N'")
    sum_rows = sas.q("ods_moments", "SELECT v005, VarName, nValue2 FROM {t} WHERE Label2 = 'Sum Observations'")
    counts = {(r[0], r[1].lower()): r[2] for r in n_rows}
    means = {(r[0], r[1].lower()): r[2] for r in sum_rows}
    for var in ("v002", "v013", "v039"):
        rows = py.s.execute(f"SELECT v005, count({var}), sum({var}) FROM {py.s.dataset('data.customer120').scan_sql()} "
                            f"GROUP BY v005").fetchall()
        for g, n, total in rows:
            assert counts[(g, var)] == n and means[(g, var)] == pytest.approx(total, rel=1e-9)


def check_mem_wide_arrays(py, sas):
    z = "SELECT sum(x1), sum(x150 * x150), sum(x292), count(*) FROM {t}"
    assert py.one("z", z) == pytest.approx(sas.one("z", z), abs=1e-9)
    xs = [f"x{i}" for i in (1, 2, 100, 292)]
    py_rows = py.q("z_means", "SELECT lower(variable), n::DOUBLE, mean, std FROM {t} ORDER BY 1")
    want = {r[0]: r for r in py_rows}
    for v in xs:
        got = sas.q("z_means", f"SELECT _STAT_, {v} FROM {{t}}")
        stat = dict(got)
        assert (v, stat["N"], stat["MEAN"], stat["STD"]) == pytest.approx(want[v], abs=1e-9)


def check_dm_kmeans(py, sas):
    seg = "SELECT cust_id::DOUBLE, CLUSTER::DOUBLE, DISTANCE FROM {t} ORDER BY 1"
    approx_rows(py.q("segments", seg), sas.q("segments", seg))


def check_dm_forest(py, sas):
    assert {"sample", "scored"} <= sas.members()
    assert py.one("sample", "SELECT count(*) FROM {t}") == sas.one("sample", "SELECT count(*) FROM {t}")
    assert py.one("scored", "SELECT count(*) FROM {t}") == sas.one("scored", "SELECT count(*) FROM {t}")


def check_macro_codegen(py, sas):
    made = {m for m in sas.members() if m.startswith("s_")}
    assert made == {m for m in py.members() if m.startswith("s_")} and len(made) == 200
    for member in sorted(made)[::17]:                      # a spread of the 200: every step is the same code
        cls = member.split("_")[2]
        q = f"SELECT {cls}, n::DOUBLE, mean, std, min, max FROM {{t}} ORDER BY 1"
        approx_rows(py.q(member, q), sas.q(member, q))


def _same_column(py, sas, member: str, column: str, rel: float = 1e-6) -> None:
    """`column` of WORK.member, row by row, in both twins (a missing value — an aliased parameter — as NaN)."""
    nan = float("nan")
    a = [nan if r[0] is None else r[0] for r in py.q(member, f"SELECT {column} FROM {{t}}")]
    b = [nan if r[0] is None else r[0] for r in sas.q(member, f"SELECT {column} FROM {{t}}")]
    assert a and len(a) == len(b)
    assert b == pytest.approx(a, rel=rel, abs=1e-9, nan_ok=True)


def check_cpu_gee(py, sas):
    """GENMOD REPEATED's ODS GEEEmpPEst against the Python API's gee()."""
    for column in ("Estimate", "StdErr", "ProbZ"):
        _same_column(py, sas, "gee_est", column)


def check_cpu_hpmixed(py, sas):
    """HPMIXED's ODS ParameterEstimates against the Python API's mixed() of the same model."""
    for column in ("Estimate", "StdErr"):
        _same_column(py, sas, "hpm_solution", column, rel=1e-5)


def check_cpu_surveylogistic(py, sas):
    """SURVEYLOGISTIC's ODS ParameterEstimates against the Python API's surveylogistic()."""
    for column in ("Estimate", "StdErr"):
        _same_column(py, sas, "svy_est", column)


CHECKS = {name[len("check_"):]: fn for name, fn in globals().items() if name.startswith("check_")}


def test_every_template_has_a_check():
    assert set(CHECKS) == set(W.TEMPLATES)


@pytest.mark.parametrize("twins", [pytest.param(t, id=t) for t in W.TEMPLATES], indirect=True)
def test_sas_twin_writes_what_the_python_twin_writes(twins, request):
    py, sas = twins
    template = request.node.callspec.id
    ods = {m for m in sas.members() if m.startswith("ods_")}     # ODS OUTPUT of the SAS twins' tables
    assert py.members() == sas.members() - {"by_v005"} - ods   # UNIVARIATE's BY needs a sorted copy in SAS
    CHECKS[template](py, sas)


# ------------------------------------------------------------------------------------ through the grid
def test_bench_mixed_lang_sas_and_the_comparison_with_python(home, tmp_path):
    bundle = tmp_path / "ma2sas"
    r = run_cli("bench", "mixed", "--lang", "sas", "--sessions", "2", "--nodes", "2", "--scale", str(SCALE),
                "--out", str(bundle), timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    meta, jobs = mixed.load_bundle(bundle)
    assert meta["workload"]["lang"] == "sas" and len(jobs) == 7
    assert all(j["state"] == "DONE" for j in jobs), [(j["template"], j["state"], j["exit_reason"]) for j in jobs]
    assert {j["job_file"].rsplit(".", 1)[1] for j in jobs} == {"sas"} and {j["lang"] for j in jobs} == {"sas"}
    for j in jobs:
        assert j["steps"] and all(s["status"] == "ok" for s in j["steps"]), j["template"]
    big_sort = next(j for j in jobs if j["template"] == "io_big_sort")
    assert big_sort["steps"][0]["name"].upper().startswith("PROC")
    assert "7 DONE" in r.stdout and "jobs written in: SAS" in r.stdout
    bad = run_cli("bench", "mixed", "--lang", "cobol", "--out", str(tmp_path / "x"))
    assert bad.returncode != 0 and "--lang 'cobol' is not a job language" in bad.stderr

    rep = run_cli("report", str(bundle), "--compare", str(BUNDLE), "--format", "md", timeout=300)
    assert rep.returncode == 0, rep.stderr[-3000:]
    text = (bundle / f"compare-{BUNDLE.name}" / "report.md").read_text()
    assert f"A: ma2sas (SAS), B: {BUNDLE.name} (Python)" in text
    assert "MA2 in SAS: 2 sessions, 7 jobs" in text
