"""Functions that reach the program: OPEN/ATTRN/ATTRC/VARNAME/FETCH/CLOSE/EXIST on statgrid data sets,
FILENAME/FOPEN/FREAD/FGET/FCLOSE on files (ids shared between separate calls, as %SYSFUNC uses them),
SYMPUT/SYMPUTX/SYMGET through the macro symbol tables, GETOPTION, PUT/INPUT through formats,
FIPSTATE/STFIPS, and the refused shell escapes."""
from __future__ import annotations

import pyarrow as pa
import pytest

from statgrid.sas.context import FunctionRuntime
from statgrid.sas.errors import SasError
from statgrid.sas.formats.catalog import FormatCatalog
from statgrid.sas.formats.userformat import FormatRange, UserFormat
from statgrid.sas.functions import CALL_ROUTINES, call_function
from statgrid.sas.macro.symbols import SymbolTables
from statgrid.sas.options import SasOptions
from tests.unit.sas.test_sas_functions_numeric import Program


def program(session=None):
    p = Program()
    p.session, p.symbols, p.options, p.formats = session, SymbolTables(), SasOptions(), FormatCatalog(session)
    return p


def call(p, name, *args, line=0):
    return call_function(FunctionRuntime(p, {}, line, 1), name, *args)   # a fresh rt.state per call


def test_open_attrn_attrc_close_on_a_data_set(session):
    session.write_table("work.class", pa.table({"name": ["Al", "Bo", "Cy"], "age": [11.0, 12.0, 13.0]}),
                        kv_metadata={"statgrid.label": "Students"})
    p = program(session)
    did = call(p, "OPEN", "work.class")
    assert did > 0
    assert call(p, "ATTRN", did, "NOBS") == 3 and call(p, "ATTRN", did, "nvars") == 2 and call(p, "ATTRN", did, "ANY") == 1
    assert call(p, "ATTRC", did, "MEM") == "CLASS" and call(p, "ATTRC", did, "LIB") == "WORK"
    assert call(p, "ATTRC", did, "LABEL") == "Students" and call(p, "ATTRN", did, "MODTE") > 1.9e9
    assert call(p, "VARNUM", did, "AGE") == 2 and call(p, "VARNAME", did, 1) == "name" and call(p, "VARTYPE", did, 1) == "C"
    assert call(p, "FETCH", did) == 0 and call(p, "GETVARC", did, 1) == "Al" and call(p, "GETVARN", did, 2) == 11
    assert call(p, "FETCHOBS", did, 3) == 0 and call(p, "GETVARN", did, 2) == 13 and call(p, "FETCH", did) == -1
    assert call(p, "CLOSE", did) == 0 and call(p, "CLOSE", did) != 0
    assert call(p, "OPEN", "class") > did                                   # WORK by default; a new id
    assert call(p, "OPEN", "work.nothere") == 0 and "NOTHERE" in call(p, "SYSMSG")
    assert call(p, "EXIST", "work.class") == 1 and call(p, "EXIST", "work.nothere") == 0
    assert call(p, "EXIST", "nolib.x") == 0


def test_file_functions_read_an_aggregate_stream(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("first line\nsecond\n")
    b.write_text("third x y\n")
    p = program()
    rc, (ref,) = call(p, "FILENAME", "in", str(a))
    assert rc == 0 and ref == "IN" and call(p, "FEXIST", "in") == 1 and call(p, "FILEEXIST", str(b)) == 1
    from statgrid.sas.context import Fileref
    p.filerefs["BOTH"] = Fileref("BOTH", [a, b])
    fid = call(p, "FOPEN", "both")
    lines = []
    while call(p, "FREAD", fid) == 0:
        rc, (text,) = call(p, "FGET", fid, "", 200)
        lines.append(text)
    assert lines == ["first line", "second", "third x y"] and call(p, "FCLOSE", fid) == 0
    fid = call(p, "FOPEN", "in")
    call(p, "FREAD", fid)
    words = []
    while True:
        rc, (w,) = call(p, "FGET", fid, "")
        if rc != 0:
            break
        words.append(w)
    assert words == ["first", "line"]
    rc, (gen,) = call(p, "FILENAME", "", str(tmp_path / "out.txt"))
    assert gen.startswith("#LN")
    out = call(p, "FOPEN", gen, "o")
    assert call(p, "FPUT", out, "hello") == 0 and call(p, "FWRITE", out) == 0 and call(p, "FCLOSE", out) == 0
    assert (tmp_path / "out.txt").read_text() == "hello\n"
    assert call(p, "FOPEN", "nosuch") == 0 and call(p, "FILENAME", "in", "")[0] == 0 and "IN" not in p.filerefs
    assert call(p, "PATHNAME", gen) == str(tmp_path / "out.txt")
    with pytest.raises(SasError, match="Shell escape"):
        call(p, "FILENAME", "p", "ls", "pipe")


def test_symput_symputx_symget_and_getoption():
    p = program()
    r = FunctionRuntime(p, {})
    CALL_ROUTINES["SYMPUT"].fn(r, ["x ", "abc  "])
    CALL_ROUTINES["SYMPUT"].fn(r, ["n", 42.0])
    CALL_ROUTINES["SYMPUTX"].fn(r, [" y ", "  abc  "])
    CALL_ROUTINES["SYMPUTX"].fn(r, ["m", 42.5, "G"])
    assert p.symbols.get("X") == "abc  " and p.symbols.get("N") == "          42"
    assert p.symbols.get("Y") == "abc" and p.symbols.get("M") == "42.5"
    assert call(p, "SYMGET", "x") == "abc  " and call(p, "SYMGET", "nosuch") == ""
    assert p.log.notes[-1].startswith("Invalid argument to function SYMGET")
    with pytest.raises(SasError, match="Symbolic variable name"):
        CALL_ROUTINES["SYMPUT"].fn(r, ["1bad", "v"])
    assert call(p, "GETOPTION", "obs") == "MAX" and call(p, "GETOPTION", "FULLSTIMER") == "NOFULLSTIMER"
    with pytest.raises(SasError, match="CALL SYSTEM"):
        CALL_ROUTINES["SYSTEM"].fn(r, ["ls"])


def test_put_input_through_formats_and_state_codes():
    p = program()
    p.formats.define(UserFormat("$SEX", [FormatRange("F", "F", "Female"), FormatRange("M", "M", "Male")]))
    assert call(p, "PUT", 1234.5, "COMMA10.2") == "  1,234.50" and call(p, "PUT", "F", "$SEX.") == "Female"
    assert call(p, "PUTN", 21915.0, "date9.") == "01JAN2020" and call(p, "PUTC", "M", "$sex.") == "Male  "
    assert call(p, "INPUT", "1,234", "comma5.") == 1234 and call(p, "INPUT", "01JAN2020", "date9.") == 21915
    assert call(p, "INPUT", "  ab", "$4.") == "ab" and call(p, "INPUTN", "12", "3.1") == 1.2
    p.options.set("MISSING", "-")
    assert call(p, "PUT", float("nan"), "5.") == "    -"
    v = call(p, "INPUT", "abc", "8.", line=9)
    assert v != v and p.log.notes[-1] == "Invalid argument to function INPUT at line 9 column 1."
    assert call(p, "FIPSTATE", 37) == "NC" and call(p, "FIPNAMEL", 37) == "North Carolina"
    assert call(p, "FIPNAME", 37) == "NORTH CAROLINA" and call(p, "STFIPS", "nc ") == 37
    assert call(p, "STNAMEL", "VA") == "Virginia" and call(p, "FIPSTATE", 3) == ""
