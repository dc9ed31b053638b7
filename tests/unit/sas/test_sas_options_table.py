"""SAS system options: typed values, NO-forms and aliases, GETOPTION's text, startup-only options, unknown
names, and the invocation options of `statgrid run prog.sas -sysparm … -memsize …` (values by hand from
SAS 9.4 System Options: Reference)."""
from __future__ import annotations

import io

import pytest

from statgrid.sas.errors import SasError
from statgrid.sas.invocation import invocation_for_file, parse_invocation
from statgrid.sas.options import MAX_INT, SasOptions, parse_size
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


def test_defaults_are_typed():
    o = SasOptions()
    assert o.get("obs") == MAX_INT and o.get("FIRSTOBS") == 1
    assert o.get("source") is True and o.get("MPRINT") is False
    assert o.get("LS") == 132 and o.get("pagesize") == 60 and o.get("MISSING") == "."


def test_set_booleans_values_aliases():
    o = SasOptions()
    o.set("NOSOURCE")
    o.set("fullstimer")
    o.set("ls", "100")
    o.set("obs", "max")
    o.set("bufsize", "64k")
    o.set("sortsize", "1G")
    o.set("compress", "yes")
    o.set("missing", " ")
    assert o.get("SOURCE") is False and o.get("FULLSTIMER") is True
    assert o.get("LINESIZE") == 100 and o.get("OBS") == MAX_INT
    assert o.get("BUFSIZE") == 65536 and o.get("SORTSIZE") == 1024**3
    assert o.get("COMPRESS") == "YES" and o.get("MISSING") == " "


def test_getoption_text():
    o = SasOptions()
    o.set("FULLSTIMER")
    o.set("SYSPARM", "3")
    o.set("OBS", "10")
    assert o.getoption_text("fullstimer") == "FULLSTIMER"
    assert o.getoption_text("MPRINT") == "NOMPRINT"
    assert o.getoption_text("sysparm") == "3"
    assert o.getoption_text("OBS") == "10"
    assert o.getoption_text("NOSUCH") == ""


def test_unknown_option_is_an_error_naming_it():
    with pytest.raises(SasError) as exc:
        SasOptions().set("NOSUCHOPT", None, 5, 9)
    assert "Unrecognized SAS option name NOSUCHOPT" in str(exc.value) and "line 5, column 9" in str(exc.value)


@pytest.mark.parametrize("name,value", [("LS", "20"), ("OBS", "-1"), ("COMPRESS", "maybe"), ("BUFSIZE", "lots"),
                                        ("MISSING", "ab"), ("FULLSTIMER", "1")])
def test_bad_values_are_errors(name, value):
    with pytest.raises(SasError) as exc:
        SasOptions().set(name, value)
    assert value in str(exc.value)


def test_startup_option_after_start_warns_and_keeps_its_value():
    text = io.StringIO()
    log = SasLog(SessionLog(text=text, listing=None))
    o = SasOptions(log=log)
    o.set("MEMSIZE", "1G")
    o.started = True
    o.set("MEMSIZE", "4G")
    assert o.get("MEMSIZE") == 1024**3
    assert text.getvalue() == ("WARNING: SAS option MEMSIZE is valid only at startup of the SAS System. The SAS "
                               "option is ignored.\n")


def test_accepted_without_effect():
    o = SasOptions()
    o.set("SASTRACE", ",,,d")
    o.set("SASTRACELOC", "saslog")
    o.set("NOSTSUFFIX")
    assert o.getoption_text("SASTRACE") == ",,,d" and o.getoption_text("STSUFFIX") == "NOSTSUFFIX"


def test_parse_size():
    assert parse_size("64K") == 65536 and parse_size("2g") == 2 * 1024**3 and parse_size("123") == 123
    with pytest.raises(ValueError):
        parse_size("1.5G")


def test_invocation_options():
    inv = parse_invocation(["-sysparm", "3", "-memsize", "2G", "-bufsize", "64k", "-sortsize", "1G", "-fullstimer",
                            "-autoexec", "auto.sas", "-set", "HOST", "node1", "-log", "x.log", "-print", "x.lst",
                            "-work", "/w", "-utilloc", "/u"])
    assert inv.session_options == {"memsize": "2G", "bufsize": "65536B", "sortsize": "1073741824B"}   # bytes, as SAS
    assert inv.env == {"HOST": "node1"}
    assert (inv.autoexec, inv.log_path, inv.print_path, inv.work_root, inv.util_root) == (
        "auto.sas", "x.log", "x.lst", "/w", "/u")
    o = SasOptions()
    inv.apply(o)
    assert o.get("SYSPARM") == "3" and o.get("FULLSTIMER") is True and o.get("BUFSIZE") == 65536
    assert o.get("MEMSIZE") == 2 * 1024**3
    inv2 = invocation_for_file(parse_invocation(["-autoexec", "a.sas"]), "/home/u")
    assert inv2.autoexec == "/home/u/a.sas"


@pytest.mark.parametrize("args,text", [(["-nosuch"], "'-nosuch' is not a SAS invocation option"),
                                       (["-sysparm"], "needs a value"),
                                       (["-set", "A"], "-set needs a name and a value"), (["stray"], "stray"),
                                       (["-bufsize", "lots"], "BUFSIZE")])
def test_bad_invocation_options(args, text):
    with pytest.raises(SasError) as exc:
        parse_invocation(args)
    assert text in str(exc.value)


def test_numeric_option_bounds_are_written_exactly():
    o = SasOptions()
    with pytest.raises(SasError) as exc:
        o.set("OBS", "-1")
    assert "from 0 to MAX or MAX" in str(exc.value) and "e+18" not in str(exc.value)
    with pytest.raises(SasError) as exc:
        o.set("FIRSTOBS", "0")
    assert "from 1 to MAX" in str(exc.value)
    o.set("OBS", "9223372036854775807")                        # exact, not rounded up by float()
    assert o.get("OBS") == 2**63 - 1
    o.set("FIRSTOBS", "1e3")
    assert o.get("FIRSTOBS") == 1000
    with pytest.raises(SasError, match="from 64 to 256"):
        o.set("LINESIZE", "1e400")
    with pytest.raises(SasError, match="at most 9223372036854775807 bytes"):
        o.set("SORTSIZE", "99999999999999999999T")
