"""Selection, searching, text-distance, digest, name and date functions and CALL CATS/CATX/SCAN against
SAS 9.4 Functions and CALL Routines: the manual's examples (DATDIF 16oct78-16feb95: 5967 and 5880 days;
YRDIF 16oct1998-16feb2010 by each basis) and values worked by hand from the documented rules; the
published MD5/SHA-256 test vectors; a DATA step using them runs on the Python engine."""
from __future__ import annotations

import datetime as dt

import pytest

from statgrid.sas.functions import CALL_ROUTINES, FUNCTIONS, call_function
from statgrid.sas.values import MISSING
from tests.unit.sas.standins import rows, run_under_engine
from tests.unit.sas.test_sas_functions_numeric import rt

M = MISSING


def f(name, *args):
    return call_function(rt(), name, *args)


def call(name, *args):
    return CALL_ROUTINES[name].fn(rt(), list(args))


def miss(v):
    return isinstance(v, float) and v != v


def D(y, m, d):
    return float((dt.date(y, m, d) - dt.date(1960, 1, 1)).days)


def test_selection():
    assert f("WHICHN", 2, 5, 2, 2) == 2 and f("WHICHN", 3, 1, 2) == 0 and miss(f("WHICHN", M, 1))
    assert f("WHICHC", "b", "a ", "b  ") == 2 and f("WHICHC", "z", "a") == 0
    assert f("CHOOSEN", 2, 10, 20, 30) == 20 and f("CHOOSEN", -1, 10, 20, 30) == 30
    assert f("CHOOSEC", 1, "x", "y") == "x" and f("CHOOSEC", -2, "x", "y") == "x"
    r = rt(2, 3)
    assert miss(FUNCTIONS["CHOOSEN"].fn(r, 4.0, 1.0, 2.0)) and FUNCTIONS["CHOOSEC"].fn(r, 0.0, "a") == ""
    assert len(r.program.log.notes) == 2 and r.state["_ERROR_"] == 1


def test_searching():
    assert f("FINDC", "abc 123", "", "d") == 5 and f("FINDC", "Hello", "L", "i") == 3
    assert f("FINDC", "hello", "l", -5) == 4 and f("FINDC", "hello", "l", "b") == 4
    assert f("FINDC", "abc", "abc", "k") == 0 and f("FINDC", "ab1", "ab", "k") == 3 and f("FINDC", "ab1", "ab", "v") == 3
    assert f("FINDC", "abc", "x") == 0 and f("FINDC", "a  ", " ", "t") == 0
    assert f("FINDW", "the cat sat", "sat") == 9 and f("FINDW", "the cat sat", "at") == 0
    assert f("FINDW", "the cat sat", "CAT", " ", "i") == 5 and f("FINDW", "the cat sat", "sat", " ", "e") == 3
    assert f("FINDW", "a,b,a", "a", ",", -4) == 1 and f("FINDW", "a,b,a", "a", ",", 2) == 5
    assert f("KSCAN", "a b c", -1) == "c" and f("ANYPUNCT", "ab,c") == 3 and f("NOTPUNCT", ",,a") == 3


def test_sound_and_distance():
    assert f("SOUNDEX", "Thomson") == "T525" and f("SOUNDEX", "Tomson") == "T525"
    assert f("SOUNDEX", "Tymczak") == "T522" and f("SOUNDEX", "Paul") == "P4" and f("SOUNDEX", "  ") == ""
    assert f("COMPLEV", "kitten", "sitting") == 3 and f("COMPLEV", "abc  ", "abc") == 0
    assert f("COMPLEV", "abc", "ABC", "i") == 0 and f("COMPLEV", "abc", "ABC") == 3
    assert f("COMPLEV", "kitten", "sitting", 1) == 2 and f("COMPLEV", "abcdef", "abc", ":") == 0


