"""A user format or informat as PROC FORMAT defines it (SAS 9.4 Base Procedures, PROC FORMAT): its ranges
(`low-<10`, `10-20`, `'a','b'`, LOW, HIGH, OTHER, exclusive ends), labels (text; a format in brackets
`[date9.]`; for an informat a number, `_SAME_` or `_ERROR_`; for a PICTURE the picture and its
PictureOptions), default width, FUZZ=, UPCASE and JUST, ROUND and MULTILABEL (labels() gives every label), and
how a value is looked up in it; and its JSON form, read back with every field checked (a catalog file
may come from another user: catalog.py reads the file, this module the definition).
"""
from __future__ import annotations

import math
import re
from bisect import bisect_right
import threading
from dataclasses import dataclass, field
from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.formats.numeric import InvalidData, best, missing_text, stars
from statgrid.sas.formats.picture import DATATYPES, fill_datetime, fill_number
from statgrid.sas.values import MISSING, num_key, pad, special_missing

MAX_WIDTH = 32767                         # SAS's widths run from 1 to 32767
MAX_NESTING = 16                          # nested formats ([fmt.] labels) deeper than this are a loop
_nesting = threading.local()


class _Nested:
    """Counts nested-format depth: a format whose labels lead back to itself is an ERROR naming it,
    not a RecursionError."""

    def __init__(self, fmt: "UserFormat", label: str):
        self.fmt, self.label = fmt, label

    def __enter__(self):
        depth = getattr(_nesting, "depth", 0)
        if depth >= MAX_NESTING:
            raise SasError(f"The format {self.fmt.name} refers to itself through nested formats ([{self.label}])",
                           0, 0, self.label, "nested formats that end in a SAS format; define the format again")
        _nesting.depth = depth + 1

    def __exit__(self, *exc):
        _nesting.depth -= 1


@dataclass
class PictureOptions:
    """The options of one PICTURE range (SAS 9.4 Base Procedures, PROC FORMAT PICTURE statement): PREFIX=
    (text put before the first printed character), FILL= (the character of the picture's unfilled leading
    positions, blank by default), MULT= (None: 10**n, n = digit selectors after the decimal point), NOEDIT
    (the picture is a message, digits and all), DATATYPE= ('' for numbers, DATE, TIME or DATETIME: the
    picture holds directives such as %Y)."""
    prefix: str = ""
    fill: str = " "
    mult: float | None = None
    noedit: bool = False
    datatype: str = ""

    def to_json(self) -> dict:
        return {"prefix": self.prefix, "fill": self.fill, "mult": self.mult, "noedit": self.noedit,
                "datatype": self.datatype}

    @classmethod
    def from_json(cls, d: Any) -> "PictureOptions":
        want_field(isinstance(d, dict), "a picture's options are not an object")
        prefix, fill, mult, dtype = d.get("prefix", ""), d.get("fill", " "), d.get("mult"), d.get("datatype", "")
        want_field(isinstance(prefix, str) and len(prefix) <= 4, "a picture's prefix is not text of up to 4 characters")
        want_field(isinstance(fill, str) and len(fill) == 1, "a picture's fill is not one character")
        want_field(dtype in ("",) + DATATYPES, f"a picture's datatype {dtype!r} is not DATE, TIME or DATETIME")
        return cls(prefix, fill, None if mult is None else _number(mult, "a picture's mult"),
                   _flag(d, "noedit"), dtype)


