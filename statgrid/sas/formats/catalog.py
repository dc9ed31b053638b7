"""User formats and informats (PROC FORMAT VALUE / INVALUE, CNTLIN=) and where they are kept.

A `UserFormat` is SAS's: a name ('$' for character), ranges (`low-<10`, `10-20`, `'a','b'`, LOW, HIGH,
OTHER, exclusive ends `<`), labels (text; a format in brackets `[date9.]`; for an informat a number,
`_SAME_` or `_ERROR_`), a default width (DEFAULT=, else the longest label), FUZZ= and, for informats,
UPCASE and JUST. Lookup follows SAS 9.4 Base Procedures (PROC FORMAT): the first range that contains
the value; LOW does not include missing values for numeric formats, OTHER catches everything else; an
unmatched number is written with BESTw., an unmatched character value as itself.

`FormatCatalog` keeps formats by library and catalog (FORMATS by default) and finds them in FMTSEARCH=
order: WORK.FORMATS, LIBRARY.FORMATS, then the option's list (SAS searches WORK and LIBRARY first
unless the list names them). Each catalog is saved as one JSON file in its library's directory,
`<catalog>.fmtcat.json` (statgrid's own format, not SAS's .sas7bcat), so a later program that assigns
the library finds the formats. `formats_from_cntlin(rows)` turns CNTLIN= data (FMTNAME START END
LABEL TYPE HLO SEXCL EEXCL DEFAULT LENGTH MIN MAX FUZZ) into definitions; `cntlout_rows` the reverse;
`import_sas7bcat` reads a SAS catalog through pyreadstat (value labels only) into the same catalog.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from statgrid.sas.errors import SasError
from statgrid.sas.formats.numeric import InvalidData, best, missing_text
from statgrid.sas.values import MISSING, num_key, pad, special_missing

CATALOG_SUFFIX = ".fmtcat.json"
DEFAULT_CATALOG = "FORMATS"


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

    def to_json(self) -> dict:
        def enc(v):
            if isinstance(v, float) and v != v:
                return {"missing": getattr(v, "code", ".")}
            return v
        return {"start": enc(self.start), "end": enc(self.end), "label": enc(self.label),
                "start_excl": self.start_excl, "end_excl": self.end_excl, "low": self.low, "high": self.high,
                "other": self.other, "label_format": self.label_format}

    @classmethod
    def from_json(cls, d: dict) -> "FormatRange":
        def dec(v):
            if isinstance(v, dict) and "missing" in v:
                return special_missing(v["missing"])
            return v
        return cls(dec(d.get("start")), dec(d.get("end")), dec(d.get("label", "")), d.get("start_excl", False),
                   d.get("end_excl", False), d.get("low", False), d.get("high", False), d.get("other", False),
                   d.get("label_format"))


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

    @property
    def char(self) -> bool:
        return self.name.startswith("$")

    @property
    def default_width(self) -> int:
        if self.default:
            return self.default
        widths = [len(str(r.label)) for r in self.ranges if not r.label_format and isinstance(r.label, str)]
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
        for r in self.ranges:
            if self._contains(r, v, numeric):
                return r
        for r in self.ranges:
            if r.other:
                return r
        return None

    # -- use ---------------------------------------------------------------------------------------
    def format(self, value: Any, width: int | None = None, catalog: Any = None, missing: str = ".") -> str:
        """The label of `value`, in `width` (default width if None) characters, left-aligned."""
        w = width or self.default_width
        if isinstance(value, str) and not self.char:
            try:                                             # SAS converts, as for any numeric format
                value = float(value) if value.strip() else MISSING
            except ValueError:
                value = MISSING
        r = self.match(value)
        if r is None:
            if isinstance(value, str):
                return pad(value, w)
            if value != value:
                return missing_text(value, missing).rjust(w)
            return best(float(value), w)
        if r.label_format:
            from statgrid.sas.formats import format_value, parse_spec
            spec = parse_spec(r.label_format)
            text = format_value(value, spec, catalog, missing)
            return pad(text.strip() if width is None else text, w) if width is None else pad(text, w)
        return pad(str(r.label), w)

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
                "notsorted": self.notsorted, "ranges": [r.to_json() for r in self.ranges]}

    @classmethod
    def from_json(cls, d: dict) -> "UserFormat":
        return cls(d["name"], [FormatRange.from_json(r) for r in d.get("ranges", [])], d.get("informat", False),
                   d.get("default"), d.get("min", 1), d.get("max", 40), d.get("fuzz", 1e-12),
                   d.get("upcase", False), d.get("just", False), d.get("notsorted", False))

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


def _key(name: str, informat: bool) -> tuple[str, bool]:
    return (name.upper(), bool(informat))


def catalog_file(directory: str | os.PathLike, catalog: str = DEFAULT_CATALOG) -> Path:
    return Path(directory) / (catalog.lower() + CATALOG_SUFFIX)


def read_catalog_file(path: str | os.PathLike) -> dict[tuple[str, bool], UserFormat]:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise SasError(f"Format catalog {p} cannot be read ({exc}); delete it or define its formats again") from None
    out = {}
    for d in data.get("formats", []):
        f = UserFormat.from_json(d)
        out[_key(f.name, f.informat)] = f
    return out


def write_catalog_file(path: str | os.PathLike, formats: Iterable[UserFormat]) -> None:
    """Atomic: a reader never sees half a catalog."""
    p = Path(path)
    tmp = p.with_name(p.name + f".tmp{os.getpid()}")
    data = {"statgrid_format_catalog": 1,
            "formats": [f.to_json() for f in sorted(formats, key=lambda f: (f.name, f.informat))]}
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, p)


def parse_fmtsearch(text: str) -> list[tuple[str, str]]:
    """FMTSEARCH=(WORK LIBRARY mylib mylib.cat2) → [(libref, catalog)], WORK and LIBRARY first unless
    the list names them (SAS 9.4 System Options, FMTSEARCH=)."""
    items = str(text or "").replace("(", " ").replace(")", " ").split()
    out = []
    for it in items:
        lib, _, cat = it.partition(".")
        out.append((lib.upper(), (cat or DEFAULT_CATALOG).upper()))
    libs = [lib for lib, _ in out]
    head = [(x, DEFAULT_CATALOG) for x in ("WORK", "LIBRARY") if x not in libs]
    return head + out


class FormatCatalog:
    """The program's user formats. `session` (statgrid Session, optional) maps librefs to directories so
    catalogs are saved and found in libraries; `options` (SasOptions, optional) gives FMTSEARCH=.
    Without a session formats live in memory only (and in any directory given to `define`/`load_library`)."""

    def __init__(self, session: Any = None, options: Any = None):
        self.session, self.options = session, options
        self._mem: dict[tuple[str, str], dict[tuple[str, bool], UserFormat]] = {}
        self._files: dict[Path, tuple[float, dict]] = {}

    # -- where ---------------------------------------------------------------------------------------
    def _lib_dir(self, libref: str) -> Path | None:
        s = self.session
        libs = (getattr(s, "libraries", None) or getattr(s, "libs", None)) if s is not None else None
        if libs is None or libref.lower() not in libs:
            return None
        return Path(libs.get(libref.lower()).path)

    def _search_order(self) -> list[tuple[str, str]]:
        text = "(WORK LIBRARY)"
        if self.options is not None:
            try:
                text = self.options.get("FMTSEARCH")
            except (KeyError, AttributeError):
                pass
        return parse_fmtsearch(text)

    def _file_formats(self, path: Path) -> dict:
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            return {}
        cached = self._files.get(path)
        if cached and cached[0] == mtime:
            return cached[1]
        defs = read_catalog_file(path)
        self._files[path] = (mtime, defs)
        return defs

    # -- public --------------------------------------------------------------------------------------
    def define(self, fmt: UserFormat, library: str = "WORK", catalog: str = DEFAULT_CATALOG,
               directory: str | os.PathLike | None = None) -> None:
        """Add or replace `fmt` in LIBRARY.CATALOG (PROC FORMAT LIBRARY=lib[.cat]); saved to the library's
        directory (given, or the session's libref) so later programs find it."""
        fmt.sort_ranges()
        where = (library.upper(), catalog.upper())
        self._mem.setdefault(where, {})[_key(fmt.name, fmt.informat)] = fmt
        d = Path(directory) if directory is not None else self._lib_dir(library)
        if d is not None:
            path = catalog_file(d, catalog)
            defs = dict(read_catalog_file(path))
            defs[_key(fmt.name, fmt.informat)] = fmt
            write_catalog_file(path, defs.values())
            self._files.pop(path, None)

    def delete(self, name: str, informat: bool = False, library: str = "WORK", catalog: str = DEFAULT_CATALOG) -> bool:
        """Remove a format (PROC DATASETS/CATALOG); True if it existed."""
        where = (library.upper(), catalog.upper())
        found = self._mem.get(where, {}).pop(_key(name, informat), None) is not None
        d = self._lib_dir(library)
        if d is not None:
            path = catalog_file(d, catalog)
            defs = dict(read_catalog_file(path))
            if defs.pop(_key(name, informat), None) is not None:
                found = True
                write_catalog_file(path, defs.values())
        return found

    def get(self, name: str, informat: bool = False) -> UserFormat | None:
        """The format (or informat) `name` ('$SEXF' for a character one) in FMTSEARCH order, or None."""
        key = _key(name, informat)
        for lib, cat in self._search_order():
            f = self._mem.get((lib, cat), {}).get(key)
            if f is not None:
                return f
            d = self._lib_dir(lib)
            if d is not None:
                f = self._file_formats(catalog_file(d, cat)).get(key)
                if f is not None:
                    return f
        for (lib, cat), defs in self._mem.items():     # loaded with load_library under its own libref
            if (lib, cat) not in self._search_order() and lib.startswith("#"):
                f = defs.get(key)
                if f is not None:
                    return f
        return None

    def formats(self, library: str = "WORK", catalog: str = DEFAULT_CATALOG) -> list[UserFormat]:
        """Every format of LIBRARY.CATALOG (for PROC FORMAT FMTLIB / CNTLOUT=)."""
        defs = dict(self._mem.get((library.upper(), catalog.upper()), {}))
        d = self._lib_dir(library)
        if d is not None:
            for k, f in self._file_formats(catalog_file(d, catalog)).items():
                defs.setdefault(k, f)
        return sorted(defs.values(), key=lambda f: (f.name, f.informat))

    def load_library(self, path: str | os.PathLike, libref: str | None = None, catalog: str = DEFAULT_CATALOG) -> int:
        """Load the catalog saved in directory `path` (under `libref`, or as an extra catalog searched after
        FMTSEARCH= when no libref is given). Returns how many formats it holds."""
        defs = read_catalog_file(catalog_file(path, catalog))
        where = (libref.upper() if libref else "#" + str(path), catalog.upper())
        self._mem.setdefault(where, {}).update(defs)
        return len(defs)


# -- CNTLIN ------------------------------------------------------------------------------------------------
def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if v != v:
            return ""
        return str(int(v)) if v == int(v) else repr(v)
    return str(v)


def _num(v: Any, where: str) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    t = _text(v).strip()
    if t in ("", "."):
        return MISSING
    if len(t) == 2 and t[0] == "." and (t[1].isalpha() or t[1] == "_"):
        return special_missing(t[1])
    try:
        return float(t)
    except ValueError:
        raise SasError(f"CNTLIN= data: {where} value {t!r} is not a number for a numeric format") from None


def formats_from_cntlin(rows: Iterable[dict]) -> list[UserFormat]:
    """CNTLIN= observations → formats, in SAS's layout (Base Procedures, PROC FORMAT: Input Control
    Data Set): FMTNAME (required), START, END (defaults to START), LABEL, TYPE ('N' 'C' 'I' 'J'; from
    a '$' on FMTNAME when absent), HLO ('L' low, 'H' high, 'O' other, 'F' label is a format, 'S'
    notsorted, 'I' numeric informat range, 'M' multilabel, 'R' round; may combine), SEXCL/EEXCL
    ('Y' exclusive), DEFAULT, MIN, MAX, FUZZ, and for informats UPCASE/JUST via HLO 'U'/'J'."""
    found: dict[tuple[str, bool], UserFormat] = {}
    order: list[tuple[str, bool]] = []
    for raw in rows:
        row = {str(k).upper(): v for k, v in raw.items()}
        name = _text(row.get("FMTNAME")).strip().upper()
        if not name:
            raise SasError("CNTLIN= data: FMTNAME is missing or blank", expected="a format name in every observation")
        typ = _text(row.get("TYPE")).strip().upper()[:1] or ("C" if name.startswith("$") else "N")
        informat = typ in ("I", "J")
        char = typ in ("C", "J")
        if char and not name.startswith("$"):
            name = "$" + name
        hlo = _text(row.get("HLO")).upper()
        key = _key(name, informat)
        fmt = found.get(key)
        if fmt is None:
            fmt = UserFormat(name, informat=informat)
            found[key] = fmt
            order.append(key)
            dflt = row.get("DEFAULT")
            if dflt not in (None, "") and dflt == dflt and _text(dflt).strip():
                fmt.default = int(float(_text(dflt)))
            for col, attr in (("MIN", "min_width"), ("MAX", "max_width")):
                v = row.get(col)
                if v not in (None, "") and v == v and _text(v).strip():
                    setattr(fmt, attr, int(float(_text(v))))
            fz = row.get("FUZZ")
            if isinstance(fz, (int, float)) and fz == fz:
                fmt.fuzz = float(fz)
        if "S" in hlo:
            fmt.notsorted = True
        if "U" in hlo and informat:
            fmt.upcase = True
        if "J" in hlo and informat:
            fmt.just = True
        if "N" in hlo and not any(c in hlo for c in "LHO"):
            continue                                            # a format with no ranges
        r = FormatRange(low="L" in hlo, high="H" in hlo, other="O" in hlo)
        r.start_excl = _text(row.get("SEXCL")).strip().upper() == "Y"
        r.end_excl = _text(row.get("EEXCL")).strip().upper() == "Y"
        start, end = row.get("START"), row.get("END")
        if end is None or (isinstance(end, str) and end.strip() == "" and not (isinstance(start, str) and start.strip() == "")):
            end = start
        numeric_key = not char and not informat or (informat and "I" in hlo)
        if not r.other:
            if numeric_key:
                if not r.low:
                    r.start = _num(start, "START")
                if not r.high:
                    r.end = _num(end, "END")
            else:
                r.start = None if r.low else _text(start).rstrip(" ")
                r.end = None if r.high else _text(end).rstrip(" ")
        label = row.get("LABEL")
        if "F" in hlo:
            r.label_format = _text(label).strip().strip("[]")
            if not r.label_format.endswith("."):
                r.label_format += "."
        elif informat and not char:
            t = _text(label).strip()
            r.label = t.upper() if t.upper() in ("_SAME_", "_ERROR_") else _num(label, "LABEL")
        else:
            r.label = _text(label).rstrip(" ")
        fmt.ranges.append(r)
    out = [found[k] for k in order]
    for f in out:
        f.sort_ranges()
    return out


def cntlout_rows(fmt: UserFormat) -> list[dict]:
    """The CNTLOUT= observations of one format (the columns formats_from_cntlin reads)."""
    typ = ("J" if fmt.char else "I") if fmt.informat else ("C" if fmt.char else "N")
    rows = []
    for r in fmt.ranges:
        hlo = ("L" if r.low else "") + ("H" if r.high else "") + ("O" if r.other else "") + ("F" if r.label_format else "")

        def side(v, flag, word):
            if flag:
                return word
            if isinstance(v, float):
                return missing_text(v) if v != v else best(v, 16).strip()
            return "" if v is None else str(v)
        start = "**OTHER**" if r.other else side(r.start, r.low, "LOW")
        end = "**OTHER**" if r.other else side(r.end if r.end is not None else r.start, r.high, "HIGH")
        label = f"[{r.label_format}]" if r.label_format else (
            best(r.label, 16).strip() if isinstance(r.label, float) else str(r.label))
        rows.append({"FMTNAME": fmt.name.lstrip("$"), "START": start, "END": end, "LABEL": label,
                     "MIN": fmt.min_width, "MAX": fmt.max_width, "DEFAULT": fmt.default_width,
                     "LENGTH": fmt.default_width, "FUZZ": fmt.fuzz, "TYPE": typ,
                     "SEXCL": "Y" if r.start_excl else "N", "EEXCL": "Y" if r.end_excl else "N", "HLO": hlo})
    return rows


def import_sas7bcat(path: str | os.PathLike, catalog: FormatCatalog, library: str = "WORK",
                    directory: str | os.PathLike | None = None) -> int:
    """A SAS format catalog (.sas7bcat) → formats in `catalog` (value labels: one range per value, as
    ReadStat gives them). Returns how many formats were defined."""
    import pyreadstat

    _, meta = pyreadstat.read_sas7bcat(str(path))
    n = 0
    for name, labels in (getattr(meta, "value_labels", {}) or {}).items():
        char = any(isinstance(k, str) for k in labels)
        fmt = UserFormat(("$" if char else "") + str(name).upper().lstrip("$"))
        for k, lab in labels.items():
            v = str(k) if char else float(k)
            fmt.ranges.append(FormatRange(v, v, str(lab)))
        catalog.define(fmt, library, directory=directory)
        n += 1
    return n
