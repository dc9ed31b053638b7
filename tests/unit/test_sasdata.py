"""SAS data import/export on real files written by SAS (../shared/testdata/sas, from pyreadstat's
test data): types, dates, missing values, compressed pages, file labels, catalogs, xpt round trip."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from statgrid.errors import StatgridError
from tests.conftest import run_cli

pyreadstat = pytest.importorskip("pyreadstat")
SAS = Path(__file__).resolve().parents[3] / "shared" / "testdata" / "sas"
if not SAS.is_dir():
    SAS = Path("/work/shared/testdata/sas")
pytestmark = pytest.mark.skipif(not SAS.is_dir(), reason="needs ../shared/testdata/sas")


def rows(s, name):
    return s.fetch_arrow("SELECT * FROM " + s.dataset(name).scan_sql()).to_pylist()


def test_sas7bdat_types_dates_formats_and_compression(session):
    for name, member in (("sample.sas7bdat", "work.plain"), ("sample_bincompressed.sas7bdat", "work.packed"),
                         ("sample.xpt", "work.xpt")):
        session.import_sas(str(SAS / name), member)
    plain = rows(session, "work.plain")
    assert rows(session, "work.packed") == plain                     # binary-compressed pages read the same
    first = plain[0]
    assert first == {"mychar": "a", "mynum": 1.1, "mydate": dt.date(2018, 5, 6),
                     "dtime": dt.datetime(2018, 5, 6, 10, 10, 10), "mylabl": 1.0, "myord": 1.0,
                     "mytime": dt.time(10, 10, 10)}
    assert plain[1]["mydate"] == dt.date(1880, 5, 6)                  # before 1960, SAS's epoch
    xpt = rows(session, "work.xpt")
    assert [{k.lower(): v for k, v in r.items()} for r in xpt] == plain
    meta = session.sas_metadata("work.plain")["columns"]
    assert meta["mydate"]["format"] == "YYMMDD10" and meta["mytime"]["format"] == "TIME20.3"


def test_file_labels_value_labels_and_missing(session):
    for os_name in ("linux", "win"):
        session.import_sas(str(SAS / f"test_data_{os_name}.sas7bdat"), f"work.t_{os_name}",
                           catalog=str(SAS / f"test_formats_{os_name}.sas7bcat"))
        meta = session.sas_metadata(f"work.t_{os_name}")
        assert meta["columns"]["SEXA"]["value_labels"] == {"1": "Male", "2": "Female"}
    assert session.sas_metadata("work.t_linux")["label"] == "mytest label"
    session.import_sas(str(SAS / "missing_test.sas7bdat"), "work.m", catalog=str(SAS / "missing_formats.sas7bcat"))
    (row,) = rows(session, "work.m")
    assert row["var9"] == 1.0 and all(row[f"var{i}"] is None for i in range(1, 9))   # ., .A–.Z, ._ → NULL


def test_xpt_export_round_trip_keeps_labels_and_formats(session, tmp_path):
    import pandas as pd

    src = tmp_path / "lab.xpt"
    df = pd.DataFrame({"AGE": [31.0, 45.0, None], "NAME": ["ann", "bob", "cy"]})
    pyreadstat.write_xport(df, str(src), file_label="people", column_labels=["Age in years", "First name"],
                           table_name="PEOPLE", variable_format={"AGE": "BEST12"})
    session.import_sas(str(src), "work.people")
    meta = session.sas_metadata("work.people")
    assert meta["columns"]["AGE"] == {"label": "Age in years", "format": "BEST12"}
    out = tmp_path / "again.xpt"
    session.export_xpt("work.people", str(out))
    df2, meta2 = pyreadstat.read_xport(str(out))
    assert meta2.column_names_to_labels == {"AGE": "Age in years", "NAME": "First name"}
    assert meta2.table_name == "PEOPLE" and meta2.file_label == "people"
    assert df2["NAME"].tolist() == ["ann", "bob", "cy"] and pd.isna(df2["AGE"][2])


def test_bad_files_name_the_problem(session, tmp_path):
    with pytest.raises(StatgridError, match="does not exist"):
        session.import_sas(str(tmp_path / "nope.sas7bdat"), "work.x")
    bad = tmp_path / "broken.sas7bdat"
    bad.write_bytes(b"not a sas file" * 100)
    with pytest.raises(StatgridError, match="cannot read .*broken.sas7bdat.* as SAS data"):
        session.import_sas(str(bad), "work.x")
    with pytest.raises(StatgridError, match="neither .sas7bdat nor .xpt"):
        session.import_sas(str(SAS / "README.md"), "work.x")


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_import_cli(home):
    r = run_cli("import", str(SAS / "dates.sas7bdat"), "data.dates")
    assert r.returncode == 0, r.stderr
    assert "Imported dates.sas7bdat (DATES): 50 observations, 3 variables" in r.stderr
    assert (home / "data" / "dates.parquet").is_file()
    r = run_cli("import", str(SAS / "dates.sas7bdat"), "dates")
    assert r.returncode == 2 and "names no library" in r.stderr
