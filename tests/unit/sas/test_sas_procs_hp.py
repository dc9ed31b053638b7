"""PROC HPMIXED, HPFOREST and HP4SCORE through the SAS front end: HPMIXED against R's lme4::lmer (REML) and
against statgrid's PROC MIXED on the same model; a COLLECTION effect's joint test against the Wald test R's
estimates give; the forest saved by HPFOREST and scored by HP4SCORE against the forest's own scores; the
forest's accuracy on a separable set; and the ERRORs. R checks skip (saying why) where Rscript or lme4 is
missing."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import duckdb
import numpy as np
import pytest

from tests.support.rscript import rscript
from tests.unit.sas.standins import assert_errors


def run_sas(session, text: str, tmp_path: Path) -> tuple[int, str, str]:
    from statgrid.sas.invocation import parse_invocation
    from statgrid.sas.program import run_program
    from statgrid.sas.saslog import SasLog
    from statgrid.session.log import SessionLog

    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    auto = tmp_path / "autoexec.sas"
    auto.write_text(f"libname out '{out}';\n")
    log_io, lst_io = io.StringIO(), io.StringIO()
    log = SasLog(SessionLog(text=log_io, jsonl=io.StringIO(), listing=lst_io))
    code = run_program("options pagesize=500 linesize=200;\n" + text, session, log, parse_invocation(["-autoexec", str(auto)]), source="")
    return code, log_io.getvalue(), lst_io.getvalue()


def r_json(script: str) -> dict:
    """Run R code whose last act is cat(jsonlite-free JSON) — a named numeric list printed by the helper."""
    helper = ('emit <- function(x) { cat("{", paste(sprintf(\'"%s": [%s]\', names(x), '
              'sapply(x, function(v) paste(sprintf("%.17g", v), collapse=","))), collapse=", "), "}\\n") }\n')
    res = rscript(helper + script, packages=("lme4",))
    if res.returncode and "there is no package called" in res.stderr:
        pytest.skip("R's lme4 is not installed (apt-get install r-cran-lme4)")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def table_rows(listing: str, title: str) -> list[list[str]]:
    """The body lines of a listing table (after its title and the dashes under its header), split in words;
    the programs set a page size that keeps each table on one page."""
    lines = listing.split("\n")
    i = next(i for i, ln in enumerate(lines) if ln.strip() == title)
    while not lines[i].strip().startswith("--"):
        i += 1
    rows = []
    for ln in lines[i + 1:]:
        if not ln.strip() or "\f" in ln or "The SAS System" in ln:
            break
        rows.append(ln.split())
    return rows


def kv_value(listing: str, label: str) -> float:
    m = re.search(rf"^\s*{re.escape(label)}\s+(\S+)\s*$", listing, re.M)
    assert m, f"{label!r} not in the listing:\n{listing}"
    return float(m.group(1))


def grouped_csv(path: Path, header: str, seed: int, groups: int, per_group: int, u_sd: float, row) -> Path:
    """`path`, a CSV of data with a random intercept: for each group g (1, 2, …) an effect u ~ N(0, u_sd²),
    then `per_group` lines row(rng, g, u), all drawn from one generator seeded `seed`."""
    rng = np.random.default_rng(seed)
    lines = []
    for g in range(1, groups + 1):
        u = rng.normal(0, u_sd)
        lines += [row(rng, g, u) for _ in range(per_group)]
    path.write_text(header + "\n" + "\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------------------------------------ HPMIXED
@pytest.fixture
def mixed_csv(tmp_path) -> Path:
    def row(rng, g, u):
        a, b = int(rng.integers(0, 3)), int(rng.integers(0, 4))
        x = float(rng.normal())
        z = 1 + 0.5 * x + 0.7 * (a == 1) - 0.4 * (b == 2) + u + rng.normal(0, 0.6)
        return f"{g},{a},{b},{x!r},{z!r}"
    return grouped_csv(tmp_path / "mixed.csv", "g,a,b,x,z", 11, 12, 10, 0.8, row)


HPMIXED = """proc import datafile="{csv}" out=work.d dbms=csv replace; run;
proc hpmixed data=work.d;
  class a b g;
  effect ab = collection(a b);
  model z = ab x / solution;
  random intercept / subject=g;
