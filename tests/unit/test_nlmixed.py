"""PROC NLMIXED: a binary model with a normal random intercept against lme4::glmer with the same number of
adaptive quadrature points (log likelihood to 1e-3, estimates to 1e-3 relative); the same model written as
GENERAL(ll) with IF/ELSE programming statements; a normal model without random effects against least
squares in closed form; and the statements statgrid does not build, each an ERROR naming it."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.unit.sas.standins import assert_errors

sys.path.insert(0, str(Path(__file__).resolve().parent / "sas"))
from test_sas_procs_hp import grouped_csv, kv_value, r_json, run_sas, table_rows  # noqa: E402


@pytest.fixture
def binary_csv(tmp_path) -> Path:
    def row(rng, i, u):
        x = float(rng.normal())
        y = int(rng.random() < 1 / (1 + math.exp(-(-0.4 + 0.9 * x + u))))
        return f"{i},{x!r},{y}"
    return grouped_csv(tmp_path / "bin.csv", "id,x,y", 5, 40, 8, 1.1, row)


BINARY = """proc import datafile="{csv}" out=work.b dbms=csv replace; run;
proc nlmixed data=work.b qpoints=5;
  parms b0=0 b1=0 s2u=1;
  bounds s2u > 0;
  eta = b0 + b1 * x + u;
  p = 1 / (1 + exp(-eta));
  model y ~ binary(p);
  random u ~ normal(0, s2u) subject=id;
run;
proc nlmixed data=work.b qpoints=5;
  parms b0=0 b1=0 s2u=1;
  eta = b0 + b1 * x + u;
  if y = 1 then ll = -log(1 + exp(-eta));
  else do;
    ll = -eta - log(1 + exp(-eta));
  end;
  model y ~ general(ll);
  random u ~ normal(0, s2u) subject=id;
run;
"""


def _estimates(lst: str) -> dict[str, list[float]]:
    return {r[0]: [float(r[1]), float(r[2])] for r in table_rows(lst, "Parameter Estimates")}


def test_binary_random_intercept_matches_glmer(session, tmp_path, binary_csv):
    code, log, lst = run_sas(session, BINARY.format(csv=binary_csv), tmp_path)
    assert code == 0, log
    first, second = lst.split("The NLMIXED Procedure")[1:]
    want = r_json(f"""library(lme4); d <- read.csv("{binary_csv}");
        f <- glmer(y ~ x + (1|id), family=binomial, data=d, nAGQ=5,
                   control=glmerControl(optimizer="bobyqa", optCtrl=list(maxfun=1e5)));
        emit(list(m2ll=-2*as.numeric(logLik(f)), beta=fixef(f), s2u=VarCorr(f)$id[1],
                  se=sqrt(diag(as.matrix(vcov(f))))))""")
    for part in (first, second):
        assert kv_value(part, "-2 Log Likelihood") == pytest.approx(want["m2ll"][0], abs=1e-3)
        est = _estimates(part)
        assert [est["b0"][0], est["b1"][0], est["s2u"][0]] == pytest.approx(want["beta"] + want["s2u"], rel=1e-3)
        # lme4's standard errors come from its own finite-difference Hessian: agreement to 0.5 %
        assert [est["b0"][1], est["b1"][1]] == pytest.approx(want["se"], rel=5e-3)
        assert kv_value(part, "Quadrature Points") == 5
        assert kv_value(part, "Subjects") == 40
    k, n = 3, 40
    m2ll = kv_value(first, "-2 Log Likelihood")
    assert kv_value(first, "AIC (smaller is better)") == pytest.approx(m2ll + 2 * k, abs=1e-4)
    assert kv_value(first, "BIC (smaller is better)") == pytest.approx(m2ll + k * math.log(n), abs=1e-4)
    assert "NOTE: GCONV convergence criterion satisfied." in log


def test_normal_without_random_is_least_squares(session, tmp_path, binary_csv):
    prog = f"""proc import datafile="{binary_csv}" out=work.b dbms=csv replace; run;
proc nlmixed data=work.b;
  parms a=0 b=0 s2=1;
  bounds s2 > 0;
  model y ~ normal(a + b * x, s2);
run;
"""
    code, log, lst = run_sas(session, prog, tmp_path)
    assert code == 0, log
    d = np.genfromtxt(binary_csv, delimiter=",", names=True)
    X = np.column_stack([np.ones(len(d)), d["x"]])
    beta, *_ = np.linalg.lstsq(X, d["y"], rcond=None)
    s2 = float(np.sum((d["y"] - X @ beta) ** 2) / len(d))
    est = _estimates(lst)
    assert [est["a"][0], est["b"][0], est["s2"][0]] == pytest.approx([*beta, s2], rel=1e-5)
    assert kv_value(lst, "-2 Log Likelihood") == pytest.approx(len(d) * (math.log(2 * math.pi * s2) + 1), abs=1e-4)
    # the ML standard error of b: sqrt(s2 / Sxx)
    sxx = float(np.sum((d["x"] - d["x"].mean()) ** 2))
    assert est["b"][1] == pytest.approx(math.sqrt(s2 / sxx), rel=1e-4)


@pytest.mark.parametrize("stmt, message", [
    ("predict p out=work.p;", "The PREDICT statement of PROC NLMIXED is not supported"),
    ("estimate 'x' b0 + b1;", "The ESTIMATE statement of PROC NLMIXED is not supported"),
    ("random v ~ normal(0, 1) subject=id;", "takes one RANDOM statement"),
])
def test_out_of_scope_statements_are_errors(session, tmp_path, binary_csv, stmt, message):
    prog = f"""proc import datafile="{binary_csv}" out=work.b dbms=csv replace; run;
proc nlmixed data=work.b;
  parms b0=0 b1=0 s2u=1;
  p = 1 / (1 + exp(-(b0 + b1 * x + u)));
  model y ~ binary(p);
  random u ~ normal(0, s2u) subject=id;
  {stmt}
run;
"""
    code, log, _ = run_sas(session, prog, tmp_path)
    assert code == 1 and message in log, log


def test_other_errors(session, tmp_path, binary_csv):
    head = f'proc import datafile="{binary_csv}" out=work.b dbms=csv replace; run;\n'
    cases = [("proc nlmixed data=work.b; parms b0=0 s1=1 s2=1; p = 1/(1+exp(-(b0+u1+u2))); model y ~ binary(p);"
              " random u1 u2 ~ normal([0,0],[s1,0,s2]) subject=id; run;", "Several random effects"),
             ("proc nlmixed data=work.b; parms b0=0; p = 1/(1+exp(-(b0+zz))); model y ~ binary(p); run;",
              "Variable ZZ is not a parameter"),
             ("proc nlmixed data=work.b; parms b0=0; model y ~ weibull(b0); run;",
              "The distribution WEIBULL is not supported"),
             ("proc nlmixed data=work.b; p = 0.5; model y ~ binary(p); run;", "needs a PARMS statement")]
    assert_errors(lambda s, prog: run_sas(s, head + prog, tmp_path), session, cases)
