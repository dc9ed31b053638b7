"""Formats and format catalogs against hostile input (a review's findings): catalog files planted or
damaged by another user, read-only libraries, widths SAS refuses, infinite values, BESTw. of tiny values,
and built-in formats that never touch the disk."""
from __future__ import annotations

import json
import math
import os
import threading

import pytest

from statgrid.sas.errors import SasError
from statgrid.sas.formats import FORMAT_DEFAULTS, _NUMERIC_WRITERS, format_value, informat_value
from statgrid.sas.formats import catalog as catmod
from statgrid.sas.formats.catalog import FormatCatalog, catalog_file, read_catalog_file
from statgrid.sas.formats.userformat import FormatRange, UserFormat
from statgrid.sas.options import SasOptions


def yn() -> UserFormat:
    return UserFormat("YN", [FormatRange(1.0, 1.0, "Yes"), FormatRange(0.0, 0.0, "No")])


# -- 1. writing never follows a link ----------------------------------------------------------------------
def test_write_does_not_follow_a_planted_temp_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    lib = tmp_path / "lib"
    lib.mkdir()
    # the name the old code wrote through: formats.fmtcat.json.tmp<pid>
    (lib / f"formats.fmtcat.json.tmp{os.getpid()}").symlink_to(victim)
    FormatCatalog().define(yn(), directory=lib)
    assert victim.read_text() == "precious"
    path = catalog_file(lib)
    assert path.is_file() and not path.is_symlink() and read_catalog_file(path)[("YN", False)].name == "YN"
    assert sorted(p.name for p in lib.iterdir() if not p.is_symlink()) == ["formats.fmtcat.json"]


