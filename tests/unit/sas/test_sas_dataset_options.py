"""The data-set layer (statgrid/sas/dataset.py): names, data set options in SAS's order, SAS types out of
Parquet, atomic writes with metadata — over real Parquet in a statgrid session; expected rows computed by
DuckDB directly or by hand."""
from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from statgrid.sas.context import ProgramState
from statgrid.sas.dataset import COLUMNS_KEY, column_info, input_sql, write_dataset
from statgrid.sas.parse.dsname import parse_dataset_text
from statgrid.sas.errors import SasError


class FakeLog:
    def __init__(self):
        self.lines = []

    def note(self, m):
        self.lines.append("NOTE: " + m)

    def warning(self, m):
        self.lines.append("WARNING: " + m)

    def error(self, m):
        self.lines.append("ERROR: " + m)

    def put(self, m):
        self.lines.append(m)


class FakeOptions(dict):
    def get(self, name, default=None):
        return super().get(name.upper(), default)


def program(session, **opts):
    return ProgramState(session=session, log=FakeLog(), options=FakeOptions(opts), symbols=None, formats=None)


@pytest.fixture
def prog(session):
    t = pa.table({"id": pa.array([1, 2, 3, 4, 5], pa.int64()), "Name": ["ann", "bob", None, "dan", "eve"],
                  "x": [1.5, None, 3.0, float("nan"), 5.0],
                  "d": [dt.date(1960, 1, 2), dt.date(2020, 1, 1), None, dt.date(1959, 12, 31), dt.date(1960, 1, 1)]})
    pq.write_table(t, session.ref("work.src").path)
    return program(session)


def rows(p, text):
    spec = parse_dataset_text(text, p)
    return p.session.fetch_arrow(input_sql(p, spec)).to_pylist()


def test_sas_types_and_names(prog):
    r = rows(prog, "src")
    assert r[0] == {"id": 1.0, "Name": "ann", "x": 1.5, "d": 1.0}       # a date is days since 1960
    assert r[3]["x"] is None and r[3]["d"] == -1.0                       # NaN read as missing
    info = {c.name: (c.type, c.format) for c in column_info(prog, parse_dataset_text("work.src", prog))}
    assert info == {"id": ("num", ""), "Name": ("char", ""), "x": ("num", ""), "d": ("num", "DATE9.")}


def test_options_in_sas_order(prog):
    # KEEP before RENAME, WHERE on the new names, FIRSTOBS/OBS among the rows WHERE keeps
    r = rows(prog, "work.src(keep=id x rename=(x=y) where=(y < 4) firstobs=2 obs=3)")
    expected = prog.session.fetch_arrow(
        "SELECT CAST(id AS DOUBLE) AS id, CASE WHEN isnan(x) THEN NULL ELSE x END AS y FROM " + prog.session.ref("work.src").scan_sql() + " "
        "WHERE coalesce(CASE WHEN isnan(x) THEN NULL ELSE x END, -1e300) < 4 ORDER BY id LIMIT 2 OFFSET 1"
    ).to_pylist()
    assert r == expected == [{"id": 2.0, "y": None}, {"id": 3.0, "y": 3.0}]
    assert [x["id"] for x in rows(prog, "src(drop=d where=(name = ' '))")] == [3.0]
    assert list(rows(prog, "src(keep=i: )")[0]) == ["id"]


def test_system_obs_and_syntax_check(prog):
    p = program(prog.session, OBS=2, FIRSTOBS=2)
    assert [x["id"] for x in rows(p, "src")] == [2.0]
    assert [x["id"] for x in rows(p, "src(obs=max)")] == [2.0, 3.0, 4.0, 5.0]
    p.syntax_check = True
    assert rows(p, "src") == []


def test_errors(prog):
    with pytest.raises(SasError, match="WORK.NOPE.DATA does not exist"):
        rows(prog, "nope")
    with pytest.raises(SasError, match="Variable zz is not on file WORK.SRC"):
        rows(prog, "src(where=(zz=1))")
    with pytest.raises(SasError, match="never been referenced"):
        rows(prog, "src(keep=zz)")
    with pytest.raises(SasError, match="Libref NOLIB is not assigned"):
        rows(prog, "nolib.a")
    with pytest.raises(SasError):
        parse_dataset_text("src(obs=-1)")


def test_special_names(prog):
    assert parse_dataset_text("_null_").is_null
    with pytest.raises(SasError, match="no last data set"):
        parse_dataset_text("_last_", prog)
    prog.last = "WORK.SRC"
    assert parse_dataset_text("_last_", prog).name == "WORK.SRC"
    assert parse_dataset_text("_data_", prog).name == "WORK.DATA1"


def test_write_dataset_atomic_with_metadata(prog):
    spec = parse_dataset_text("work.out(drop=b rename=(a=z) label='my data')", prog)
    table = pa.table({"a": [1, 2], "b": ["x", "y"], "c": ["p", None]})
    write_dataset(prog, spec, table, {"c": {"length": 3, "label": "The C"}})
    got = pq.read_table(prog.session.ref("work.out").path)
    assert got.column_names == ["z", "c"] and got.column("z").to_pylist() == [1.0, 2.0]
    kv = got.schema.metadata
    assert b"The C" in kv[COLUMNS_KEY.encode()] and kv[b"statgrid.label"] == b"my data"
    assert prog.last == "WORK.OUT"
    assert "NOTE: The data set WORK.OUT has 2 observations and 2 variables." in prog.log.lines
    prog.syntax_check = True                      # syntax-check mode: nothing replaced
    write_dataset(prog, parse_dataset_text("work.out", prog), pa.table({"q": [9.0]}))
    assert pq.read_table(prog.session.ref("work.out").path).column_names == ["z", "c"]


def test_a_size_option_value_keeps_its_unit():
    """`bufsize=64k` is a number touching its unit (NUM 64, NAME k): one value "64K", as in OPTIONS; a
    number and a name apart stay apart (`obs=5 k=…` is not a size)."""
    spec = parse_dataset_text("work.a(bufsize=64k compress=yes obs=5)")
    assert spec.options["BUFSIZE"] == "64K" and spec.options["COMPRESS"] == "YES"
    assert spec.options["OBS"] == 5.0
    assert parse_dataset_text("work.a(bufsize=2M)").options["BUFSIZE"] == "2M"