run;
ods output SolutionF=work.mxsol;
proc mixed data=work.d;
  class a b g;
  model z = a b x / solution;
  random intercept / subject=g;
run;
"""


def test_hpmixed_matches_lmer_and_proc_mixed(session, tmp_path, mixed_csv):
    code, log, lst = run_sas(session, HPMIXED.format(csv=mixed_csv), tmp_path)
    assert code == 0, log
    hp = lst
    want = r_json(f"""library(lme4); d <- read.csv("{mixed_csv}"); d$a <- factor(d$a, levels=c(2,0,1));
        d$b <- factor(d$b, levels=c(3,0,1,2)); f <- lmer(z ~ a + b + x + (1|g), data=d, REML=TRUE,
        control=lmerControl(optimizer="bobyqa"));
        v <- vcov(f); k <- 2:6; bb <- fixef(f)[k]; F <- as.numeric(t(bb) %*% solve(as.matrix(v[k, k])) %*% bb) / 5;
        emit(list(g=VarCorr(f)$g[1], s2=sigma(f)^2, m2ll=-2*as.numeric(logLik(f)), beta=fixef(f), F=F,
                  se=sqrt(diag(as.matrix(v)))))""")
    cov = {r[0]: float(r[-1]) for r in table_rows(hp, "Covariance Parameter Estimates")}
    assert cov["Intercept"] == pytest.approx(want["g"][0], rel=1e-4)
    assert cov["Residual"] == pytest.approx(want["s2"][0], rel=1e-4)
    assert kv_value(hp, "-2 Res Log Likelihood") == pytest.approx(want["m2ll"][0], abs=1e-4)
    sol = table_rows(hp, "Solution for Fixed Effects")
    # SAS's GLM parameterization sets the last level to 0: R with the last level as reference is the same model
    est = [float(r[-5]) for r in sol if r[-4] != "."]
    se = [float(r[-4]) for r in sol if r[-4] != "."]
    assert est == pytest.approx(want["beta"], rel=1e-4, abs=1e-6)
    assert se == pytest.approx(want["se"], rel=1e-3)
    assert [r[0] for r in sol] == ["Intercept"] + ["ab"] * 7 + ["x"]
    assert all(r[-3] == str(120 - 7) for r in sol if r[-4] != ".")          # residual DF n - rank(X)
    tests = {r[0]: r for r in table_rows(hp, "Type III Tests of Fixed Effects")}
    assert tests["ab"][1:3] == ["5", "113"]
    assert float(tests["ab"][3]) == pytest.approx(want["F"][0], rel=1e-3)
    sol_f = session.execute(f"SELECT Estimate, StdErr FROM read_parquet('{session.dataset('work.mxsol').path}')").fetchall()
    mixed_est = [e for e, s in sol_f if s is not None]
    assert est == pytest.approx(mixed_est, rel=1e-5)          # the listing shows 7 significant digits


def test_hpmixed_errors(session, tmp_path, mixed_csv):
    base = f'proc import datafile="{mixed_csv}" out=work.d dbms=csv replace; run;\n'
    cases = [("proc hpmixed data=work.d; class a; model z = a; lsmeans a; run;",
              "The LSMEANS statement of PROC HPMIXED is not supported"),
             ("proc hpmixed data=work.d; class a b; effect c = collection(a b); model z = c*x; run;",
              "collection effect c is used in"),
             ("proc hpmixed data=work.d; class a b; effect c = collection(a b); model z = c a*x; run;",
              "variable a of collection c is also in effect"),
             ("proc hpmixed data=work.d; class a; effect s = spline(x); model z = s; run;",
              "EFFECT type SPLINE is not supported"),
             ("proc hpmixed data=work.d; class a; model z = a / ddfm=kr; run;", "DDFM=KR is not supported")]
    assert_errors(lambda s, prog: run_sas(s, base + prog, tmp_path), session, cases)


# ------------------------------------------------------------------------------------------------ HPFOREST
FOREST = """data work.tr;
  do i = 1 to 400;
    x1 = mod(i * 37, 101) / 10; x2 = mod(i * 53, 97) / 10; c = substr('abc', mod(i, 3) + 1, 1);
    y = (x1 + x2 > 10) + (x1 + x2 > 14);
    output;
  end;
