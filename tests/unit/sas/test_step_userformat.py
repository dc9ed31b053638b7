"""UserFormat lookup (issue 26, performance): a format of many non-overlapping numeric ranges (CNTLIN=)
is searched by bisection, with the same answers as the in-order scan SAS's rules describe (first range
that contains the value, then OTHER); overlapping ranges keep the scan."""
from __future__ import annotations

import random

from statgrid.sas.formats.userformat import FormatRange, UserFormat
from statgrid.sas.values import MISSING


def scan(fmt: UserFormat, v):
    """The documented rule, written plainly: the first range containing v, else OTHER."""
    for r in fmt.ranges:
        if fmt._contains(r, v, True):
            return r
    return next((r for r in fmt.ranges if r.other), None)


def big_format(n=1000, other=True) -> UserFormat:
    ranges = [FormatRange(float(i * 10), float(i * 10 + 10), f"L{i}", end_excl=True) for i in range(n)]
    ranges.reverse()                                  # CNTLIN order need not be sorted
    ranges.append(FormatRange(MISSING, MISSING, "miss"))
    ranges.append(FormatRange(None, -100.0, "low", low=True))
    if other:
        ranges.append(FormatRange(label="other", other=True))
    return UserFormat("BIG", ranges)


def test_bisection_agrees_with_the_scan():
    fmt = big_format()
    rnd = random.Random(5)
    values = [-1e9, -100.0, -100.0 + 1e-13, -99.5, -0.0, 0.0, 10.0, 10.0 - 1e-13, 9.999, 9995.0, 10000.0,
              10000.0 - 1e-13, 1e12, MISSING]
    values += [rnd.uniform(-200, 10100) for _ in range(500)] + [float(rnd.randrange(0, 10000)) for _ in range(200)]
    for v in values:
        assert fmt.match(v) is scan(fmt, v), v


def test_lookup_does_not_scan_every_range(monkeypatch):
    fmt = big_format()
    calls = []
    orig = UserFormat._contains
    monkeypatch.setattr(UserFormat, "_contains", lambda self, r, v, n: calls.append(1) or orig(self, r, v, n))
    for v in (5.0, 5005.0, 9995.0, 123456.0):
        calls.clear()
        fmt.match(v)
        assert len(calls) <= 2, (v, len(calls))
    assert fmt.format(5005.0).strip() == "L500"


def test_overlapping_ranges_keep_the_first_match():
    ranges = [FormatRange(float(i), float(i + 5), f"A{i}") for i in range(20)]   # each overlaps the next
    fmt = UserFormat("OV", ranges)
    for v in (0.0, 3.0, 4.5, 19.0, 24.0, 30.0):
        assert fmt.match(v) is scan(fmt, v)
    assert fmt.match(4.5).label == "A0"


def test_default_width_is_cached_and_follows_new_ranges():
    fmt = big_format(10, other=False)
    assert fmt.default_width == 4                       # the longest label: 'miss'
    fmt.ranges.append(FormatRange(5000.0, 6000.0, "a much longer label"))
    assert fmt.default_width == len("a much longer label")