@dataclass
class FormatRange:
    """One `start-end = label` of a VALUE or INVALUE. start/end: float (numeric format), str (character
    format, and the input side of every INVALUE), None with low/high set for LOW/HIGH. `label`: str for
    a format, float (or '_SAME_'/'_ERROR_') for a numeric informat. `label_format`: the format text of a
    bracketed label ('DATE9.')."""
    start: Any = None
    end: Any = None
    label: Any = ""
    start_excl: bool = False
    end_excl: bool = False
    low: bool = False
    high: bool = False
    other: bool = False
    label_format: str | None = None
    pic: PictureOptions | None = None     # a PICTURE range's options (its picture is `label`)

    def to_json(self) -> dict:
        def enc(v):
            if isinstance(v, float) and v != v:
                return {"missing": getattr(v, "code", ".")}
            return v
        d = {"start": enc(self.start), "end": enc(self.end), "label": enc(self.label),
             "start_excl": self.start_excl, "end_excl": self.end_excl, "low": self.low, "high": self.high,
             "other": self.other, "label_format": self.label_format}
        if self.pic is not None:
            d["picture"] = self.pic.to_json()
        return d

    @classmethod
    def from_json(cls, d: dict) -> "FormatRange":
        def dec(v):
            if isinstance(v, dict) and "missing" in v:
                code = v["missing"]
                return MISSING if code == "." else special_missing(code)
            return float(v) if isinstance(v, int) and not isinstance(v, bool) else v
        pic = d.get("picture")
        return cls(dec(d.get("start")), dec(d.get("end")), dec(d.get("label", "")), d.get("start_excl", False),
                   d.get("end_excl", False), d.get("low", False), d.get("high", False), d.get("other", False),
                   d.get("label_format"), None if pic is None else PictureOptions.from_json(pic))


