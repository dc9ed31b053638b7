"""Numeric functions against SAS 9.4 Functions and CALL Routines: the manual's example values (ROUND,
MOD, INT, CEIL, FLOOR, STD, VAR …) and hand-computed ones; missing-value rules; the registry."""
from __future__ import annotations

import math

import pytest

from statgrid.sas.context import FunctionRuntime
from statgrid.sas.errors import SasError
from statgrid.sas.functions import CALL_ROUTINES, FUNCTIONS, call_function, lookup_call, lookup_function
from statgrid.sas.values import MISSING, special_missing
from tests.unit.sas.standins import Program

M = MISSING


def rt(line=0, col=0):
    return FunctionRuntime(Program(), {}, line, col)


def f(name, *args):
    return call_function(rt(), name, *args)


def miss(v):
    return isinstance(v, float) and v != v


@pytest.mark.parametrize("args,expected", [
    ((223.456, 1), 223), ((223.456, .01), 223.46), ((223.456, 100), 200), ((223.456,), 223),
    ((-223.456, 1), -223), ((223.456, .3), 223.5), ((2.675, .01), 2.68), ((-2.5,), -3), ((2.5,), 3),
    ((1234.5678, 0.001), 1234.568), ((0.5, 0), 0.5)])
def test_round_manual_examples(args, expected):
    assert f("ROUND", *args) == expected


@pytest.mark.parametrize("args,expected", [((10, 3), 1), ((.3, -.1), 0), ((1.7, .1), 0), ((-10, 3), -1),
                                           ((10, -3), 1), ((7.5, 2), 1.5)])
def test_mod_manual_examples_with_fuzz(args, expected):
    assert f("MOD", *args) == pytest.approx(expected, abs=1e-15)


def test_int_ceil_floor_fuzz():
    assert f("INT", 2.1) == 2 and f("INT", -2.4) == -2 and f("INT", 1 + 1e-11) == 1 and f("INT", -1.6) == -1
    assert f("INT", 2.9999999999999) == 3                     # within 1E-12 of 3
    assert f("CEIL", 1 + 1e-11) == 2 and f("CEIL", 1 + 1e-13) == 1 and f("CEIL", -2.4) == -2
    assert f("FLOOR", -2.4) == -3 and f("FLOOR", 1 + 1e-11) == 1 and f("FLOOR", -1 + 1e-13) == -1
    assert f("FLOORZ", -1 + 1e-13) == -1 and f("CEILZ", 1 + 1e-13) == 2
    assert f("FUZZ", 5.9999999999999) == 6 and f("FUZZ", 5.99) == 5.99


def test_descriptive_statistics_ignore_missing():
    assert f("STD", 2, 6, 3, 4) == pytest.approx(1.707825127659933)
    assert f("VAR", 4, 2, 3.5, 6) == pytest.approx(2.7291666666666665)
    assert f("MEAN", 2, M, M, 6) == 4
    assert f("N", 1, 0, M, 2, 5, M) == 4 and f("NMISS", 1, 0, M, 2, 5, M) == 2
    assert f("SUM", 4, 9, 3, 8) == 24 and miss(f("SUM", M, M)) and f("SUM", M, 2) == 2
    assert f("MIN", 2, M, 6) == 2 and f("MAX", 2, M, 6) == 6 and miss(f("MAX", M, M))
    assert miss(f("STD", 3, M)) and f("RANGE", 1, 5, M) == 4 and f("MEDIAN", 3, 1, 2, 10) == 2.5
    assert f("SUM", special_missing("A"), 1) == 1 and f("CMISS", "  ", 1, M) == 2
    assert f("COALESCE", M, special_missing("B"), 3, 4) == 3


def test_one_argument_functions_propagate_missing():
    for name in ("ABS", "INT", "CEIL", "FLOOR", "EXP", "LOG", "SQRT", "SIGN"):
        assert miss(f(name, M))
    assert miss(f("ROUND", M, 1)) and miss(f("MOD", M, 3))
    assert f("MISSING", special_missing("Z")) == 1 and f("MISSING", "   ") == 1 and f("MISSING", 0.0) == 0


def test_invalid_argument_note_and_missing_result():
    r = rt(12, 7)
    assert miss(FUNCTIONS["LOG"].fn(r, 0.0))
    assert r.program.log.notes == ["Invalid argument to function LOG(0) at line 12 column 7."]
    assert r.state["_ERROR_"] == 1
    r2 = rt(3, 5)
    assert miss(FUNCTIONS["SQRT"].fn(r2, -1.0)) and miss(FUNCTIONS["MOD"].fn(r2, 1.0, 0.0))
    assert len(r2.program.log.notes) == 2
    assert f("EXP", 1) == pytest.approx(math.e) and f("LOG10", 1000) == pytest.approx(3)


def test_character_arguments_are_converted():
    assert f("ABS", " -3 ") == 3 and miss(f("ABS", "abc")) and f("SUM", "1", 2) == 3


def test_unknown_function_and_routine_are_errors_naming_them():
    with pytest.raises(SasError) as e:
        lookup_function("NOSUCHFN", 4, 9)
    assert "NOSUCHFN" in str(e.value) and e.value.line == 4 and e.value.col == 9
    with pytest.raises(SasError, match="NOSUCHCALL"):
        lookup_call("nosuchcall")
    with pytest.raises(SasError, match="not have enough arguments"):
        call_function(rt(), "MOD", 1)
    with pytest.raises(SasError, match="too many arguments"):
        call_function(rt(), "ABS", 1, 2)


def test_call_sortn_sortc_missing():
    r = rt()
    out = CALL_ROUTINES["SORTN"].fn(r, [3.0, M, 1.0])
    assert miss(out[0]) and out[1:] == [1.0, 3.0]
    assert CALL_ROUTINES["SORTC"].fn(r, ["b ", "a ", "  "]) == ["  ", "a ", "b "]
    out = CALL_ROUTINES["MISSING"].fn(r, [1.0, "abc"])
    assert miss(out[0]) and out[1] == ""