run;
proc hpforest data=work.tr(where=(mod(i, 4) ne 0)) seed=3 maxtrees=40;
  target y / level=nominal;
  input x1 x2 / level=interval;
  input c / level=nominal;
  id i;
  score out=out.fit;
  save file="{model}";
run;
proc hp4score data=work.tr;
  id i y;
  score file="{model}" out=out.scored;
run;
"""


def test_forest_saved_and_scored_equals_in_process(session, tmp_path):
    model = tmp_path / "forest.bin"
    code, log, lst = run_sas(session, FOREST.format(model=model), tmp_path)
    assert code == 0, log
    assert "The HPFOREST Procedure" in lst and "Variable Importance" in lst and "Fit Statistics" in lst
    con = duckdb.connect()
    fit = con.sql(f"SELECT * FROM '{tmp_path}/out/fit.parquet' ORDER BY i").fetchall()
    cols = con.sql(f"SELECT * FROM '{tmp_path}/out/scored.parquet'").columns
    assert cols == ["i", "y", "P_y0", "P_y1", "P_y2", "I_y"]
    scored = con.sql(f"SELECT i, P_y0, P_y1, P_y2, I_y FROM '{tmp_path}/out/scored.parquet' "
                     "WHERE i % 4 <> 0 ORDER BY i").fetchall()
    assert fit == scored                            # the same forest, bit for bit
    # held-out rows (every 4th): the classes are bands of x1 + x2, which a forest separates
    wrong = con.sql(f"SELECT avg(CAST(I_y <> y AS DOUBLE)) FROM '{tmp_path}/out/scored.parquet' "
                    "WHERE i % 4 = 0").fetchall()[0][0]
    assert wrong < 0.1


def test_forest_errors(session, tmp_path):
    data = "data work.t; do i = 1 to 20; x = i; y = (i > 10); output; end; run;\n"
    cases = [(f'proc hp4score data=work.t; score file="{tmp_path}/none.bin" out=work.s; run;',
              "does not exist; write it first with PROC HPFOREST's SAVE FILE="),
             ("proc hpforest data=work.t; target y; run;", "PROC HPFOREST needs a TARGET and an INPUT statement"),
             ("proc hpforest data=work.t maxtrees=0; target y; input x; run;", "MAXTREES=0 is not valid"),
             ("proc hpforest data=work.t; target y / level=ordinal; input x; run;", "LEVEL=ORDINAL is not valid")]
    bogus = tmp_path / "bogus.bin"
    bogus.write_bytes(b"not a model")
    cases.append((f'proc hp4score data=work.t; score file="{bogus}" out=work.s; run;',
                  "is not a statgrid forest model file"))
    assert_errors(lambda s, prog: run_sas(s, data + prog, tmp_path), session, cases)


def test_a_crafted_model_file_cannot_run_code(session, tmp_path):
    """A pickle naming any global outside the forest's exact classes (here numpy.testing's runstring, which
    calls exec) is refused before anything is built: no code runs, an ERROR names the class."""
    import pickle

    import numpy.testing._private.utils as npt_utils

    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (npt_utils.runstring, (f"open({str(marker)!r}, 'w').write('x')", {}))

    evil = tmp_path / "evil.bin"
    evil.write_bytes(b"STATGRID-FOREST\n" + pickle.dumps(Evil(), protocol=4))
    code, log, _ = run_sas(session, f'data s; x = 1; run;\nproc hp4score data=s; score file="{evil}" out=o; run;\n',
                           tmp_path)
    assert code == 1
    assert "numpy.testing._private.utils.runstring" in log and "not a file PROC" in log.replace("\n", " ")
    assert not marker.exists()


def test_save_never_writes_through_a_planted_link(session, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("victim")
    model = tmp_path / "m.bin"
    (tmp_path / "m.bin.tmp").symlink_to(victim)          # the old predictable temporary name
    code, log, _ = run_sas(session, f"""data s; do i = 1 to 40; x = ranuni(1); y = (x > 0.5); output; end; run;
proc hpforest data=s maxtrees=3 seed=1; target y / level=binary; input x / level=interval; save file="{model}"; run;
proc hp4score data=s; score file="{model}" out=o; run;
""", tmp_path)
    assert code == 0, log
    assert victim.read_text() == "victim"
    assert model.is_file() and not model.is_symlink()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".m.bin.")]     # no temporary file left