@dataclass
class UserFormat:
    """A format (`informat=False`) or informat from PROC FORMAT. name: upper case, '$' first for a
    character one. For an informat, `char` means the result is character ($ informat)."""
    name: str
    ranges: list[FormatRange] = field(default_factory=list)
    informat: bool = False
    default: int | None = None          # DEFAULT=
    min_width: int = 1
    max_width: int = 40
    fuzz: float = 1e-12
    upcase: bool = False                # INVALUE (UPCASE)
    just: bool = False                  # INVALUE (JUST): left-align the input first
    notsorted: bool = False
    picture: bool = False               # a PICTURE format: each range's label is its picture
    round: bool = False                 # PICTURE (ROUND): round, not truncate, the multiplied value
    multilabel: bool = False            # MULTILABEL: ranges may overlap; MLF groups take every label
    # lookup caches, rebuilt when the ranges list (or FUZZ=) changes: (key, numeric index, OTHER, width)
    _cache: Any = field(default=None, init=False, repr=False, compare=False)

    @property
    def char(self) -> bool:
        return self.name.startswith("$")

    def _cached(self) -> tuple:
        key = (id(self.ranges), len(self.ranges), self.fuzz, self.default, self.max_width, self.informat)
        c = self._cache
        if c is None or c[0] != key:
            other = next((r for r in self.ranges if r.other), None)
            c = self._cache = (key, self._numeric_index(), other, self._default_width())
        return c

    def _numeric_index(self):
        """(range starts less FUZZ, ranges) sorted by start, for a binary search, when the numeric ranges
        do not overlap (then at most one contains a value: list order cannot matter); None otherwise (and
        for small formats, character formats, ranges of special missing values mixed with LOW/HIGH), where
        match() scans the ranges in order as before."""
        if len(self.ranges) < 8:
            return None
        items = []
        for r in self.ranges:
            if r.other:
                continue
            s = r.start
            e = r.end if r.end is not None else r.start
            if not (r.low or r.high) and isinstance(s, float) and s != s:
                continue                             # a missing-value range: only missing values match it
            lo = -math.inf if r.low else s
            hi = math.inf if r.high else e
            if not isinstance(lo, float) or not isinstance(hi, float) or lo != lo or hi != hi:
                return None
            items.append((lo, hi, r))
        items.sort(key=lambda t: (t[0], t[1]))
        f = self.fuzz
        for a, b in zip(items, items[1:]):
            if a[1] + f < b[0] - f:
                continue
            if a[1] == b[0] and (a[2].end_excl or b[2].start_excl) and a[0] <= a[1]:
                continue
            return None                               # overlapping (or too close for FUZZ=): scan
        return [t[0] - f for t in items], [t[2] for t in items]

    @property
    def default_width(self) -> int:
        return self._cached()[3]

    def _default_width(self) -> int:
        if self.default:
            return self.default
        widths = [len(str(r.label)) for r in self.ranges if not r.label_format and isinstance(r.label, str)]
        for r in self.ranges:               # a [date9.] label: that format's width (SAS: 9, not 'Old''s 3)
            if r.label_format:
                try:
                    from statgrid.sas.formats import format_width
                    widths.append(format_width(r.label_format.strip("[]() ")))
                except Exception:  # noqa: BLE001 - a user format as the label: its width is not known here
                    pass
        w = max(widths, default=1)
        if self.informat or self.char:
            return max(1, min(w, self.max_width))
        return max(1, min(max(w, 1), self.max_width))

    # -- matching ----------------------------------------------------------------------------------
    def _contains(self, r: FormatRange, v: Any, numeric: bool) -> bool:
        if r.other:
            return False
        if numeric:
            if v != v:                               # missing: only an explicit . or .A range matches
                if r.low or r.high:
                    return False
                return (isinstance(r.start, float) and r.start != r.start
                        and num_key(r.start) == num_key(v))
            if not r.low:
                s = r.start
                if not isinstance(s, float) or s != s:
                    return False
                if (v < s - self.fuzz) or (r.start_excl and abs(v - s) <= self.fuzz):
                    return False
            if not r.high:
                e = r.end if r.end is not None else r.start
                if not isinstance(e, float) or e != e:
                    return False
                if (v > e + self.fuzz) or (r.end_excl and abs(v - e) <= self.fuzz):
                    return False
            return True
        key = v.rstrip(" ")
        if not r.low:
            s = str(r.start).rstrip(" ")
            if key < s or (r.start_excl and key == s):
                return False
        if not r.high:
            e = str(r.end if r.end is not None else r.start).rstrip(" ")
            if key > e or (r.end_excl and key == e):
                return False
        return True

    def match(self, v: Any) -> FormatRange | None:
        """The range `v` falls in (the first that contains it, then OTHER), or None."""
        numeric = not isinstance(v, str)
        if numeric and v is None:
            v = MISSING
        _, index, other, _ = self._cached()
        if numeric and index is not None and v == v:
            starts, rs = index
            k = bisect_right(starts, v) - 1
            for j in (k, k - 1):                     # k-1: a value within FUZZ= of an exclusive start
                if j >= 0 and self._contains(rs[j], v, True):
                    return rs[j]
            return other
        for r in self.ranges:
            if self._contains(r, v, numeric):
                return r
        for r in self.ranges:
            if r.other:
                return r
        return None

    # -- use ---------------------------------------------------------------------------------------
    def format(self, value: Any, width: int | None = None, catalog: Any = None, missing: str = ".") -> str:
        """The label of `value`, in `width` (default width if None) characters: a VALUE label left-aligned, a
        filled PICTURE right-aligned (SAS writes pictures as numbers)."""
        w = width or self.default_width
        value = self._as_value(value)
        return self._write(value, self.match(value), w, width is None, catalog, missing)

    def labels(self, value: Any, catalog: Any = None, missing: str = ".") -> list[str]:
        """Every label of `value` under MULTILABEL, stripped, in the format's range order without repeats (the
        groups a CLASS variable with MLF puts the value in); the one label of format() when none of the
        ranges is found (OTHER, or the value written with BEST.)."""
        value = self._as_value(value)
        numeric = not isinstance(value, str)
        if numeric and value is None:
            value = MISSING
        found = [r for r in self.ranges if self._contains(r, value, numeric)]
        if not found:
            return [self.format(value, None, catalog, missing).strip()]
        out: list[str] = []
        for r in found:
            text = self._write(value, r, self.default_width, True, catalog, missing).strip()
            if text not in out:
                out.append(text)
        return out

    def _as_value(self, value: Any) -> Any:
        if isinstance(value, str) and not self.char:
            try:                                             # SAS converts, as for any numeric format
                return float(value) if value.strip() else MISSING
            except ValueError:
                return MISSING
        return value

    def _write(self, value: Any, r: FormatRange | None, w: int, default: bool, catalog: Any, missing: str) -> str:
        if r is None:
            if isinstance(value, str):
                return pad(value, w)
            if value != value:
                return missing_text(value, missing).rjust(w)
            return best(float(value), w)
        if r.label_format:
            from statgrid.sas.formats import format_value, parse_spec
            spec = parse_spec(r.label_format)
            with _Nested(self, r.label_format):
                text = format_value(value, spec, catalog, missing)
            return pad(text.strip() if default else text, w)
        if r.pic is not None:
            if not isinstance(value, str) and value != value and not r.pic.noedit and (
                    r.pic.datatype or any(ch.isdigit() for ch in str(r.label))):
                return missing_text(value, missing).rjust(w)     # nothing to select: the MISSING= character
            return self._picture(value, r, w)
        return pad(str(r.label), w)

    def _picture(self, value: Any, r: FormatRange, w: int) -> str:
        """A PICTURE range's text for `value` (statgrid/sas/formats/picture.py), right-aligned in w: a number
        too wide loses its leftmost characters (its prefix first, as SAS's log shows), a date or a message its
        rightmost."""
        o, pic = r.pic, str(r.label)
        if o.noedit or isinstance(value, str) or value != value or not any(ch.isdigit() for ch in pic) \
                and not o.datatype:
            return pic[:w].rjust(w)
        if o.datatype:
            try:
                text = fill_datetime(float(value), pic, o.datatype)
            except (ValueError, OverflowError):
                return stars(w)
            return text[:w].rjust(w)
        text = fill_number(float(value), pic, o.mult, o.prefix, o.fill, self.round)
        return text[-w:].rjust(w)

    def read(self, text: str, catalog: Any = None) -> Any:
        """INVALUE: `text` → the label of its range (a number, or text for a $ informat); `_SAME_`
        reads the text as is (w.d / $w.), `_ERROR_` or no match → InvalidData for a numeric informat
        whose text is not a number."""
        t = text.strip() if self.just else text.rstrip(" ")
        if self.just:
            t = t.lstrip(" ")
        if self.upcase:
            t = t.upper()
        r = self.match(t)
        if r is None or r.label == "_SAME_":
            if self.char:
                return t.lstrip(" ")
            from statgrid.sas.formats.numeric import read_number
            return read_number(t)
        if r.label == "_ERROR_":
            raise InvalidData(text)
        if r.label_format:
            from statgrid.sas.formats import informat_value, parse_spec
            with _Nested(self, r.label_format):
                return informat_value(t, parse_spec(r.label_format), catalog, whole=True)
        if self.char:
            return str(r.label)
        lab = r.label
        if isinstance(lab, str):
            from statgrid.sas.formats.numeric import read_number
            return read_number(lab)
        return float(lab)

    # -- storage -----------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"name": self.name, "informat": self.informat, "default": self.default, "min": self.min_width,
                "max": self.max_width, "fuzz": self.fuzz, "upcase": self.upcase, "just": self.just,
                "notsorted": self.notsorted, "picture": self.picture, "round": self.round,
                "multilabel": self.multilabel, "ranges": [r.to_json() for r in self.ranges]}

    @classmethod
    def from_json(cls, d: dict) -> "UserFormat":
        """A format from its JSON (checked: a malformed entry is SasError, never a crash)."""
        try:
            return format_from_json(d)
        except Damaged as exc:
            raise SasError(f"A format entry is damaged ({exc})", 0, 0, "", "a format written by statgrid") from None

    def sort_ranges(self) -> None:
        """SAS stores ranges in order of their start (unless NOTSORTED), OTHER last."""
        if self.notsorted:
            return
        numeric = not self.char and not self.informat

        def key(r: FormatRange):
            if r.other:
                return (2, (0, 0.0) if numeric else "")
            if r.low:
                return (0, (-1, 0.0) if numeric else "")
            if numeric:
                return (1, num_key(r.start if isinstance(r.start, float) else MISSING))
            return (1, str(r.start))
        self.ranges.sort(key=key)


