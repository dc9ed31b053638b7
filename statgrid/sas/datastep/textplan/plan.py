"""Whether a compiled DATA step is one the text engine takes, and its shape: the INFILE's options and one
`Field` per variable the INPUT statement reads. Decided from the step alone (no I/O); `Refuse` says why not.

The shape mirrors the Python engine's reading (textio.TextIO.run_input and _store) item by item: column
input takes `line[start-1:end]`, formatted input `line[pos:pos+w]` with the pointer moved by @n, +n, each
column field (to its end) and each formatted field (by w); a variable's informat is the item's or the
one an INFORMAT/ATTRIB statement gave it."""
from __future__ import annotations

from dataclasses import dataclass, field

from statgrid.sas.datastep.sqlplan.exprsql import Refuse
from statgrid.sas.formats import INFORMAT_DEFAULTS, parse_spec
from statgrid.sas.parse import ast as A
from statgrid.sas.parse import dsast as D

NUMBER_INFORMATS = ("", "F", "BEST", "D", "E")     # read by formats.numeric.read_number
MAX_DECIMALS = 31
ATTRIBUTE_STATEMENTS = ("KEEP", "DROP", "RENAME", "LABEL", "FORMAT", "INFORMAT", "ATTRIB")
FLAG_OPTIONS = ("PAD", "NOPAD", "TRUNCOVER", "MISSOVER", "FLOWOVER")
VALUE_OPTIONS = ("LRECL", "FIRSTOBS", "OBS", "RECFM", "ENCODING")


@dataclass
class Field:
    """One variable read by the INPUT statement."""
    name: str                   # the PDV variable (upper case)
    start_col: int              # first column of the field, 1-based
    width_chars: int            # the field's width (column input: end - start + 1; formatted: the informat's w)
    kind: str                   # 'plain' (numeric column input), 'number' (w.d), '$' ($w.), '$CHAR'
    cut_chars: int | None = None    # the informat reads the first this many characters of the field
    decimals: int = 0           # w.d: implied decimal places
    length: int = 8             # a character variable's length

    @property
    def end_col(self) -> int:
        return self.start_col + self.width_chars - 1


@dataclass
class Infile:
    """The INFILE statement's options as the Python engine applies them (records.LineSource, textio.run_input)."""
    stmt: D.FileStmt
    lrecl: int | None = None            # LRECL=: records cut to this many characters
    pad: bool = False                   # PAD: lines padded to LRECL (no LRECL: nothing to pad to)
    missover: bool = False              # MISSOVER or TRUNCOVER
    only_missover: bool = False         # MISSOVER without TRUNCOVER or PAD: a field the line ends in is blank
    firstobs: int = 1
    records: int | None = None          # OBS=: at most this many records after FIRSTOBS (None: all)


@dataclass
class StepPlan:
    infile: Infile
    fields: dict[str, Field] = field(default_factory=dict)      # by variable name, in INPUT order
    letters: frozenset = frozenset()    # the MISSING statement's letters


def _body(step) -> tuple[D.FileStmt, D.Input]:
    infiles, inputs = [], []
    for st in step.body:
        if isinstance(st, D.FileStmt) and st.kind == "INFILE":
            infiles.append(st)
        elif isinstance(st, D.Input):
            if not infiles:
                raise Refuse("INPUT before INFILE")
            inputs.append(st)
        elif isinstance(st, D.Length) or (isinstance(st, D.VarAttrs) and st.kind in ATTRIBUTE_STATEMENTS):
            continue
        elif isinstance(st, D.Simple) and st.kind in ("EMPTY", "MISSING"):
            continue
        else:
            raise Refuse(f"a {type(st).__name__} statement ({getattr(st, 'kind', '')}) besides INFILE and INPUT")
    if len(infiles) != 1 or len(inputs) != 1:
        raise Refuse("not exactly one INFILE and one INPUT statement")
    if not isinstance(infiles[0].target, tuple):
        raise Refuse("INFILE DATALINES")
    return infiles[0], inputs[0]


