"""LIBNAME x (lib) — the same library under a second libref (a one-level concatenation, as benchmark programs
write `libname inputs (work);`), STIMEFMT= (SAS 9.4 on UNIX: the time layout of STIMER/FULLSTIMER notes) and
SAS's ERROR for a DATA step writing to a libref that was never assigned. Expected texts by hand."""
from __future__ import annotations

import pytest

from statgrid.sas.saslog import stime_text
from tests.unit.sas.standins import run_sas


def flat(log):
    return " ".join(log.split())


def test_a_libref_in_parentheses_names_the_same_library(session):
    code, log, _ = run_sas(session, """libname inputs (work);
data inputs.a; x = 1; run;
data b; set work.a; y = x + 1; run;
libname two (inputs work);
""")
    text = flat(log)
    assert "Libref INPUTS was successfully assigned as follows: Levels: 1 Engine(1): V9" in text
    assert session.libraries.get("inputs").path == session.libraries.get("work").path
    assert "NOTE: The data set WORK.B has 1 observations and 2 variables." in text
    assert code == 1 and "Concatenated libraries of more than one library are not supported" in text


def test_a_directory_in_parentheses_and_an_unknown_libref(session, tmp_path):
    code, log, _ = run_sas(session, f"""libname d ('{tmp_path}');
data d.t; x = 2; run;
libname e (nosuch);
""")
    assert (tmp_path / "t.parquet").exists()
    assert code == 1 and "Libref NOSUCH is not assigned" in flat(log)


@pytest.mark.parametrize("seconds, layout, text", [
    (0.014, "M", "0.01 seconds"), (62.034, "M", "1:02.03"), (62.034, "S", "62.03 seconds"),
    (3725.5, "H", "1:02:05.50"), (5.0, "H", "0:00:05.00"), (3725.5, "N", "1:02:05.50"),
    (125.25, "N", "2:05.25"), (59.994, "N", "59.99 seconds")])
def test_stimefmt_layouts(seconds, layout, text):
    assert stime_text(seconds, layout) == text


def test_stimefmt_option_and_a_bad_value(session):
    code, log, _ = run_sas(session, "options fullstimer stimefmt=seconds; data a; x = 1; run;\n"
                                    "options stimefmt=(tsoff h); data b; x = 1; run;\noptions stimefmt=weeks;\n")
    text = flat(log)
    assert "real time 0:00:0" in text and "Timestamp" in text.split("WORK.B")[0]
    assert "Timestamp" not in text.split("WORK.B")[1]
    assert code == 1 and "Invalid option value weeks for SAS option STIMEFMT" in text


def test_writing_to_an_unassigned_libref_is_sas_error(session):
    code, log, _ = run_sas(session, "data nolib.x; y = 1; run;\n")
    assert code == 1 and "ERROR: Libref NOLIB is not assigned" in flat(log)