def test_digests_collate_and_names():
    assert f("MD5", "abc").encode("latin-1").hex() == "900150983cd24fb0d6963f7d28e17f72"          # RFC 1321
    assert f("SHA256", "abc").encode("latin-1").hex() == \
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"                      # FIPS 180-2
    assert f("MD5", "abc ") != f("MD5", "abc")                                  # trailing blanks are hashed
    assert FUNCTIONS["MD5"].char_length == 16 and FUNCTIONS["SHA256"].char_length == 32
    assert f("COLLATE", 65, 70) == "ABCDEF" and f("COLLATE", 48, M, 10) == "0123456789"
    assert f("NLITERAL", "ok_name") == "ok_name" and f("NLITERAL", "my var") == '"my var"N'
    assert f("NLITERAL", "a&b") == "'a&b'N"
    assert f("NVALID", "_a1") == 1 and f("NVALID", "1abc") == 0 and f("NVALID", "my var") == 0
    assert f("NVALID", "my var", "ANY") == 1 and f("NVALID", '"my var"N', "NLITERAL") == 1
    assert f("NVALID", "a" * 33) == 0 and f("LENGTHM", "ab   ") == 5
    assert f("VTYPE", "abc") == "C" and f("VTYPE", M) == "N"
    assert f("SYSPROD", "base") == 1 and f("SYSPROD", "NOTAPRODUCT") == -1 and f("SYSRC") == 0


def test_sleep_arguments():
    assert f("SLEEP", 0) == 0 and f("SLEEP", 2, .0005) == pytest.approx(.001) and call("SLEEP", 1) is None
    r = rt()
    assert miss(FUNCTIONS["SLEEP"].fn(r, -1.0)) and CALL_ROUTINES["SLEEP"].fn(r, [M]) is None
    assert miss(FUNCTIONS["SLEEP"].fn(r, 1.0, 0.0))
    assert r.program.log.notes == ["Invalid first argument to function SLEEP.",
                                   "Invalid first argument to function SLEEP.", "Invalid argument to function SLEEP(1,0)."]


def test_call_cats_catx_scan():
    assert call("CATS", "ab      ", " c ", 1) == ["abc1"]
    assert call("CATS", "ab  ", "cdef") == ["abcd"]                               # cut to result's length
    assert call("CATX", "-", "x       ", " a ", 2, "  ") == [None, "x-a-2"]
    assert call("SCAN", "The quick fox", 2, 0.0, 0.0) == [None, None, 5.0, 5.0]
    assert call("SCAN", "The quick fox", -1, 0.0, 0.0) == [None, None, 11.0, 3.0]
    assert call("SCAN", "The quick fox", 4, 0.0, 0.0) == [None, None, 0.0, 0.0]
    assert call("SCAN", "a,b;c", 3, 0.0, 0.0, ",;") == [None, None, 5.0, 1.0, None]


def test_yrdif_and_datdif_day_counts():
    s, e = D(1998, 10, 16), D(2010, 2, 16)
    assert f("YRDIF", s, e, "30/360") == pytest.approx((360 * 12 + 30 * (2 - 10)) / 360)
    # 16 Oct-31 Dec 1998: 77 days of a 365-day year; 1999-2009: 11 whole years; 1 Jan-16 Feb 2010: 46 days
    assert f("YRDIF", s, e, "ACT/ACT") == pytest.approx(11 + 77 / 365 + 46 / 365)
    assert f("YRDIF", s, e, "ACTUAL") == pytest.approx(11 + 123 / 365)
    days = (dt.date(2010, 2, 16) - dt.date(1998, 10, 16)).days
    assert f("YRDIF", s, e, "ACT/360") == pytest.approx(days / 360) and f("YRDIF", s, e, "ACT/365") == pytest.approx(days / 365)
    assert f("YRDIF", D(1990, 6, 15), D(2020, 6, 15)) == 30
    assert f("YRDIF", D(1990, 6, 15), D(2020, 12, 15), "AGE") == pytest.approx(30 + 183 / 365)
    assert f("DATDIF", D(1978, 10, 16), D(1995, 2, 16), "ACT/ACT") == 5967
    assert f("DATDIF", D(1978, 10, 16), D(1995, 2, 16), "30/360") == 5880
    assert f("DATDIF", D(2023, 1, 31), D(2023, 2, 28), "30/360") == 28          # D1 31 → 30
    assert f("DATDIF", D(2023, 2, 28), D(2024, 2, 29), "360") == 360             # both February's last day
    assert f("DATDIF", D(2023, 3, 30), D(2023, 5, 31), "30/360") == 60           # D2 31 with D1 30 → 30
    assert f("DATDIF", D(2023, 3, 1), D(2023, 5, 31), "30/360") == 90
    r = rt()
    assert miss(FUNCTIONS["YRDIF"].fn(r, s, e, "ACT/999")) and miss(FUNCTIONS["DATDIF"].fn(r, s, e, "AGE"))
    assert len(r.program.log.notes) == 2 and miss(f("YRDIF", M, e, "ACT/ACT"))


