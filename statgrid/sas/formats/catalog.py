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
LABEL TYPE HLO SEXCL EEXCL DEFAULT LENGTH MIN MAX FUZZ, and for TYPE='P' pictures PREFIX FILL MULT NOEDIT
DATATYPE) into definitions; `cntlout_rows` the reverse;
`import_sas7bcat` reads a SAS catalog through pyreadstat (value labels only) into the same catalog.
"""
from __future__ import annotations

import json
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

from statgrid.sas.errors import SasError
from statgrid.sas.formats.numeric import best, missing_text
from statgrid.sas.formats.picture import DATATYPES, default_mult
from statgrid.sas.formats.userformat import (Damaged, FormatRange, PictureOptions, UserFormat, format_from_json,
                                             format_key, nested_loop, want_field)
from statgrid.sas.values import MISSING, special_missing

CATALOG_SUFFIX = ".fmtcat.json"
DEFAULT_CATALOG = "FORMATS"
MAX_CATALOG_BYTES = 16 * 1024 * 1024     # a catalog file larger than this is not one statgrid wrote
STAT_TTL_S = 2.0                          # how long a catalog file's stat is trusted


def catalog_file(directory: str | os.PathLike, catalog: str = DEFAULT_CATALOG) -> Path:
    return Path(directory) / (catalog.lower() + CATALOG_SUFFIX)


def _damaged(p: Path, why: str) -> SasError:
    return SasError(f"The format catalog {p} is damaged ({why}); remove the file, or define its formats again "
                    "with PROC FORMAT after removing it", 0, 0, str(p), "a format catalog written by statgrid")


def _read_bytes(p: Path) -> bytes | None:
    """The file's bytes, or None when there is none. Never follows a symbolic link, never waits on a
    FIFO or device, never reads more than MAX_CATALOG_BYTES."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(p):
            raise _damaged(p, "it is a symbolic link, not a file") from None
        raise SasError(f"The format catalog {p} cannot be read ({exc.strerror or exc}); check its permissions, "
                       "or remove it and define its formats again", 0, 0, str(p)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _damaged(p, "it is not a regular file")
        if st.st_size > MAX_CATALOG_BYTES:
            raise _damaged(p, f"it holds {st.st_size} bytes, more than a catalog's {MAX_CATALOG_BYTES}")
        chunks, total = [], 0
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            total += len(b)
            if total > MAX_CATALOG_BYTES:
                raise _damaged(p, f"it holds more than a catalog's {MAX_CATALOG_BYTES} bytes")
            chunks.append(b)
        return b"".join(chunks)
    except OSError as exc:
        raise SasError(f"The format catalog {p} cannot be read ({exc.strerror or exc}); remove it and define its "
                       "formats again", 0, 0, str(p)) from None
    finally:
        os.close(fd)


def read_catalog_file(path: str | os.PathLike) -> dict[tuple[str, bool], UserFormat]:
    """The formats of a catalog file ({} when there is none). Anything that is not a catalog statgrid
    wrote — a link, a FIFO, a device, a huge file, JSON of another shape, formats that refer to
    themselves — is SasError naming the file and saying it is damaged."""
    p = Path(path)
    raw = _read_bytes(p)
    if raw is None:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise _damaged(p, f"not JSON: {str(exc)[:80]}") from None
    out: dict[tuple[str, bool], UserFormat] = {}
    try:
        want_field(isinstance(data, dict), "the file is not a JSON object")
        fmts = data.get("formats")
        want_field(isinstance(fmts, list), "it has no list of formats")
        for d in fmts:
            f = format_from_json(d)
            out[format_key(f.name, f.informat)] = f
    except Damaged as exc:
        raise _damaged(p, str(exc)) from None
    loop = nested_loop(out)
    if loop is not None:
        raise _damaged(p, f"format {loop} refers to itself through nested formats")
    return out


def write_catalog_file(path: str | os.PathLike, formats: Iterable[UserFormat]) -> None:
    """Atomic: a reader never sees half a catalog. The new catalog is written to a file of a random
    name created for this write alone (O_EXCL, mode 0600 until done) in the same directory, then
    renamed over the catalog's name: a link planted under either name is never written through."""
    p = Path(path)
    data = {"statgrid_format_catalog": 1,
            "formats": [f.to_json() for f in sorted(formats, key=lambda f: (f.name, f.informat))]}
    text = json.dumps(data, indent=1).encode("utf-8")
    try:
        old = os.lstat(p)
        mode = stat.S_IMODE(old.st_mode) if stat.S_ISREG(old.st_mode) else 0o644
    except FileNotFoundError:
        mode = 0o644
    except OSError:
        mode = 0o644
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + p.name + ".", suffix=".tmp", dir=p.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(text)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
        os.replace(tmp, p)
        tmp = None
    except OSError as exc:
        raise SasError(f"The format catalog {p} cannot be written ({exc.strerror or exc}); check that the "
                       "library's directory is writable", 0, 0, str(p)) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


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
        # catalog file → (when its stat was taken, its stat key, its formats); trusted for STAT_TTL_S
        self._files: dict[Path, tuple[float, tuple, dict]] = {}
        self._order: tuple[str, list[tuple[str, str]]] | None = None
        self.generation = 0          # bumped by define/delete/load_library: a cached lookup is stale

    # -- where ---------------------------------------------------------------------------------------
    def _library(self, libref: str) -> Any:
        s = self.session
        libs = (getattr(s, "libraries", None) or getattr(s, "libs", None)) if s is not None else None
        if libs is None or libref.lower() not in libs:
            return None
        return libs.get(libref.lower())

    def _lib_dir(self, libref: str) -> Path | None:
        lib = self._library(libref)
        return None if lib is None else Path(lib.path)

    def _check_writable(self, library: str, catalog: str) -> None:
        """SAS: "ERROR: Write access to member LIB.FORMATS.CATALOG is denied." for a library assigned
        with ACCESS=READONLY."""
        lib = self._library(library)
        if lib is not None and getattr(lib, "readonly", False):
            member = f"{library.upper()}.{catalog.upper()}.CATALOG"
            raise SasError(f"Write access to member {member} is denied", 0, 0, member,
                           "a library assigned without ACCESS=READONLY")

    def _search_order(self) -> list[tuple[str, str]]:
        text = "(WORK LIBRARY)"
        if self.options is not None:
            try:
                text = self.options.get("FMTSEARCH")
            except (KeyError, AttributeError):
                pass
        cached = self._order
        if cached is not None and cached[0] == text:
            return cached[1]
        order = parse_fmtsearch(text)
        self._order = (text, order)
        return order

    def _file_formats(self, path: Path) -> dict:
        now = time.monotonic()
        cached = self._files.get(path)
        if cached is not None and now - cached[0] < STAT_TTL_S:
            return cached[2]
        try:
            st = os.stat(path)
            key = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)
        except OSError:
            key = ()
        if cached is not None and cached[1] == key:
            self._files[path] = (now, key, cached[2])
            return cached[2]
        defs = read_catalog_file(path) if key else {}
        self._files[path] = (now, key, defs)
        return defs

    def _changed(self, path: Path | None = None) -> None:
        self.generation += 1
        if path is None:
            self._files.clear()
        else:
            self._files.pop(path, None)

    # -- public --------------------------------------------------------------------------------------
    def define(self, fmt: UserFormat, library: str = "WORK", catalog: str = DEFAULT_CATALOG,
               directory: str | os.PathLike | None = None) -> None:
        """Add or replace `fmt` in LIBRARY.CATALOG (PROC FORMAT LIBRARY=lib[.cat]); saved to the library's
        directory (given, or the session's libref) so later programs find it. A read-only library or
        the name of a SAS format is an ERROR."""
        from statgrid.sas.formats import builtin_name

        bare = fmt.name.upper().lstrip("$")
        if builtin_name(bare, fmt.name.startswith("$"), fmt.informat):
            kind = "informat" if fmt.informat else "format"
            raise SasError(f"The {kind} name {fmt.name.upper()} is the name of a SAS {kind}; a user-defined {kind} "
                           f"cannot have the name of one supplied by SAS", 0, 0, fmt.name,
                           f"another name for the {kind}")
        self._check_writable(library, catalog)
        fmt.sort_ranges()
        d = Path(directory) if directory is not None else self._lib_dir(library)
        if d is not None:
            path = catalog_file(d, catalog)
            defs = dict(read_catalog_file(path))
            defs[format_key(fmt.name, fmt.informat)] = fmt
            loop = nested_loop(defs)
            if loop is not None:
                raise SasError(f"The format {loop} would refer to itself through nested formats", 0, 0, fmt.name,
                               "nested formats that end in a SAS format")
            write_catalog_file(path, defs.values())
            self._changed(path)
        where = (library.upper(), catalog.upper())
        self._mem.setdefault(where, {})[format_key(fmt.name, fmt.informat)] = fmt
        self._changed()

    def delete(self, name: str, informat: bool = False, library: str = "WORK", catalog: str = DEFAULT_CATALOG) -> bool:
        """Remove a format (PROC DATASETS/CATALOG); True if it existed."""
        self._check_writable(library, catalog)
        where = (library.upper(), catalog.upper())
        found = self._mem.get(where, {}).pop(format_key(name, informat), None) is not None
        d = self._lib_dir(library)
        if d is not None:
            path = catalog_file(d, catalog)
            defs = dict(read_catalog_file(path))
            if defs.pop(format_key(name, informat), None) is not None:
                found = True
                write_catalog_file(path, defs.values())
        self._changed()
        return found

    def get(self, name: str, informat: bool = False) -> UserFormat | None:
        """The format (or informat) `name` ('$SEXF' for a character one) in FMTSEARCH order, or None."""
        key = format_key(name, informat)
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
        self._changed()
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
        if typ not in ("N", "C", "I", "J", "P"):
            raise SasError(f"CNTLIN= data: TYPE value {typ!r} of format {name} is not a format type",
                           expected="TYPE='N', 'C', 'P' (picture), 'I' or 'J'")
        informat = typ in ("I", "J")
        char = typ in ("C", "J")
        if char and not name.startswith("$"):
            name = "$" + name
        hlo = _text(row.get("HLO")).upper()
        key = format_key(name, informat)
        fmt = found.get(key)
        if fmt is None:
            fmt = UserFormat(name, informat=informat, picture=typ == "P")
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
        if "M" in hlo:
            fmt.multilabel = True
        if "R" in hlo and fmt.picture:
            fmt.round = True
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
        if fmt.picture and not r.label_format:
            r.pic = _cntlin_picture(row, name, r.label)
        fmt.ranges.append(r)
    out = [found[k] for k in order]
    for f in out:
        f.sort_ranges()
    return out


