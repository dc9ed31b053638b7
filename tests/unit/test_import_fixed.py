"""import_fixed: the numpy path (procs/fixedwidth.py) and the SQL path (fast=False) give the same data
sets; expected values are worked by hand or by plain Python (float(), int())."""
from __future__ import annotations

import logging
import math
import random
from datetime import date

import pyarrow.parquet as pq
import pytest

from statgrid.bench import datagen
from statgrid.errors import StepError
from statgrid.procs import fixedwidth

COLS = [("id", 1, 4, "int"), ("name", 5, 12, "$"), ("amt", 13, 20, "num"), ("day", 21, 30, "date")]
# (record text, expected row) — positions are characters, as in SAS column input of a UTF-8 file
RECORDS = [
    ("0001" "Alice   " "   12.50" "2024-01-31", (1, "Alice", 12.5, date(2024, 1, 31))),
    ("  -2" " Bob    " "   -0.25" "          ", (-2, "Bob", -0.25, None)),
    ("   3" "        " "  +7    " "2024-02-29", (3, None, 7.0, date(2024, 2, 29))),
    ("+004" "Zoë Ñ   " ".5      " "2000-03-01", (4, "Zoë Ñ", 0.5, date(2000, 3, 1))),       # multibyte
    ("0005" "Eve", (5, "Eve", None, None)),                                                   # short line
    ("0006" "Frank   " "  1e3   " "1999-12-31" "EXTRA TEXT", (6, "Frank", 1000.0, date(1999, 12, 31))),  # long
    ("", (None, None, None, None)),                                                           # blank line
    ("  07" "a  b    " "-0      " "2024-12-01", (7, "a  b", -0.0, date(2024, 12, 1))),
    ("0008" "        " "5.      " "", (8, None, 5.0, None)),
]


def _write(path, lines, ends=None, final_newline=True):
    ends = ends or ["\n"] * len(lines)
    text = "".join(line + end for line, end in zip(lines, ends))
    if not final_newline:
        text = text[:-len(ends[-1])]
    path.write_bytes(text.encode("utf-8"))
    return path


def _both(session, path, cols, **kw):
    """(fast table, SQL table) for one file; the fast one's path from the debug log."""
    out = {}
    for fast in (True, False):
        session.import_fixed(path, out=f"work.f{int(fast)}", columns=cols, fast=fast, **kw)
        out[fast] = pq.read_table(session.dataset(f"work.f{int(fast)}").path)
    return out[True], out[False]


def _rows(table):
    return [tuple(r.values()) for r in table.to_pylist()]


def _same(expected, got):
    """Row tuples equal, -0.0 told from 0.0."""
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        assert g == e, (e, g)
        for x, y in zip(e, g):
            if isinstance(x, float):
                assert math.copysign(1, x) == math.copysign(1, y), (e, g)


@pytest.mark.parametrize("chunk_bytes", [None, 40, 97])
@pytest.mark.parametrize("ending", ["lf", "crlf", "mixed", "no-final-newline"])
def test_fast_and_sql_paths_agree_with_hand_values(session, tmp_path, monkeypatch, chunk_bytes, ending):
    if chunk_bytes:                     # many chunks: ASCII ones by numpy, the multibyte one by SQL
        monkeypatch.setattr(fixedwidth, "CHUNK_BYTES", chunk_bytes)
    lines = [t for t, _ in RECORDS]
    ends = {"lf": ["\n"] * len(lines), "crlf": ["\r\n"] * len(lines),
            "mixed": ["\n" if i % 2 else "\r\n" for i in range(len(lines))],      # \r\n first: both end lines
            "no-final-newline": ["\n"] * len(lines)}[ending]
    p = _write(tmp_path / "mixed.txt", lines, ends, final_newline=ending != "no-final-newline")
    fast, sql = _both(session, p, COLS)
    assert fast.schema == sql.schema and fast.equals(sql)
    assert [str(t) for t in fast.schema.types] == ["int64", "string", "double", "date32[day]"]
    _same([r for _, r in RECORDS], _rows(fast))


