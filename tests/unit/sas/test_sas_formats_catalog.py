"""User formats (PROC FORMAT VALUE/INVALUE semantics, SAS 9.4 Base Procedures): ranges with LOW, HIGH,
OTHER and exclusive ends, lists, character formats, bracketed format labels, informats; CNTLIN= data;
saving in a library directory and finding formats again in FMTSEARCH= order from a later program."""
from __future__ import annotations

import pytest

from statgrid.sas.formats import InvalidData, format_value, informat_value
from statgrid.sas.formats.catalog import (FormatCatalog, catalog_file, cntlout_rows, formats_from_cntlin, parse_fmtsearch)
from statgrid.sas.formats.userformat import FormatRange, UserFormat
from statgrid.sas.options import SasOptions
from statgrid.sas.values import MISSING, special_missing


def agefmt() -> UserFormat:
    # value agefmt low-<13 = 'Child' 13-19 = 'Teen' 20<-high = 'Adult' . = 'Unknown' other = 'Twenty';
    return UserFormat("AGEFMT", [FormatRange(None, 13.0, "Child", low=True, end_excl=True),
                                 FormatRange(13.0, 19.0, "Teen"), FormatRange(20.0, None, "Adult", start_excl=True, high=True),
                                 FormatRange(MISSING, MISSING, "Unknown"), FormatRange(label="Twenty", other=True)])


def test_numeric_value_format_ranges():
    cat = FormatCatalog()
    cat.define(agefmt())
    assert format_value(5.0, "agefmt.", cat) == "Child  " and format_value(12.999, "agefmt.", cat) == "Child  "
    assert format_value(13.0, "agefmt.", cat) == "Teen   " and format_value(19.0, "AGEFMT7.", cat) == "Teen   "
    assert format_value(20.0, "agefmt.", cat) == "Twenty " and format_value(20.5, "agefmt.", cat) == "Adult  "
    assert format_value(MISSING, "agefmt.", cat) == "Unknown"          # LOW does not take missing; '.' does
    assert format_value(special_missing("A"), "agefmt.", cat) == "Twenty "
    assert format_value(15.0, "agefmt3.", cat) == "Tee"


def test_unmatched_values_and_character_formats():
    cat = FormatCatalog()
    cat.define(UserFormat("YN", [FormatRange(1.0, 1.0, "Yes"), FormatRange(0.0, 0.0, "No")]))
    cat.define(UserFormat("$SEX", [FormatRange("F", "F", "Female"), FormatRange("M", "M", "Male")]))
    cat.define(UserFormat("$GRP", [FormatRange("A", "C", "first"), FormatRange(None, None, "rest", other=True)]))
    assert format_value(7.0, "yn.", cat) == "  7" and format_value(1.0, "YN.", cat) == "Yes"
    assert format_value("F ", "$sex.", cat) == "Female" and format_value("X", "$sex.", cat) == "X     "
    assert format_value("B", "$grp.", cat) == "first" and format_value("D", "$grp.", cat) == "rest "
    with pytest.raises(Exception, match="SEX"):
        format_value(3.0, "sex.", cat)


def test_bracketed_format_label_and_informats():
    cat = FormatCatalog()
    cat.define(UserFormat("WHEN", [FormatRange(None, 0.0, "early", low=True, end_excl=True),
                                   FormatRange(label="", other=True, label_format="DATE9.")]))
    assert format_value(21915.0, "when9.", cat) == "01JAN2020"
    cat.define(UserFormat("GRADE", [FormatRange("A", "A", 4.0), FormatRange("B", "B", 3.0),
                                    FormatRange("X", "X", "_ERROR_"), FormatRange(label="_SAME_", other=True)],
                          informat=True, upcase=True))
    assert informat_value("a", "grade.", cat) == 4.0 and informat_value("b ", "GRADE3.", cat) == 3.0
    assert informat_value("2.5", "grade3.", cat) == 2.5
    with pytest.raises(InvalidData):
        informat_value("x", "grade.", cat)