def test_a_link_at_the_catalog_name_is_refused_and_its_target_untouched(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    lib = tmp_path / "lib"
    lib.mkdir()
    catalog_file(lib).symlink_to(victim)
    with pytest.raises(SasError, match="damaged.*link|link.*remove"):
        FormatCatalog().define(yn(), directory=lib)
    assert victim.read_text() == "precious"


# -- 2. reading someone else's catalog --------------------------------------------------------------------
def test_a_fifo_does_not_hang_the_job(tmp_path):
    os.mkfifo(catalog_file(tmp_path))
    result = {}

    def read():
        try:
            read_catalog_file(catalog_file(tmp_path))
        except SasError as exc:
            result["err"] = str(exc)
    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "reading a FIFO catalog hung"
    assert "damaged" in result["err"] and str(catalog_file(tmp_path)) in result["err"]


def test_a_huge_file_is_refused(tmp_path):
    with open(catalog_file(tmp_path), "wb") as fh:
        fh.truncate(catmod.MAX_CATALOG_BYTES + 1)            # sparse: no disk used
    with pytest.raises(SasError, match="damaged"):
        read_catalog_file(catalog_file(tmp_path))


@pytest.mark.parametrize("text", [
    "[1, 2]", '{"formats": [{}]}', '"fuzz"', '{"missing": "ZZZ"}', "[" * 100000 + "]" * 100000,
    '{"formats": 3}', '{"formats": [{"name": "A", "ranges": [{"start": {"missing": "ZZZ"}}]}]}',
    '{"formats": [{"name": "A", "ranges": [{"start": "x", "end": "y", "label": "t"}]}]}',
    '{"formats": [{"name": "A", "min": "wide"}]}', '{"formats": [{"name": "../../x"}]}',
    '{"formats": [{"name": "A", "ranges": [{"other": true, "label_format": "A."}]}]}',
    '{"formats": [{"name": "A", "ranges": [{"other": true, "label_format": "B."}]},'
    ' {"name": "B", "ranges": [{"other": true, "label_format": "A."}]}]}',
    "\xff\xfe",
])
def test_malformed_catalogs_are_damaged_errors(tmp_path, text):
    path = catalog_file(tmp_path)
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(SasError) as info:
        read_catalog_file(path)
    assert "damaged" in str(info.value) and str(path) in str(info.value) and "remove" in str(info.value)


def test_json_integers_match_and_widths_are_clamped(tmp_path):
    path = catalog_file(tmp_path)
    path.write_text(json.dumps({"formats": [
        {"name": "ONE", "default": 3000000000, "ranges": [{"start": 1, "end": 1, "label": "one"}]}]}))
    fmt = read_catalog_file(path)[("ONE", False)]
    cat = FormatCatalog()
    cat.load_library(tmp_path)
    assert fmt.default_width == 32767
    assert format_value(1.0, "one3.", cat) == "one"


def test_nested_formats_that_loop_are_an_error_not_a_recursion():
    cat = FormatCatalog()
    cat.define(UserFormat("LOOPA", [FormatRange(label="", other=True, label_format="LOOPB.")]))
    cat.define(UserFormat("LOOPB", [FormatRange(label="", other=True, label_format="LOOPA.")]))
    with pytest.raises(SasError, match="nested"):
        format_value(1.0, "loopa.", cat)


# -- 3. ACCESS=READONLY ---------------------------------------------------------------------------------
def test_read_only_library_refuses_format_writes(session, tmp_path):
    lib = tmp_path / "ro"
    lib.mkdir()
    session.libname("ro", lib, readonly=True)
    cat = FormatCatalog(session, SasOptions())
    with pytest.raises(SasError, match=r"Write access to member RO\.FORMATS\.CATALOG is denied"):
        cat.define(yn(), "RO")
    with pytest.raises(SasError, match=r"Write access to member RO\.MINE\.CATALOG is denied"):
        cat.delete("YN", library="RO", catalog="MINE")
    assert not catalog_file(lib).exists() and cat.get("YN") is None


# -- 4. widths ------------------------------------------------------------------------------------------
def test_character_and_user_format_widths_are_checked():
    cat = FormatCatalog()
    cat.define(yn())
    with pytest.raises(SasError, match=r"Width specified for format \$ is invalid"):
        format_value("abc", "$300000000.", cat)
    with pytest.raises(SasError, match=r"Width specified for format \$CHAR is invalid"):
        format_value("abc", "$char40000.", cat)
    with pytest.raises(SasError, match="Width specified for format YN is invalid"):
        format_value(1.0, "yn300000000.", cat)
    assert format_value("abc", "$32767.", cat) == "abc" + " " * 32764


# -- 5. infinity and huge values never raise in a format ---------------------------------------------------
@pytest.mark.parametrize("value", [math.inf, -math.inf, 1e308, -1e308, 1e-308])
def test_formats_never_raise_on_extreme_values(value):
    for name, (dflt, lo, hi) in FORMAT_DEFAULTS.items():
        if name not in _NUMERIC_WRITERS:
            continue
        for w in sorted({lo, dflt, hi}):
            for d in ("", "2", "31"):
                text = format_value(value, f"{name}{w}.{d}")
                assert len(text) == w, (name, w, d, text)


def test_decimals_beyond_31_do_not_build_huge_strings():
    assert format_value(1.5, "8.3000000000") == "     1.5"


def test_informat_reading_beyond_the_largest_double_is_invalid_data():
    from statgrid.sas.formats import InvalidData
    with pytest.raises(InvalidData):
        informat_value("1e400", "best32.")
    with pytest.raises(InvalidData):
        informat_value("-1e999", "comma32.")


# -- 8. built-in formats never touch the disk; catalog stats are cached ------------------------------------
def test_builtin_formats_never_look_in_catalogs(session, tmp_path, monkeypatch):
    session.libname("library", tmp_path)
    cat = FormatCatalog(session, SasOptions())
    calls = []
    real = cat._file_formats
    monkeypatch.setattr(cat, "_file_formats", lambda p: calls.append(p) or real(p))
    for spec in ("COMMA10.2", "best12.", "date9.", "$char8.", "8.2"):
        format_value(1234.5 if not spec.startswith("$") else "ab", spec, cat)
    informat_value("1,234", "comma8.", cat)
    assert calls == []
    with pytest.raises(SasError, match="name of a SAS format"):
        cat.define(UserFormat("COMMA", [FormatRange(1.0, 1.0, "x")]))


def test_catalog_file_stat_is_cached_until_a_change(session, tmp_path, monkeypatch):
    session.libname("library", tmp_path)
    cat = FormatCatalog(session, SasOptions())
    cat.define(yn(), "LIBRARY")
    stats = []
    real_stat = os.stat
    monkeypatch.setattr(catmod.os, "stat", lambda p, *a, **k: stats.append(p) or real_stat(p, *a, **k))
    for _ in range(50):
        assert format_value(1.0, "yn.", cat) == "Yes"
    assert len(stats) <= 2                     # WORK's and LIBRARY's catalog, once each
    gen = cat.generation
    cat.define(UserFormat("YN", [FormatRange(1.0, 1.0, "Oui")]), "LIBRARY")
    assert cat.generation > gen and format_value(1.0, "yn.", cat) == "Oui"


# -- 9. BESTw. of tiny values --------------------------------------------------------------------------
def test_best_writes_tiny_values_as_zero_when_e_notation_does_not_fit():
    assert format_value(-1e-20, "best4.") == "   0"
    assert format_value(1e-20, "best3.") == "  0"
    assert format_value(1e-20, "best6.") == " 1E-20"              # E notation when it fits
    assert format_value(1e20, "best3.") == "***"                  # a large value still does not fit