def _whole(value, what: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < low:
        raise Refuse(f"{what}={value!r}")
    return int(value)


def _flag(opts: dict, name: str) -> bool:
    value = opts.get(name)
    if value not in (None, True):
        raise Refuse(f"{name}={value!r}")
    return bool(value)


def plan_infile(st: D.FileStmt) -> Infile:
    opts = st.options
    unknown = [k for k in opts if k not in FLAG_OPTIONS + VALUE_OPTIONS]
    if unknown:
        raise Refuse(f"the INFILE option {unknown[0]}")
    if str(opts.get("RECFM", "V")).upper() != "V":
        raise Refuse("RECFM= other than V")
    enc = str(opts.get("ENCODING", "UTF8")).strip().upper().replace("-", "").replace("_", "")
    if enc != "UTF8":
        raise Refuse(f"ENCODING={opts['ENCODING']}")
    inf = Infile(st)
    if "LRECL" in opts:
        inf.lrecl = _whole(opts["LRECL"], "LRECL", 1)
    for name in FLAG_OPTIONS:
        _flag(opts, name)
    inf.pad = bool(opts.get("PAD"))
    inf.missover = bool(opts.get("MISSOVER") or opts.get("TRUNCOVER"))
    inf.only_missover = bool(opts.get("MISSOVER")) and not opts.get("TRUNCOVER") and not inf.pad
    inf.firstobs = _whole(opts.get("FIRSTOBS", 1), "FIRSTOBS", 1)
    obs = opts.get("OBS")
    if obs not in (None, "MAX"):
        inf.records = max(_whole(obs, "OBS", 0) - inf.firstobs + 1, 0)
    return inf


def _reader(var, informat: str) -> dict:
    """How the Python engine's _store reads a value into `var` with `informat` ('' for none)."""
    if not informat:
        return {"kind": "plain"} if var.type == "num" else {"kind": "$"}
    spec = parse_spec(informat)
    if var.type == "char":
        if not spec.char or spec.name not in ("", "CHAR"):
            raise Refuse(f"the informat {informat} for the character variable {var.name}")
        return {"kind": "$" if spec.name == "" else "$CHAR", "cut_chars": spec.width}
    if spec.char or spec.name not in NUMBER_INFORMATS:
        raise Refuse(f"the informat {informat}")
    decimals = spec.decimals or 0
    if decimals > MAX_DECIMALS:
        raise Refuse(f"the informat {informat}: {decimals} decimal places")
    width = spec.width if spec.width is not None else INFORMAT_DEFAULTS[spec.name]
    return {"kind": "number", "cut_chars": width, "decimals": decimals}


def _fields(step, st: D.Input) -> dict[str, Field]:
    pdv, out, pos = step.pdv, {}, 0
    for it in st.items:
        if it[0] in ("at", "plus") and isinstance(it[1], (int, float)) and not isinstance(it[1], bool):
            pos = int(it[1]) - 1 if it[0] == "at" else pos + int(it[1])
            if pos < 0:
                raise Refuse("a pointer before column 1")
            continue
        if it[0] != "var":
            raise Refuse(f"the INPUT item {it[0]}")
        _, target, _, mode, start, end, informat, _ = it[:8]
        if len(it) > 8 and it[8]:
            raise Refuse("the ? or ?? modifier")
        if not isinstance(target, A.Var) or target.name in pdv.arrays:
            raise Refuse("INPUT into an array element")
        var = pdv.get(target.name)
        if var is None or var.auto or var.name.upper() in out:
            raise Refuse(f"the variable {target.name} read twice")
        if mode == "col":
            if start < 1 or end < start:
                raise Refuse(f"the columns {start}-{end}")
            f = Field(var.name.upper(), start, end - start + 1, "")
            pos = end
        elif mode == "fmt":
            w = parse_spec(informat).width or 8
            f = Field(var.name.upper(), pos + 1, w, "")
            pos += w
        else:
            raise Refuse("list input")
        for k, v in _reader(var, informat or var.informat or "").items():
            setattr(f, k, v)
        f.length = var.length or 8
        out[f.name] = f
    return out


def plan_step(step) -> StepPlan:
    st_infile, st_input = _body(step)
    plan = StepPlan(plan_infile(st_infile), _fields(step, st_input))
    plan.letters = frozenset(step.pdv.missing_letters)
    return plan
