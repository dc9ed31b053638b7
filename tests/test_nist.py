"""NIST Statistical Reference Datasets (StRD): accuracy of univariate, means and reg against
NIST's certified values, measured as the number of correct significant digits (the log relative
error, LRE — NIST's own measure).

The files under tests/data/nist are NIST's StRD files, unchanged except for LF line ends (NIST
ships CRLF): Filip, NoInt1, NoInt2 and NumAcc1-4 from NIST's Dataplot repository
(github.com/usnistgov/dataplot, lib/data/*.DAT), Pontius from gretl's copy (tests/Pontius.dat),
Norris from SciPy's copy (scipy/stats/tests/data/nist_linregress). Data and certified values are
parsed from the files themselves; nothing is retyped here.

What the digits show:
- Univariate (NumAcc1-4): means to 14+ digits. NumAcc3/4 (1000000.2 ± 0.1, 10000000.2 ± 0.1) cannot
  give the certified sd 0.1 to more than 9.5 / 8.3 digits in double precision: 10000000.1 is
  stored with an error of ~1e-9, the same size as the digits the sd is made of. So the tests also
  compare with the exact sd of the stored doubles (rational arithmetic): univariate's two-pass
  moments give it to 15 digits, means' one-pass engine aggregate to 11-12 digits.
- Linear regression (Norris, Pontius, NoInt1/2): 12-15 digits, R² of the no-intercept models
  uncorrected, as NIST certifies them. Filip (10th-degree polynomial, condition number ~1.8e15):
  about 8 digits from the QR factor; the normal equations (X'X) give none.
"""
from __future__ import annotations

import decimal
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

DATA = Path(__file__).parent / "data" / "nist"


def lre(got: float, want: float) -> float:
    """Log relative error: the number of correct significant digits (NIST's measure), at most 15."""
    if got == want:
        return 15.0
    err = abs(got - want) / abs(want) if want else abs(got)
    return min(15.0, -math.log10(err))


def read_strd(name: str) -> tuple[str, np.ndarray]:
    """The file's text and its data section (the line range the header states), one row per line."""
    text = (DATA / f"{name}.dat").read_text()
    first, last = map(int, re.search(r"Data\s*:?\s*\(?lines\s+(\d+)\s+to\s+(\d+)", text).groups())
    lines = text.splitlines()[first - 1:last]
    rows = np.array([[float(v) for v in line.split()] for line in lines])
    n = int(re.search(r"(\d+)\s+Observations", text).group(1))
    assert rows.shape[0] == n, f"{name}: {rows.shape[0]} data lines, header says {n}"
    return text, rows


# ---------------------------------------------------------------------------- univariate
def exact_mean_sd(y: np.ndarray) -> tuple[float, float]:
    """Mean and sd (n - 1) of the stored doubles, in exact rational arithmetic, rounded once."""
    values = [Fraction(v) for v in y]
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    ctx = decimal.Context(prec=40)
    sd = ctx.sqrt(ctx.divide(decimal.Decimal(var.numerator), decimal.Decimal(var.denominator)))
    return float(mean), float(sd)


def first_row(result) -> dict:
    return dict(zip(result.columns, result.rows[0]))


# name → fewest digits for the sd against the certified value (just below what double precision
# allows for the stored data: 15, 15, 9.46, 8.25) and against the exact sd of the stored doubles
# for means (univariate: 14 everywhere).
NUMACC = {"NumAcc1": (15, 15), "NumAcc2": (14, 14), "NumAcc3": (9.4, 11), "NumAcc4": (8.2, 11)}


@pytest.mark.parametrize("name", list(NUMACC))
def test_numacc_univariate_and_means(session, name):
    text, rows = read_strd(name)
    y = rows[:, 0]
    cert_mean = float(re.search(r"ybar:\s+(\S+)", text).group(1))
    cert_sd = float(re.search(r"\ss:\s+(\S+)", text).group(1))
    ex_mean, ex_sd = exact_mean_sd(y)
    ceiling = lre(ex_sd, cert_sd)               # the most any double-precision program can get
    session.write_table("work.numacc", pa.table({"y": y}))
    u = first_row(session.univariate("work.numacc", var="y", print=False))
    m = first_row(session.means("work.numacc", var="y", stats=["n", "mean", "std"], print=False))
    assert u["n"] == m["n"] == len(y)
    digits = {
        "univariate": (lre(u["mean"], cert_mean), lre(u["std"], cert_sd), lre(u["std"], ex_sd)),
        "means": (lre(m["mean"], cert_mean), lre(m["std"], cert_sd), lre(m["std"], ex_sd)),
    }
    print(f"{name}: sd ceiling in double {ceiling:.2f}; " + "; ".join(
        f"{proc} mean {d[0]:.1f}, sd {d[1]:.2f} (vs exact sd of the doubles {d[2]:.1f})" for proc, d in digits.items()))
    sd_floor, means_exact_floor = NUMACC[name]
    for proc, (d_mean, d_sd, d_sd_exact) in digits.items():
        assert d_mean >= 13, (proc, d_mean)
        assert d_sd >= min(sd_floor, ceiling - 0.05), (proc, d_sd)
        assert d_sd_exact >= (14 if proc == "univariate" else means_exact_floor), (proc, d_sd_exact)
    assert lre(ex_mean, cert_mean) >= 15     # the data really are NIST's: mean exact