def test_week_julian_nwkdom_holiday():
    # 1 January 2026 is a Thursday: the first Sunday is 4 January, the first Monday 5 January
    assert f("WEEK", D(2026, 1, 3)) == 0 and f("WEEK", D(2026, 1, 4)) == 1 and f("WEEK", D(2026, 1, 11), "U") == 2
    assert f("WEEK", D(2026, 1, 4), "w") == 0 and f("WEEK", D(2026, 1, 5), "W") == 1
    assert f("WEEK", D(2025, 12, 29), "V") == 1 and f("WEEK", D(2021, 1, 1), "V") == 53
    assert f("JULDATE", D(1999, 12, 31)) == 99365 and f("JULDATE", D(1850, 3, 1)) == 1850060
    assert f("JULDATE7", D(2001, 1, 1)) == 2001001
    assert f("DATEJUL", 99365) == D(1999, 12, 31) and f("DATEJUL", 2024060) == D(2024, 2, 29)
    assert f("DATEJUL", 25001) == D(2025, 1, 1) and f("DATEJUL", 26001) == D(1926, 1, 1)   # YEARCUTOFF=1926
    r = rt()
    assert miss(FUNCTIONS["DATEJUL"].fn(r, 23366.0)) and len(r.program.log.notes) == 1
    assert f("NWKDOM", 5, 2, 5, 2026) == D(2026, 5, 25) and f("NWKDOM", 1, 1, 1, 2026) == D(2026, 1, 4)
    assert f("NWKDOM", 4, 5, 11, 2026) == D(2026, 11, 26)
    assert f("HOLIDAY", "THANKSGIVING", 2026) == D(2026, 11, 26) and f("HOLIDAY", "easter", 2024) == D(2024, 3, 31)
    assert f("HOLIDAY", "EASTER", 2025) == D(2025, 4, 20) and f("HOLIDAY", "VICTORIA", 2026) == D(2026, 5, 18)
    assert f("HOLIDAY", "MEMORIAL", 2026) == D(2026, 5, 25) and miss(f("HOLIDAY", "MLK", 1985))
    assert f("HOLIDAY", "MLK", 2026) == D(2026, 1, 19) and f("HOLIDAY", "LABOR", 2026) == D(2026, 9, 7)


def test_in_a_data_step(session):
    code, log, engines = run_under_engine(session, """
%let who = world;
data work.m;
  length list $ 12 first $ 8;
  list = 'x';
  do i = 1 to 3;
    call catx(',', list, i);
  end;
  call scan('alpha beta gamma', 2, pos, len);
  first = choosec(2, 'red', 'green', 'blue');
  age = yrdif('15jun1990'd, '15jun2020'd, 'AGE');
  days = datdif('16oct78'd, '16feb95'd, '30/360');
  w = whichn(3, 1, 3, 5);
  sx = soundex('Tymczak');
  call symputx('n', 42);
  length res $ 24;
  res = resolve('%upcase(&who) n=&n');
  array p[3] (1 2 3);      /* 123 -> 132 -> 312 -> 321: the 3 moves left, then the first two interchange */
  do k = 1 to 4;
    call allperm(k, of p[*]);
  end;
  drop k;
  lw = libref('work'); lx = libref('nosuch');
run;
""", "NUMBA")
    assert code == 0, log
    assert engines == ["PYTHON"]
    assert rows(session, "work.m") == [{"list": "x,1,2,3", "first": "green", "i": 4.0, "pos": 7.0, "len": 4.0,
                                        "age": 30.0, "days": 5880.0, "w": 2.0, "sx": "T522",
                                        "res": "WORLD n=42", "p1": 3.0, "p2": 2.0, "p3": 1.0,
                                        "lw": 0.0, "lx": -70008.0}]