def _cntlin_picture(row: dict, name: str, picture: str) -> PictureOptions:
    """A TYPE='P' observation's PREFIX, FILL, MULT, NOEDIT and DATATYPE columns (blank/missing: the default)."""
    fill = _text(row.get("FILL"))[:1] or " "
    mult = row.get("MULT")
    mult = None if mult is None or mult == "" or (isinstance(mult, float) and mult != mult) else _num(mult, "MULT")
    dtype = _text(row.get("DATATYPE")).strip().upper()
    if dtype and dtype not in DATATYPES:
        raise SasError(f"CNTLIN= data: DATATYPE value {dtype!r} of picture {name} is not a data type",
                       expected="DATATYPE='DATE', 'TIME' or 'DATETIME' (or blank)")
    noedit = row.get("NOEDIT")
    return PictureOptions(_text(row.get("PREFIX")).rstrip(" ")[:4], fill,
                          default_mult(picture) if mult is None or mult != mult else float(mult),
                          isinstance(noedit, (int, float)) and noedit == noedit and bool(noedit), dtype)


def cntlout_rows(fmt: UserFormat) -> list[dict]:
    """The CNTLOUT= observations of one format (the columns formats_from_cntlin reads)."""
    typ = ("J" if fmt.char else "I") if fmt.informat else ("C" if fmt.char else "P" if fmt.picture else "N")
    rows = []
    for r in fmt.ranges:
        hlo = ("L" if r.low else "") + ("H" if r.high else "") + ("O" if r.other else "") + ("F" if r.label_format else "")
        hlo += ("M" if fmt.multilabel else "") + ("R" if fmt.round else "") + ("S" if fmt.notsorted else "")

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
        rows[-1].update(_picture_columns(r))
    return rows


def _picture_columns(r: FormatRange) -> dict:
    """CNTLOUT='s PICTURE columns: PREFIX, MULT, FILL, NOEDIT (1/0), DATATYPE; missing/blank for a VALUE range."""
    o = r.pic
    if o is None:
        return {"PREFIX": "", "MULT": None, "FILL": "", "NOEDIT": None, "DATATYPE": "", "MULT_TEXT": ""}
    mult = o.mult if o.mult is not None else default_mult(str(r.label))
    return {"PREFIX": o.prefix, "MULT": mult, "FILL": o.fill, "NOEDIT": 1.0 if o.noedit else 0.0,
            "DATATYPE": o.datatype, "MULT_TEXT": best(mult, 12).strip()}


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