# ---------------------------------------------------------------------------- linear regression
def certified_lls(text: str) -> dict:
    params = re.findall(r"^[ \t]+B(\d+)[ \t]+(\S+)[ \t]+(\S+)[ \t]*$", text, re.MULTILINE)
    reg_df, ssm, _, f_value = re.search(r"^Regression\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)", text, re.MULTILINE).groups()
    res_df, sse, mse = re.search(r"^Residual\s+(\d+)\s+(\S+)\s+(\S+)", text, re.MULTILINE).groups()
    return {"index": [int(i) for i, _, _ in params], "b": [float(b) for _, b, _ in params],
            "se": [float(se) for _, _, se in params],
            "rsd": float(re.search(r"^[ \t]+Standard Deviation[ \t]+(\S+)", text, re.MULTILINE).group(1)),
            "r2": float(re.search(r"^[ \t]+R-Squared[ \t]+(\S+)", text, re.MULTILINE).group(1)),
            "df": (int(reg_df), int(res_df)), "ssm": float(ssm), "sse": float(sse), "mse": float(mse),
            "f": float(f_value)}


def fit_polynomial(session, name: str, degree: int, noint: bool, order: np.ndarray | None = None):
    """reg of y on x, x², …, x^degree (computed in double) from a StRD file; returns (fit, cert, x, y)."""
    text, rows = read_strd(name)
    if order is not None:
        rows = rows[order]
    y, x = rows[:, 0], rows[:, 1]
    cert = certified_lls(text)
    assert cert["index"] == list(range(1 if noint else 0, degree + 1))
    session.write_table("work.strd", pa.table({"y": y, **{f"x{k}": x ** k for k in range(1, degree + 1)}}))
    r = session.reg("work.strd", "y = " + " ".join(f"x{k}" for k in range(1, degree + 1)), noint=noint, print=False)
    return r, cert, x, y


def digits_of(r, cert) -> dict[str, float]:
    assert [row[0] for row in r.rows][-1] == f"x{cert['index'][-1]}" and len(r.rows) == len(cert["b"])
    st = r.stats
    assert (st["df_model"], st["df_error"]) == cert["df"] and not st["aliased"]
    return {"estimates": min(lre(row[2], b) for row, b in zip(r.rows, cert["b"])),
            "std errors": min(lre(row[3], se) for row, se in zip(r.rows, cert["se"])),
            "residual sd": lre(st["rmse"], cert["rsd"]), "R²": lre(st["rsquare"], cert["r2"]),
            "SS model": lre(st["ssm"], cert["ssm"]), "SS error": lre(st["sse"], cert["sse"]),
            "MS error": lre(st["mse"], cert["mse"]), "F": lre(st["f_value"], cert["f"])}


@pytest.mark.parametrize("name, degree, noint, floor", [
    ("Norris", 1, False, 12),      # achieved: 12.6 estimates, 13.1+ everything else
    ("Pontius", 2, False, 11.5),   # achieved: 12.1 estimates, 12.6+ everything else (x² up to 9e12)
    ("NoInt1", 1, True, 13.5),     # achieved: 14.1+ (R² and SS model uncorrected, as certified)
    ("NoInt2", 1, True, 13.5),     # achieved: 14.7+
])
def test_nist_linear_regression(session, name, degree, noint, floor):
    r, cert, _, _ = fit_polynomial(session, name, degree, noint)
    digits = digits_of(r, cert)
    print(f"{name}: " + ", ".join(f"{k} {v:.1f}" for k, v in digits.items()))
    assert min(digits.values()) >= floor, digits


# Filip: achieved in file order (OpenBLAS): estimates 7.99, std errors 8.70, residual sd 8.57,
# R² 10.75, SS model 10.75, SS error 8.27, F 8.26. The problem is so ill conditioned that the
# rounding of a different BLAS moves these by a digit: over 200 random row orders the fewest were
# 6.7 (estimates, std errors), 7.0 (SS/MS error, F), 7.3 (residual sd), 9.5 (R², SS model). The
# floors sit just below those.
FILIP_FLOORS = {"estimates": 6.5, "std errors": 6.5, "residual sd": 7.0, "R²": 9.0, "SS model": 9.0,
                "SS error": 6.5, "MS error": 6.5, "F": 6.5}


def test_nist_filip_tenth_degree_polynomial(session):
    # Only statgrid's digits are tested. A cross-product (X'X) solve of the same design keeps no digit
    # on the machines measured, but how many it keeps (or whether LAPACK calls X'X singular) is the
    # machine's BLAS's business, so it is no part of the test.
    r, cert, _, _ = fit_polynomial(session, "Filip", 10, False)
    digits = digits_of(r, cert)
    print("Filip: " + ", ".join(f"{k} {v:.2f}" for k, v in digits.items()))
    assert all(digits[k] >= floor for k, floor in FILIP_FLOORS.items()), digits


@pytest.mark.parametrize("seed", range(4))
def test_nist_filip_floor_does_not_hinge_on_rounding_luck(session, seed):
    """The same fit with the rows shuffled (each order rounds differently) still meets the floors."""
    order = np.random.default_rng(seed).permutation(82)
    r, cert, _, _ = fit_polynomial(session, "Filip", 10, False, order)
    digits = digits_of(r, cert)
    assert all(digits[k] >= floor for k, floor in FILIP_FLOORS.items()), digits
