"""The SAS tokenizer, token cursor and value model (statgrid/sas/lexer.py, cursor.py, values.py)."""
from __future__ import annotations

import datetime as dt
import math

import pytest

from statgrid.sas.cursor import TokenCursor
from statgrid.sas.errors import SasSyntaxError
from statgrid.sas.lexer import tokenize
from statgrid.sas.statement import statements_of
from statgrid.sas import values as v


def kinds(text):
    return [(t.kind, t.text) for t in tokenize(text)[:-1]]


def test_names_numbers_strings_and_operators():
    assert kinds("x=1.5e3 ** 2;") == [("NAME", "x"), ("OP", "="), ("NUM", "1.5e3"), ("OP", "**"), ("NUM", "2"),
                                       ("SEMI", ";")]
    assert kinds("a||b<=c^=d<>e") == [("NAME", "a"), ("OP", "||"), ("NAME", "b"), ("OP", "<="), ("NAME", "c"),
                                      ("OP", "^="), ("NAME", "d"), ("OP", "<>"), ("NAME", "e")]
    assert [t.value for t in tokenize(".5 10. 0FFx")[:-1]] == [0.5, 10.0, 255.0]


def test_string_literals_quotes_and_suffixes():
    toks = tokenize("'it''s' " + '"say ""hi"""' + " '01jan2020'd '10:30't '01jan2020:10:00'DT '4142'x 'my var'n 'd'dx")
    assert [(t.value, t.suffix) for t in toks[:7]] == [("it's", ""), ('say "hi"', ""), ("01jan2020", "D"),
                                                      ("10:30", "T"), ("01jan2020:10:00", "DT"), ("AB", "X"),
                                                      ("my var", "N")]
    assert (toks[7].value, toks[7].suffix, toks[8].text) == ("d", "", "dx")   # not a suffix: a name follows


def test_comments_are_dropped_statement_comments_only_at_a_statement_start():
    assert kinds("* note; x = a * b; /* c; */ y=1; %* macro comment; z=2;") == [
        ("NAME", "x"), ("OP", "="), ("NAME", "a"), ("OP", "*"), ("NAME", "b"), ("SEMI", ";"),
        ("NAME", "y"), ("OP", "="), ("NUM", "1"), ("SEMI", ";"), ("NAME", "z"), ("OP", "="), ("NUM", "2"),
        ("SEMI", ";")]


def test_lines_and_columns():
    toks = tokenize("data a;\n  set b;\n", line=10)
    assert [(t.text, t.line, t.col) for t in toks[:-1]] == [("data", 10, 1), ("a", 10, 6), (";", 10, 7),
                                                           ("set", 11, 3), ("b", 11, 7), (";", 11, 8)]


@pytest.mark.parametrize("text, line, col", [("x = 'abc;\n", 1, 5), ("a;\n /* open", 2, 2)])
def test_an_unclosed_string_or_comment_names_its_place(text, line, col):
    with pytest.raises(SasSyntaxError) as err:
        tokenize(text)
    assert (err.value.line, err.value.col) == (line, col)


def test_statements_and_the_cursor():
    stmts = statements_of("data work.a(keep=x); set first.id; format d date9. c $char10. m comma10.2 p 8.2 q best.;")
    assert [s.keyword for s in stmts] == ["DATA", "SET", "FORMAT"]
    c = TokenCursor(stmts[0].tokens)
    c.expect("DATA")
    assert c.dotted_name() == "work.a" and c.at("(")
    c = TokenCursor(stmts[2].tokens)
    c.expect("format")
    got = []
    while not c.at_end():
        got.append((c.expect_name(), c.format_name()))
    assert got == [("d", "DATE9."), ("c", "$CHAR10."), ("m", "COMMA10.2"), ("p", "8.2"), ("q", "BEST.")]
    c.expect_end()
    with pytest.raises(SasSyntaxError) as err:
        TokenCursor(statements_of("set 12;")[0].tokens[1:]).expect_name("a data set name")
    assert "a data set name" in str(err.value) and "'12'" in str(err.value)


def test_missing_values_order_and_dates():
    a, z, u = v.special_missing("A"), v.special_missing("z"), v.special_missing("_")
    assert all(math.isnan(x) for x in (a, z, u, v.MISSING)) and repr(a) == ".A"
    order = sorted([3.0, z, v.MISSING, -1e300, a, u], key=v.num_key)
    assert [v.missing_code(x) or x for x in order] == ["_", ".", "A", "Z", -1e300, 3.0]
    assert v.num_lt(v.MISSING, -1e300) and v.is_missing(a) and v.is_missing("   ") and not v.is_missing(0.0)
    assert v.missing_code(a + 1) == "."                 # arithmetic on a special missing gives '.'
    assert v.char_eq("ab", "ab   ") and v.pad("abcdef", 3) == "abc" and v.pad("a", 3) == "a  "
    # SAS's day 0 is 1960-01-01: 2020-01-01 is 21915 days later (365*60 + 15 leap days)
    assert v.date_to_sas(dt.date(2020, 1, 1)) == 365 * 60 + 15
    assert v.sas_to_date(-1.0) == dt.date(1959, 12, 31)
    assert v.datetime_to_sas(dt.datetime(1960, 1, 2, 0, 0, 1)) == 86401.0