def format_key(name: str, informat: bool) -> tuple[str, bool]:
    return (name.upper(), bool(informat))


class Damaged(ValueError):
    """What is wrong with a catalog file (read_catalog_file turns it into SasError)."""


_NAME_RE = re.compile(r"^\$?[A-Za-z_][A-Za-z0-9_]{0,31}$")
_MISSING_CODES = frozenset(".ABCDEFGHIJKLMNOPQRSTUVWXYZ_")


def want_field(cond: bool, what: str) -> None:
    if not cond:
        raise Damaged(what)


def _flag(d: dict, key: str, default: bool = False) -> bool:
    v = d.get(key, default)
    want_field(isinstance(v, bool), f"{key!r} is not true or false")
    return v


def _number(v: Any, what: str) -> float:
    want_field(isinstance(v, (int, float)) and not isinstance(v, bool), f"{what} is not a number")
    x = float(v)
    want_field(not math.isinf(x), f"{what} is not a finite number")
    return x


def _width(v: Any, what: str, default: int | None) -> int | None:
    if v is None:
        return default
    w = _number(v, what)
    want_field(w == int(w), f"{what} is not a whole number")
    return max(1, min(int(w), MAX_WIDTH))


def _value(v: Any, what: str, numeric: bool) -> Any:
    """A range end or label from JSON: None, text, a number (JSON 1 is 1.0) or {"missing": code}."""
    if v is None:
        return None
    if isinstance(v, dict):
        code = v.get("missing")
        want_field(set(v) == {"missing"} and isinstance(code, str) and code.upper() in _MISSING_CODES,
              f"{what} is not a missing value such as {{\"missing\": \".\"}}")
        return MISSING if code == "." else special_missing(code.upper())
    if isinstance(v, str):
        want_field(len(v) <= MAX_WIDTH, f"{what} is longer than 32767 characters")
        return v
    x = _number(v, what)
    return x


