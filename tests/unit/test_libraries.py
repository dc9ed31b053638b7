"""Two-level names, member-name validation and read-only libraries."""
from __future__ import annotations

import pytest

from statgrid.errors import LibraryError, StepError
from statgrid.libraries import Libraries, check_name


@pytest.mark.parametrize("bad", ["../etc", "a/b", "/abs", "1abc", "a" * 33, "", "a.b", "x-y", "..", "é", "a b",
                                 "a\x00b"])
def test_bad_member_names_rejected(bad):
    with pytest.raises(LibraryError, match="is not valid: use letters, digits and underscore"):
        check_name("member", bad)


@pytest.mark.parametrize("good", ["a", "Sales_2024", "_x", "a" * 32])
def test_good_names_lowercased(good):
    assert check_name("member", good) == good.lower()


def test_resolution(tmp_path):
    libs = Libraries()
    (tmp_path / "w").mkdir()
    libs.assign("work", tmp_path / "w")
    libs.assign("Data", tmp_path, readonly=True)
    ref = libs.ref("DATA.Sales")
    assert ref.name == "data.sales" and ref.path == tmp_path / "sales.parquet"
    assert libs.ref("tmp1").name == "work.tmp1"          # one-level name → WORK
    with pytest.raises(LibraryError, match=r"library 'nope' is not assigned; known libraries: data, work"):
        libs.ref("nope.x")
    with pytest.raises(LibraryError, match="use LIBRARY.MEMBER"):
        libs.ref("a.b.c")
    with pytest.raises(LibraryError, match="library DATA is read-only"):
        libs.for_write("data.x")
    with pytest.raises(LibraryError, match=r"data set WORK.MISSING does not exist; members of WORK: \(none\)"):
        libs.for_read("work.missing")
    with pytest.raises(LibraryError, match="does not exist; create it or fix the path"):
        libs.assign("other", tmp_path / "nope")
    with pytest.raises(LibraryError, match="reserved by the SQL engine"):
        libs.assign("main", tmp_path)


def test_session_libname_readonly_and_sql_views(session, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    session.sql("CREATE TABLE work.t AS SELECT 1 AS a")
    session.copy("work.t", "data.t")
    session.libname("ref", session.libraries.get("data").path, readonly=True)
    assert session.sql("SELECT a FROM ref.t", print=False).to_pylist() == [{"a": 1}]
    with pytest.raises(StepError, match="library REF is read-only"):
        session.sql("CREATE TABLE ref.u AS SELECT 2 AS a")
    assert not (session.libraries.get("data").path / "u.parquet").exists()
