"""SAS's data set and external file I/O functions (SAS 9.4 Functions and CALL Routines), as DATA steps
and %SYSFUNC use them:

- data sets: OPEN CLOSE ATTRN (NOBS NLOBS NLOBSF NVARS ANY CRDTE MODTE LRECL ISINDEX ISSUBSET NDEL
  INDEX) ATTRC (MEM LIB LABEL MODE MTYPE ENGINE CHARSET ENCODING SORTEDBY TYPE) EXIST VARNUM VARNAME
  VARTYPE VARLEN VARFMT VARLABEL FETCH FETCHOBS GETVARN GETVARC SYSMSG, on statgrid data sets (Parquet
  members of the session's libraries);
- external files: FILENAME FILEEXIST FEXIST PATHNAME FOPEN FREAD FGET FPUT FWRITE FSEP FCLOSE FINFO
  FDELETE DOPEN DNUM DREAD DCLOSE, on the program's filerefs (an aggregate fileref reads its files as
  one stream). FILENAME with device PIPE is refused: a grid job gets no shell.

Identifiers returned by OPEN/FOPEN/DOPEN are program-wide (rt.program.extras['functions.io']), so one
%SYSFUNC can open and a later one read and close, as SAS allows. SAS's return codes: OPEN/FOPEN give 0
when they fail (SYSMSG() says why); FREAD gives -1 at the end of the file; FGET -1 when the record
buffer is used up; the others 0 on success.
FILENAME's first argument and FGET's second are variables the function assigns (Function.out_args):
the caller passes the variable's value and stores the new value it gets back (in %SYSFUNC: a macro
variable named by the argument, as SAS does).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.functions.registry import function, invalid_argument
from statgrid.sas.functions.character import to_char
from statgrid.sas.functions.numeric import to_num
from statgrid.sas.values import MISSING, datetime_to_sas

COLUMNS_KEY = "statgrid.columns"      # statgrid.procs.sasdata.COLUMNS_KEY (not imported: keeps this light)
LABEL_KEY = "statgrid.label"


def _io(rt) -> dict:
    holder = rt.program.extras if getattr(rt, "program", None) is not None else rt.state
    return holder.setdefault("functions.io", {"next": 1, "sets": {}, "files": {}, "dirs": {}, "sysmsg": ""})


def _open(rt, kind: str, obj) -> float:
    """The id of what OPEN, FOPEN or DOPEN opened, kept among `kind` ("sets", "files", "dirs"; one count
    from 1 for the three)."""
    io = _io(rt)
    ident = io["next"]
    io["next"] += 1
    io[kind][ident] = obj
    return float(ident)


def _opened(rt, kind: str, ident, fname: str = "", close: bool = False):
    """What id `ident` names among `kind`, None for a missing or unknown id (with fname: function fname's
    "Invalid argument" NOTE for its first argument); forgotten when `close`."""
    k = to_num(ident)
    table = _io(rt)[kind]
    got = None if k != k else table.pop(int(k), None) if close else table.get(int(k))
    if got is None and fname:
        invalid_argument(rt, fname, 1)
    return got


def _sysmsg(rt, text: str) -> None:
    _io(rt)["sysmsg"] = text


@function("SYSMSG", 0, 0, returns="char")
def f_sysmsg(rt):
    """The last I/O function's error message (then cleared), as SAS's SYSMSG()."""
    io = _io(rt)
    msg, io["sysmsg"] = io["sysmsg"], ""
    return msg


# -- data sets ---------------------------------------------------------------------------------------------
@dataclass
class OpenSet:
    libref: str
    member: str
    path: Path
    columns: list[tuple[str, str]] = field(default_factory=list)   # (name, 'N' | 'C')
    meta: dict = field(default_factory=dict)                        # statgrid.columns
    label: str = ""
    nobs: int = 0
    rows: Any = None            # pyarrow table once FETCH reads
    nlobsf: int | None = None   # the observations the data set options (WHERE=, OBS= …) leave, when given
    pos: int = 0
    current: dict | None = None


def _session(rt):
    program = getattr(rt, "program", None)
    return getattr(program, "session", None) if program is not None else None


def _resolve(rt, name: str):
    """'lib.mem' or 'mem' (WORK) → DatasetRef, or None with SYSMSG set (data set options in parentheses
    are OPEN's to apply)."""
    text = to_char(name).strip()
    if "(" in text:
        text = text[:text.index("(")].strip()
    s = _session(rt)
    if s is None or not text:
        _sysmsg(rt, f"ERROR: File {text.upper() or '(blank)'} does not exist.")
        return None
    try:
        return s.libraries.ref(text.lower())
    except Exception as exc:     # LibraryError: unknown libref, bad name
        _sysmsg(rt, f"ERROR: {exc}")
        return None


@function("OPEN", 0, 2, args="cc")
def f_open(rt, name="", mode="I"):
    """Open a data set for reading; its id (> 0), or 0 if it cannot be opened (see SYSMSG)."""
    ref = _resolve(rt, name)
    if ref is None:
        return 0.0
    if str(mode).strip().upper() not in ("I", "IN", "IS", "IN2", ""):
        _sysmsg(rt, "ERROR: OPEN mode must be I: statgrid's data set functions read.")
        return 0.0
    if not ref.exists():
        _sysmsg(rt, f"ERROR: File {ref.library.name.upper()}.{ref.member.upper()}.DATA does not exist.")
        return 0.0
    import pyarrow.parquet as pq
    md = pq.read_metadata(ref.path)
    kv = md.metadata or {}
    schema = md.schema.to_arrow_schema()
    cols = [(f.name, "C" if str(f.type) in ("string", "large_string") else "N") for f in schema]
    meta = json.loads(kv[COLUMNS_KEY.encode()]) if COLUMNS_KEY.encode() in kv else {}
    label = kv.get(LABEL_KEY.encode(), b"").decode()
    st = OpenSet(ref.library.name.upper(), ref.member.upper(), ref.path, cols, meta, label, md.num_rows)
    text = to_char(name).strip()
    if "(" in text and not _with_options(rt, st, text):
        return 0.0
    return _open(rt, "sets", st)


def _with_options(rt, st: OpenSet, text: str) -> bool:
    """OPEN('lib.mem(where=(…) keep=… rename=(…) obs=…)'): the data set options applied — FETCH reads, and
    ATTRN(NLOBSF) counts, the observations they leave, VARNUM and GETVARx see the variables they keep (SAS
    9.4 Functions: OPEN, "data-set-name<(data-set-options)>"). False (SYSMSG set) when they are not valid."""
    program = getattr(rt, "program", None)
    try:
        from statgrid.sas.parse.dsname import parse_dataset_text
        cur = program.session.con.cursor()
        try:
            table = cur.sql(program.input_sql(program, parse_dataset_text(text, program))).to_arrow_table()
        finally:
            cur.close()
    except Exception as exc:  # noqa: BLE001  (a bad option or WHERE: OPEN returns 0, SYSMSG says why)
        _sysmsg(rt, f"ERROR: {exc}")
        return False
    st.rows, st.nlobsf = table, table.num_rows
    st.columns = [(f.name, "C" if str(f.type) in ("string", "large_string") else "N") for f in table.schema]
    return True


def _on_set(name: str, min_args: int, max_args: int, args: str, returns: str = "num"):
    """Registers a function whose first argument is a data set id (OPEN's): it is called fn(rt, the open
    set, *the other arguments); an unknown id gives the "Invalid argument" NOTE and a missing result."""
    def deco(fn):
        def call(rt, dsid, *rest):
            st = _opened(rt, "sets", dsid, name)
            if st is None:
                return "" if returns == "char" else MISSING
            return fn(rt, st, *rest)
        call.__name__, call.__doc__ = fn.__name__, fn.__doc__
        function(name, min_args, max_args, returns=returns, args=args)(call)
        return fn
    return deco


@function("CLOSE", 1, 1)
def f_close(rt, dsid):
    return 0.0 if _opened(rt, "sets", dsid, close=True) is not None else -1.0


def _length(st: OpenSet, name: str, typ: str) -> int:
    info = st.meta.get(name, {})
    return int(info.get("length") or (8 if typ == "N" else 8))


@_on_set("ATTRN", 2, 2, args="nc")
def f_attrn(rt, st, attr):
    a = to_char(attr).strip().upper()
    try:
        stat = st.path.stat()
    except OSError:
        stat = None
    if a == "NLOBSF" and st.nlobsf is not None:
        return float(st.nlobsf)
    if a in ("NOBS", "NLOBS", "NLOBSF"):
        return float(st.nobs)
    if a == "NVARS":
        return float(len(st.columns))
    if a == "ANY":
        return -1.0 if not st.columns else (1.0 if st.nobs else 0.0)
    if a in ("CRDTE", "MODTE"):
        if stat is None:
            return MISSING
        import datetime as _dt
        return float(round(datetime_to_sas(_dt.datetime.fromtimestamp(stat.st_mtime))))
    if a == "LRECL":
        return float(sum(_length(st, n, t) for n, t in st.columns))
    if a in ("ISINDEX", "ISSUBSET", "NDEL", "INDEX", "ALTERPW", "ANOBS", "ARAND", "ARWU", "AUDIT", "GENMAX",
             "GENNEXT", "GENNUM", "ICONST", "MAXGEN", "MAXRC", "NEXTGEN", "PW", "READPW", "TAPE", "WHSTMT", "WRITEPW"):
        return 1.0 if a in ("ANOBS", "ARAND") else 0.0
    if a == "RADIX":
        return 1.0
    return invalid_argument(rt, "ATTRN", 2)


@_on_set("ATTRC", 2, 2, returns="char", args="nc")
def f_attrc(rt, st, attr):
    a = to_char(attr).strip().upper()
    values = {"MEM": st.member, "LIB": st.libref, "LABEL": st.label, "MODE": "I", "MTYPE": "DATA",
              "ENGINE": "V9", "CHARSET": "ANSI", "ENCODING": "utf-8  Unicode (UTF-8)", "SORTEDBY": "",
              "SORTLVL": "", "SORTSEQ": "", "TYPE": "", "DATAREP": "NATIVE", "COMPRESS": "NO", "ENCRYPT": "NO"}
    if a not in values:
        return invalid_argument(rt, "ATTRC", 2, "")
    return values[a]


@function("EXIST", 1, 3, args="ccc")
def f_exist(rt, name, member_type="DATA", generation=None):
    """1 if the data set (member type DATA) or catalog (CATALOG: a saved format catalog) exists."""
    mt = (to_char(member_type).strip().upper() or "DATA") if member_type is not None else "DATA"
    ref = _resolve(rt, name)
    if ref is None:
        return 0.0
    if mt == "DATA":
        return 1.0 if ref.exists() else 0.0
    if mt == "CATALOG":
        from statgrid.sas.formats.catalog import catalog_file
        return 1.0 if catalog_file(ref.library.path, ref.member).is_file() else 0.0
    if mt in ("VIEW", "ACCESS"):
        return 0.0
    return invalid_argument(rt, "EXIST", 2, 0.0)


def _varidx(rt, st: OpenSet, n, fname: str) -> int | None:
    k = to_num(n)
    if k != k or not 1 <= k <= len(st.columns):
        invalid_argument(rt, fname, 2)
        return None
    return int(k) - 1


@_on_set("VARNUM", 2, 2, args="nc")
def f_varnum(rt, st, name):
    want = to_char(name).strip().upper()
    for i, (n, _) in enumerate(st.columns):
        if n.upper() == want:
            return float(i + 1)
    return 0.0


def _varattr(fname: str, get, returns="char"):
    @_on_set(fname, 2, 2, returns=returns, args="nn")
    def fn(rt, st, n):
        i = _varidx(rt, st, n, fname)
        if i is None:
            return "" if returns == "char" else MISSING
        name, typ = st.columns[i]
        return get(st, name, typ)
    return fn


_varattr("VARNAME", lambda st, n, t: n)
_varattr("VARTYPE", lambda st, n, t: t)
_varattr("VARLEN", lambda st, n, t: float(_length(st, n, t)), returns="num")
_varattr("VARFMT", lambda st, n, t: st.meta.get(n, {}).get("format") or "")
_varattr("VARINFMT", lambda st, n, t: st.meta.get(n, {}).get("informat") or "")
_varattr("VARLABEL", lambda st, n, t: st.meta.get(n, {}).get("label") or "")


def _fetch_row(st: OpenSet, i: int) -> bool:
    if st.rows is None:
        import pyarrow.parquet as pq
        st.rows = pq.read_table(st.path)
    if not 0 <= i < st.rows.num_rows:
        return False
    st.current = {name: st.rows.column(name)[i].as_py() for name, _ in st.columns}
    st.pos = i + 1
    return True


@_on_set("FETCH", 1, 2, args="nc")
def f_fetch(rt, st, options=None):
    """Read the next observation into the data set's buffer; 0, or -1 after the last."""
    return 0.0 if _fetch_row(st, st.pos) else -1.0


@_on_set("FETCHOBS", 2, 3, args="nnc")
def f_fetchobs(rt, st, obs, options=None):
    k = to_num(obs)
    return 0.0 if k == k and _fetch_row(st, int(k) - 1) else -1.0


@_on_set("GETVARN", 2, 2, args="nn")
def f_getvarn(rt, st, n):
    i = _varidx(rt, st, n, "GETVARN")
    if i is None or st.current is None:
        return MISSING
    v = st.current.get(st.columns[i][0])
    if v is None:
        return MISSING
    if hasattr(v, "toordinal") and not hasattr(v, "hour"):
        from statgrid.sas.values import date_to_sas
        return date_to_sas(v)
    if hasattr(v, "hour") and hasattr(v, "toordinal"):
        return datetime_to_sas(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return invalid_argument(rt, "GETVARN", 2)


@_on_set("GETVARC", 2, 2, returns="char", args="nn")
def f_getvarc(rt, st, n):
    i = _varidx(rt, st, n, "GETVARC")
    if i is None or st.current is None:
        return ""
    v = st.current.get(st.columns[i][0])
    return "" if v is None else str(v)


# -- external files ----------------------------------------------------------------------------------------
def _filerefs(rt) -> dict:
    program = getattr(rt, "program", None)
    if program is None:
        return rt.state.setdefault("filerefs", {})
    return program.filerefs


@function("FILENAME", 1, 5, args="ccccc", out_args=(0,))
def f_filename(rt, fileref, path="", device="", options="", dirref=""):
    """Assign (or, with a blank path, deassign) a fileref; returns (rc, [fileref]). A blank fileref gets
    a generated name (#LN00001 …), returned for the caller to store, as SAS does."""
    from statgrid.sas.context import Fileref
    ref = to_char(fileref).strip().upper()
    p = to_char(path).strip()
    dev = to_char(device).strip().upper() or "DISK"
    if dev == "PIPE":
        from statgrid.sas.errors import SHELL_ESCAPE_REFUSED
        raise SasError(SHELL_ESCAPE_REFUSED.format(what="FILENAME(…, 'PIPE')"), getattr(rt, "line", 0),
                       getattr(rt, "col", 0), "PIPE")
    refs = _filerefs(rt)
    if not p:
        if ref and refs.pop(ref, None) is not None:
            return (0.0, [fileref])
        _sysmsg(rt, f"WARNING: Fileref {ref} is not assigned.")
        return (0.0 if ref else 1.0, [fileref])
    if dev not in ("DISK", "TEMP", "DUMMY"):
        _sysmsg(rt, f"ERROR: Invalid device type {dev}.")
        return (1.0, [fileref])
    if not ref:
        io = _io(rt)
        io["ln"] = io.get("ln", 0) + 1
        ref = f"#LN{io['ln']:05d}"
    base = Path(os.path.expanduser(p))
    if dirref:
        d = refs.get(to_char(dirref).strip().upper())
        if d is not None and d.paths:
            base = Path(d.paths[0]) / base
    absolute = base if base.is_absolute() else Path.cwd() / base
    opts = {}
    for item in to_char(options).split():
        k, _, v = item.partition("=")
        opts[k.upper()] = v
    refs[ref] = Fileref(ref, [absolute], absolute.is_dir(), opts)
    return (0.0, [ref])


@function("FILEEXIST", 1, 1, args="c")
def f_fileexist(rt, path):
    return 1.0 if Path(os.path.expanduser(to_char(path).strip())).exists() else 0.0


@function("FILEREF", 1, 1, args="c")
def f_fileref(rt, fileref):
    """0 when the fileref is assigned and its file exists, negative when assigned but the file does not
    exist, positive when the fileref is not assigned (SAS 9.4 Functions: FILEREF)."""
    f = _filerefs(rt).get(to_char(fileref).strip().upper())
    if f is None:
        return 20036.0
    return 0.0 if f.paths and all(Path(p).exists() for p in f.paths) else -20004.0


@function("FEXIST", 1, 1, args="c")
def f_fexist(rt, fileref):
    f = _filerefs(rt).get(to_char(fileref).strip().upper())
    return 1.0 if f is not None and f.paths and all(Path(p).exists() for p in f.paths) else 0.0


@function("PATHNAME", 1, 2, returns="char", args="cc")
def f_pathname(rt, ref, reftype=""):
    """The path of a fileref (F) or libref (L); blank if neither."""
    name = to_char(ref).strip()
    kind = to_char(reftype).strip().upper()
    if kind != "L":
        f = _filerefs(rt).get(name.upper())
        if f is not None:
            return " ".join(str(p) for p in f.paths) if len(f.paths) != 1 else str(f.paths[0])
    if kind != "F":
        s = _session(rt)
        if s is not None and name.lower() in s.libraries:
            return str(s.libraries.get(name.lower()).path)
    return ""


@function("FDELETE", 1, 1, args="c")
def f_fdelete(rt, fileref):
    f = _filerefs(rt).get(to_char(fileref).strip().upper())
    if f is None or not f.paths:
        return 1.0
    try:
        os.unlink(f.paths[0])
        return 0.0
    except OSError as exc:
        _sysmsg(rt, f"ERROR: {exc.strerror}")
        return 1.0


@dataclass
class OpenFile:
    paths: list[Path]
    mode: str
    lines: Any = None          # iterator over records (input)
    handle: Any = None         # output
    buffer: str = ""           # the File Data Buffer
    col: int = 0               # the column pointer (0-based)
    sep: str = " "


def _records(paths: list[Path]):
    for p in paths:
        with open(p, "r", encoding="utf-8", errors="replace", newline="") as fh:
            for line in fh:
                yield line.rstrip("\r\n")


@function("FOPEN", 1, 4, args="ccnc")
def f_fopen(rt, fileref, mode="I", lrecl=None, recfm=None):
    """Open a fileref's file(s): I input (an aggregate fileref reads its files in order), O output,
    A append. Returns the file id, 0 on failure (SYSMSG says why)."""
    name = to_char(fileref).strip().upper()
    f = _filerefs(rt).get(name)
    if f is None:
        _sysmsg(rt, f"ERROR: Fileref {name} is not assigned.")
        return 0.0
    m = (to_char(mode).strip().upper() or "I")[:1]
    try:
        if m in ("I", "S"):
            missing = [p for p in f.paths if not Path(p).is_file()]
            if missing:
                _sysmsg(rt, f"ERROR: Physical file does not exist, {missing[0]}.")
                return 0.0
            of = OpenFile(list(f.paths), "I", lines=_records(list(f.paths)))
        elif m in ("O", "A", "U"):
            of = OpenFile(list(f.paths), m, handle=open(f.paths[0], "a" if m in ("A", "U") else "w", encoding="utf-8"))
        else:
            return invalid_argument(rt, "FOPEN", 2, 0.0)
    except OSError as exc:
        _sysmsg(rt, f"ERROR: {exc.strerror}: {f.paths[0] if f.paths else name}.")
        return 0.0
    return _open(rt, "files", of)


def _file(rt, fid, fname: str) -> OpenFile | None:
    return _opened(rt, "files", fid, fname)


@function("FREAD", 1, 1)
def f_fread(rt, fid):
    """Read the next record into the File Data Buffer: 0, or -1 at the end of the file."""
    of = _file(rt, fid, "FREAD")
    if of is None or of.lines is None:
        return -1.0
    try:
        of.buffer = next(of.lines)
    except StopIteration:
        return -1.0
    of.col = 0
    return 0.0


@function("FGET", 2, 3, args="ncn", out_args=(1,))
def f_fget(rt, fid, cval, length=None):
    """Copy from the File Data Buffer at the column pointer: `length` characters, or up to the next
    separator (FSEP, default blank). Returns (rc, [text]): rc 0, or -1 when the buffer is used up."""
    of = _file(rt, fid, "FGET")
    if of is None:
        return (-1.0, [cval])
    buf = of.buffer
    if of.col >= len(buf):
        return (-1.0, [cval])
    n = to_num(length) if length is not None else MISSING
    if n == n and n > 0:
        text = buf[of.col:of.col + int(n)]
        of.col += int(n)
    else:
        while of.col < len(buf) and buf[of.col] in of.sep:
            of.col += 1
        end = of.col
        while end < len(buf) and buf[end] not in of.sep:
            end += 1
        text = buf[of.col:end]
        of.col = end + 1
    return (0.0, [text])


@function("FSEP", 2, 2, args="nc")
def f_fsep(rt, fid, chars):
    of = _file(rt, fid, "FSEP")
    if of is None:
        return 1.0
    of.sep = to_char(chars) or " "
    return 0.0


@function("FPUT", 2, 2, args="nc")
def f_fput(rt, fid, cval):
    """Append text to the File Data Buffer (written by FWRITE)."""
    of = _file(rt, fid, "FPUT")
    if of is None or of.handle is None:
        return 1.0
    of.buffer += to_char(cval)
    return 0.0


@function("FWRITE", 1, 2, args="nc")
def f_fwrite(rt, fid, cc=None):
    of = _file(rt, fid, "FWRITE")
    if of is None or of.handle is None:
        return 1.0
    of.handle.write(of.buffer.rstrip(" ") + "\n")
    of.buffer = ""
    return 0.0


@function("FINFO", 2, 2, returns="char", args="nc")
def f_finfo(rt, fid, item):
    of = _file(rt, fid, "FINFO")
    if of is None:
        return ""
    it = to_char(item).strip().upper()
    if it == "FILENAME":
        return " ".join(str(p) for p in of.paths)
    if it == "RECFM":
        return "V"
    if it == "LRECL":
        return "32767"
    return ""


@function("FCLOSE", 1, 1)
def f_fclose(rt, fid):
    of = _opened(rt, "files", fid, close=True)
    if of is None:
        return 1.0
    if of.handle is not None:
        if of.buffer:
            of.handle.write(of.buffer.rstrip(" ") + "\n")
        of.handle.close()
    return 0.0


@function("DOPEN", 1, 1, args="c")
def f_dopen(rt, fileref):
    """Open a directory fileref: its id, 0 if it is not a directory."""
    f = _filerefs(rt).get(to_char(fileref).strip().upper())
    if f is None or not f.paths or not Path(f.paths[0]).is_dir():
        _sysmsg(rt, f"ERROR: Fileref {to_char(fileref).strip().upper()} is not a directory.")
        return 0.0
    return _open(rt, "dirs", sorted(os.listdir(f.paths[0])))


@function("DNUM", 1, 1)
def f_dnum(rt, did):
    names = _opened(rt, "dirs", did)
    return MISSING if names is None else float(len(names))


@function("DREAD", 2, 2, returns="char", args="nn")
def f_dread(rt, did, n):
    names, i = _opened(rt, "dirs", did), to_num(n)
    if names is None or i != i or not 1 <= i <= len(names):
        return ""
    return names[int(i) - 1]


@function("DCLOSE", 1, 1)
def f_dclose(rt, did):
    return 0.0 if _opened(rt, "dirs", did, close=True) is not None else 1.0