def format_from_json(d: Any) -> UserFormat:
    from statgrid.sas.formats import parse_spec

    want_field(isinstance(d, dict), "a format entry is not an object")
    name = d.get("name")
    want_field(isinstance(name, str) and bool(_NAME_RE.match(name)), f"format name {name!r} is not a format name")
    informat = _flag(d, "informat")
    char = name.startswith("$")
    numeric = not char and not informat
    ranges = d.get("ranges", [])
    want_field(isinstance(ranges, list), f"format {name}: 'ranges' is not a list")
    out = []
    for i, r in enumerate(ranges):
        where = f"format {name}, range {i + 1}"
        want_field(isinstance(r, dict), f"{where} is not an object")
        start = _value(r.get("start"), f"{where}: start", numeric)
        end = _value(r.get("end"), f"{where}: end", numeric)
        label = _value(r.get("label", ""), f"{where}: label", numeric)
        label = "" if label is None else label
        if numeric:
            for v in (start, end):
                want_field(v is None or isinstance(v, float), f"{where}: a numeric format's range holds text")
        lf = r.get("label_format")
        if lf is not None:
            want_field(isinstance(lf, str), f"{where}: label_format is not text")
            try:
                parse_spec(lf)
            except SasError:
                raise Damaged(f"{where}: label_format {lf!r} is not a format") from None
        pic = r.get("picture")
        if pic is not None:
            want_field(not char and not informat and isinstance(label, str),
                       f"{where}: a picture is given for a format that is not a numeric PICTURE")
            pic = PictureOptions.from_json(pic)
        out.append(FormatRange(start, end, label, _flag(r, "start_excl"), _flag(r, "end_excl"), _flag(r, "low"),
                               _flag(r, "high"), _flag(r, "other"), lf, pic))
    fuzz = d.get("fuzz", 1e-12)
    fuzz = 1e-12 if fuzz is None else _number(fuzz, f"format {name}: fuzz")
    min_w = _width(d.get("min", 1), f"format {name}: min", 1)
    max_w = _width(d.get("max", 40), f"format {name}: max", 40)
    fmt = UserFormat(name.upper(), out, informat, _width(d.get("default"), f"format {name}: default", None),
                     min_w, max(max_w, min_w), abs(fuzz), _flag(d, "upcase"), _flag(d, "just"), _flag(d, "notsorted"),
                     _flag(d, "picture"), _flag(d, "round"), _flag(d, "multilabel"))
    want_field(not fmt.picture or (numeric and all(r.pic is not None or r.label_format for r in out)),
               f"format {name}: a PICTURE format's ranges have no picture options")
    return fmt


def nested_loop(defs: dict[tuple[str, bool], UserFormat]) -> str | None:
    """The name of a format whose bracketed labels lead back to itself within `defs`, or None."""
    from statgrid.sas.formats import parse_spec

    def refs(f: UserFormat) -> list[tuple[str, bool]]:
        out = []
        for r in f.ranges:
            if r.label_format:
                sp = parse_spec(r.label_format)
                if sp.name:
                    out.append(format_key(("$" if sp.char else "") + sp.name, f.informat))
        return out
    state: dict[tuple[str, bool], int] = {}
    for start in defs:
        if state.get(start):
            continue
        stack = [(start, iter(refs(defs[start])))]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                continue
            if nxt not in defs:
                continue
            if state.get(nxt) == 1:
                return nxt[0]
            if not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(refs(defs[nxt]))))
    return None