def test_equal_records_take_the_numpy_path(session, tmp_path, caplog):
    lines = [f"{i:04d}{'N' + str(i):<8}{i * 1.25:8.2f}2024-01-{1 + i % 28:02d}" for i in range(500)]
    p = _write(tmp_path / "equal.txt", lines)
    with caplog.at_level(logging.DEBUG, logger="statgrid.procs.importing"):
        fast, sql = _both(session, p, COLS)
    assert "read by the numpy path" in caplog.text and "read by the SQL path" not in caplog.text
    assert fast.equals(sql)
    assert _rows(fast)[499] == (499, "N499", 623.75, date(2024, 1, 1 + 499 % 28))


def test_plain_numbers_convert_exactly_as_text_to_float(session, tmp_path):
    """Random plain decimals in every alignment: the arithmetic must round as float() (correctly)."""
    rng = random.Random(29)
    texts, lines = [], []
    for _ in range(3000):
        ints = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 7)))
        frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 13 - len(ints))))
        body = rng.choice(["", "-", "+"]) + (ints or "0") + ("." + frac if frac or rng.random() < 0.2 else "")
        body = body[:15]
        pad = 15 - len(body)
        left = rng.randint(0, pad)
        integer = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 11)))
        integer = rng.choice(["", "-", "+"]) + integer
        texts.append((body, integer))
        lines.append(" " * left + body + " " * (pad - left) + integer.rjust(12))
    p = _write(tmp_path / "numbers.txt", lines)
    cols = [("x", 1, 15, "num"), ("k", 16, 27, "int")]
    fast, sql = _both(session, p, cols)
    assert fast.equals(sql)
    want = [(float(b), int(k)) for b, k in texts]
    _same(want, _rows(fast))


def test_values_that_are_not_plain_are_cast_as_duckdb_casts_them(session, tmp_path):
    lines = ["   1e3 |   12", " 1_000 |  +07", "  -.5  |  -00", "  inf  |    4", "2.5E-1 |    5"]
    p = _write(tmp_path / "odd.txt", lines)
    fast, sql = _both(session, p, [("x", 1, 7, "num"), ("k", 9, 13, "int")])
    assert fast.equals(sql)
    _same([(1000.0, 12), (1000.0, 7), (-0.5, 0), (math.inf, 4), (0.25, 5)], _rows(fast))


def test_sql_types_and_skip(session, tmp_path):
    lines = ["header line one", "header line two", "  12" "  3.456" " " "2024-05-06", "-7  " " -0.1  ", "",
             " 1  " "     12" " " "1970-01-01"]
    p = _write(tmp_path / "types.txt", lines, ["\r\n"] * len(lines))
    cols = [("a", 1, 4, "SMALLINT"), ("b", 5, 11, "DECIMAL(8,2)"), ("c", 13, 22, "date")]
    fast, sql = _both(session, p, cols, skip=2)
    assert fast.schema == sql.schema and fast.equals(sql)
    assert [str(t) for t in fast.schema.types] == ["int16", "decimal128(8, 2)", "date32[day]"]
    from decimal import Decimal
    assert _rows(fast) == [(12, Decimal("3.46"), date(2024, 5, 6)), (-7, Decimal("-0.10"), None),
                           (None, None, None), (1, Decimal("12.00"), date(1970, 1, 1))]


def test_bad_values_stop_or_are_skipped_with_the_same_messages(session, tmp_path, captured, caplog):
    lines = [f"{i:04d}Name{i:<4}{i / 4:8.2f}2024-01-01" for i in range(40)]
    lines[5] = "00x5" + lines[5][4:]
    lines[31] = lines[31][:12] + "  12.5.5" + lines[31][20:]
    p = _write(tmp_path / "bad.txt", lines)
    errors = {}
    for fast in (True, False):
        with caplog.at_level(logging.DEBUG, logger="statgrid.procs.importing"):
            with pytest.raises(StepError) as err:
                session.import_fixed(p, out="work.bad", columns=COLS, fast=fast)
        errors[fast] = str(err.value)
        assert not session.ref("work.bad").exists()
    assert "read by the SQL path (a value that does not convert)" in caplog.text
    assert errors[True] == errors[False]
    assert "2 bad fixed-width row(s)" in errors[True] and "line 6: column(s) id do not convert" in errors[True]
    assert "line 32: column(s) amt do not convert" in errors[True]
    warned = {}
    for fast in (True, False):
        start = len(captured.text.getvalue())
        session.import_fixed(p, out=f"work.ok{int(fast)}", columns=COLS, max_errors=2, fast=fast)
        warned[fast] = [ln for ln in captured.text.getvalue()[start:].splitlines() if "WARNING" in ln or "line " in ln]
    assert warned[True] == warned[False] and any("2 bad row(s)" in w for w in warned[True])
    a, b = (pq.read_table(session.dataset(f"work.ok{i}").path) for i in (1, 0))
    assert a.equals(b) and a.num_rows == 38 and 5 not in a.column("id").to_pylist()


