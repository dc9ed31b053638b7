"""An omitted function argument (`compress(s, , 'kd')`, SAS Functions Reference, COMPRESS: "If you omit the
second argument…") and the TODw.d format (time of day with a leading zero; a datetime's time part). By hand."""
from __future__ import annotations

import pytest

from statgrid.sas.formats.dates import tod
from tests.unit.sas.standins import run_sas


def test_compress_with_the_characters_omitted_uses_the_modifiers_only(session):
    code, log, _ = run_sas(session, """data a;
  k = compress('a1 b2-c3', , 'kd');
  d = compress('a1 b2', , 'd');
run;""")
    assert code == 0, log
    row = session.fetch_arrow("SELECT * FROM " + session.ref("work.a").scan_sql()).to_pylist()[0]
    assert row["k"].rstrip() == "123" and row["d"].rstrip() == "a b"


@pytest.mark.parametrize("value, w, d, text", [
    (3661, 8, 0, "01:01:01"), (90061, 8, 0, "01:01:01"), (45296.5, 11, 2, "12:34:56.50"), (3661, 5, 0, "01:01")])
def test_tod(value, w, d, text):
    assert tod(value, w, d).strip() == text


def test_hex_format_prints_a_digest_and_pads_with_blanks(session):
    """$HEXw. (Formats and Informats: $HEX): two hex digits per byte, blanks (20) after the value. The MD5 of
    'abc' is RFC 1321's test vector 900150983CD24FB0D6963F7D28E17F72."""
    code, log, _ = run_sas(session, "data a; x = put(md5('abc'), $hex32.); y = put('AB', $hex8.); run;")
    assert code == 0, log
    row = session.fetch_arrow("SELECT * FROM " + session.ref("work.a").scan_sql()).to_pylist()[0]
    assert row["x"] == "900150983CD24FB0D6963F7D28E17F72" and row["y"] == "41422020"