def test_cntlin_rows_to_formats_and_back():
    rows = [{"FMTNAME": "RANGE", "START": 0, "END": 10, "LABEL": "low", "TYPE": "N", "EEXCL": "Y"},
            {"FMTNAME": "RANGE", "START": 10, "END": 20, "LABEL": "mid", "TYPE": "N"},
            {"FMTNAME": "RANGE", "START": "", "END": "", "LABEL": "high", "HLO": "O"},
            {"fmtname": "$state", "start": "NC", "label": "North Carolina"},
            {"fmtname": "$state", "start": "VA", "label": "Virginia"},
            {"FMTNAME": "big", "START": "100", "END": "", "LABEL": "huge", "HLO": "H"},
            {"FMTNAME": "codes", "START": "y", "LABEL": "1", "TYPE": "I"}]
    fmts = {f.name: f for f in formats_from_cntlin(rows)}
    assert set(fmts) == {"RANGE", "$STATE", "BIG", "CODES"}
    cat = FormatCatalog()
    for fm in fmts.values():
        cat.define(fm)
    assert format_value(9.99, "range.", cat).strip() == "low" and format_value(10.0, "range.", cat).strip() == "mid"
    assert format_value(25.0, "range.", cat).strip() == "high" and format_value("NC", "$state.", cat).strip() == "North Carolina"
    assert format_value(1e9, "big.", cat) == "huge" and informat_value("y", "codes.", cat) == 1.0
    out = cntlout_rows(fmts["RANGE"])
    assert [(r["START"], r["END"], r["LABEL"], r["HLO"]) for r in out] == [
        ("0", "10", "low", ""), ("10", "20", "mid", ""), ("**OTHER**", "**OTHER**", "high", "O")]
    again = formats_from_cntlin([{k: (v if v != "**OTHER**" else "") for k, v in r.items()} for r in out])[0]
    assert format_value(10.0, "range.", _single(again)).strip() == "mid"


def _single(fmt):
    c = FormatCatalog()
    c.define(fmt)
    return c


def test_fmtsearch_order():
    assert parse_fmtsearch("(WORK LIBRARY)") == [("WORK", "FORMATS"), ("LIBRARY", "FORMATS")]
    assert parse_fmtsearch("(mylib.cat2 library)") == [("WORK", "FORMATS"), ("MYLIB", "CAT2"), ("LIBRARY", "FORMATS")]


def test_saved_in_a_library_and_found_by_a_later_program(session, tmp_path):
    libdir = tmp_path / "fmts"
    libdir.mkdir()
    session.libname("library", libdir)
    session.libname("other", tmp_path)
    first = FormatCatalog(session, SasOptions())
    first.define(agefmt(), "LIBRARY")
    first.define(UserFormat("AGEFMT", [FormatRange(None, None, "work wins", low=True, high=True)]), "WORK")
    first.define(UserFormat("ONLYOTHER", [FormatRange(1.0, 1.0, "one")]), "OTHER", "MYCAT")
    assert catalog_file(libdir).is_file()
    later = FormatCatalog(session, SasOptions())            # a new program: nothing in memory
    assert format_value(5.0, "agefmt.", later).strip() == "work wins"
    first.delete("AGEFMT", library="WORK")
    assert format_value(5.0, "agefmt.", FormatCatalog(session, SasOptions())).strip() == "Child"
    opts = SasOptions()
    assert FormatCatalog(session, opts).get("ONLYOTHER") is None
    opts.set("FMTSEARCH", "(other.mycat)")
    assert format_value(1.0, "onlyother.", FormatCatalog(session, opts)) == "one"
    plain = FormatCatalog()
    assert plain.load_library(libdir) == 1 and plain.get("AGEFMT") is not None
    assert [f.name for f in FormatCatalog(session).formats("LIBRARY")] == ["AGEFMT"]