@pytest.mark.parametrize("text", [b"0001ab\r0002cd\n0003x\n", b"0001ab\x1fcd\n0002x\n", b"0001\xff\xfe\n",
                                  b"0001ab\n0002cd\r\n0003\n"])
def test_odd_bytes_step_back_to_the_sql_path(session, tmp_path, caplog, text):
    p = tmp_path / "odd.txt"
    p.write_bytes(text)
    cols = [("id", 1, 4, "int"), ("rest", 5, 8, "$")]
    results = {}
    for fast in (True, False):
        with caplog.at_level(logging.DEBUG, logger="statgrid.procs.importing"):
            try:
                session.import_fixed(p, out=f"work.o{int(fast)}", columns=cols, fast=fast)
                results[fast] = _rows(pq.read_table(session.dataset(f"work.o{int(fast)}").path))
            except StepError as exc:
                results[fast] = type(exc)
    assert results[True] == results[False]
    assert "read by the SQL path" in caplog.text
    if text.startswith(b"0001ab\r"):           # read_csv ends a line at a lone \r too
        assert results[True] == [(1, "ab"), (2, "cd"), (3, "x")]


def test_empty_file_and_skip_past_the_end(session, tmp_path):
    p = tmp_path / "empty.txt"
    p.write_bytes(b"")
    fast, sql = _both(session, p, COLS)
    assert fast.num_rows == 0 and fast.schema == sql.schema
    p.write_bytes(b"0001\n0002")
    fast, sql = _both(session, p, COLS, skip=5)
    assert fast.num_rows == 0 and fast.schema == sql.schema
    fast, sql = _both(session, p, COLS, skip=1)
    assert _rows(fast) == _rows(sql) == [(2, None, None, None)]


def test_datagen_household_file_is_the_same_both_ways(session, tmp_path):
    session.libname("gen", tmp_path)
    datagen.generate(session, "household", 0.0001, 3, "gen")
    p = datagen.file_of(tmp_path, "household")
    fast, sql = _both(session, p, datagen.layout("household"))
    assert fast.schema == sql.schema and fast.equals(sql) and fast.num_rows == 3000
    first = p.read_text().splitlines()[0]
    assert fast.column("hh_id")[0].as_py() == int(first[0:10])
    assert fast.column("h003")[0].as_py() == (float(first[16:25]) if first[16:25].strip() else None)


@pytest.mark.parametrize("odd_row", [None, "   12.5  0012", "  1.5e2     7", "12.50       3", " -3.25 00-12"[:13],
                                     "+ 3.25   0003"])
def test_right_aligned_decimals_and_zero_padded_codes(session, tmp_path, odd_row):
    """The common layouts (one point column; zero-padded codes or blank) and one row that breaks them."""
    rng = random.Random(7)
    lines = []
    for i in range(300):
        x = "" if i % 17 == 0 else f"{rng.uniform(-9999, 9999):9.2f}"
        k = "" if i % 13 == 0 else f"{rng.randint(0, 9999):04d}"
        lines.append(f"{x:>9}{k:>4}")
    if odd_row is not None:
        lines[150] = odd_row
    p = _write(tmp_path / "common.txt", lines)
    cols = [("x", 1, 9, "num"), ("k", 10, 13, "int")]
    if odd_row in ("+ 3.25   0003", " -3.25 00-12"[:13]):       # an inner blank / a sign inside: bad rows
        with pytest.raises(StepError, match="line 151: column"):
            session.import_fixed(p, out="work.c", columns=cols)
        return
    fast, sql = _both(session, p, cols)
    assert fast.equals(sql)
    want = [(float(ln[:9]) if ln[:9].strip() else None, int(ln[9:13]) if ln[9:13].strip() else None)
            for ln in lines]
    _same(want, _rows(fast))
