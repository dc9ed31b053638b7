"""Which DATA steps the NUMBA engine takes (engines.py): `analyze(step)` returns the Plan of a step it can
run — its kernel source, what the driver loads and writes — or raises Refuse saying why not. Nothing here
has an effect the Python engine would not have had at the same point (it reads the step and the input's
Parquet footer only)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError
from statgrid.sas.parse import ast as A
from statgrid.sas.parse import dsast as D
from statgrid.sas.datastep import runtime as R
from statgrid.sas.datastep.compiled.kernel import DECLARATIONS, KernelGen, Refuse

__all__ = ["Plan", "Refuse", "analyze"]


@dataclass
class Plan:
    source: str
    sites: dict                       # (line, col) → index into the counts
    lags: list                        # per LAG call site: its queue length
    columns: list                     # ColumnInfo of the output, in order
    out_slots: list                   # the output's numeric columns' PDV slots
    out_kinds: list                   # per output column: ('num', k-th numeric) | ('char', input column index, length)
    load: list                        # per loaded input column: its index in the input batch
    load_slots: list
    flag_slots: list                  # FIRST.…, LAST.…, END= slots, in that order
    by: list                          # [(input column index, char?, descending?)]
    notsorted: bool
    end: bool
    has_set: bool
    reader: Any
    work: int                         # rows the step works through (input rows × constant DO loop trips)
    rand_seed: int | None
    uses_rand: bool
    init: list = field(default_factory=list)


def _executable(st) -> bool:
    return not (isinstance(st, DECLARATIONS) or (isinstance(st, D.Simple) and st.kind == "EMPTY"))


def _walk(sts):
    for st in sts:
        yield st
        if isinstance(st, D.If):
            yield from _walk([s for s in (st.then, st.else_) if s is not None])
        elif isinstance(st, D.Do):
            yield from _walk(st.body)
        elif isinstance(st, D.Select):
            yield from _walk([b for _, b in st.whens] + ([st.otherwise] if st.otherwise else []))


def _trips(st) -> int:
    """Iterations of an iterative DO whose bounds are number constants (1 when not constant)."""
    total = 0
    for start, stop, by in st.specs:
        if stop is None:
            total += 1
            continue
        vals = [start, stop, by if by is not None else A.Num(0, 0, 1.0)]
        if not all(isinstance(x, A.Num) and x.value == x.value for x in vals) or vals[2].value == 0:
            return 1
        a, b, s = (float(x.value) for x in vals)
        total += max(0, int((b - a) // s) + 1)
    return max(total, 1)


def _factor(sts) -> int:
    best = 1
    for st in sts:
        if isinstance(st, D.If):
            f = _factor([s for s in (st.then, st.else_) if s is not None])
        elif isinstance(st, D.Do):
            f = _factor(st.body) * (_trips(st) if st.kind == "iter" else 1)
        elif isinstance(st, D.Select):
            f = _factor([b for _, b in st.whens] + ([st.otherwise] if st.otherwise else []))
        else:
            f = 1
        best = max(best, f)
    return best


def _input_rows(step, ds) -> int:
    import pyarrow.parquet as pq

    from statgrid.sas.dataset import MAX_OBS, _sysopt
    ref = step.program.session.ref(f"{ds.libref}.{ds.member}")
    n = pq.read_metadata(str(ref.path)).num_rows
    first = ds.firstobs if ds.firstobs is not None else _sysopt(step.program, "FIRSTOBS", 1)
    obs = ds.obs if ds.obs is not None else _sysopt(step.program, "OBS", MAX_OBS)
    if first > 1 or obs < MAX_OBS:
        n = min(n - (first - 1), max(0, obs - first + 1))
    return max(n, 0)


def analyze(step) -> Plan:
    pdv, program = step.pdv, step.program
    if len(step.outputs) != 1 or step.outputs[0].is_null:
        raise Refuse("one output data set is needed")
    spec = step.outputs[0]
    if step.textio.inputs or getattr(step.textio, "reads", False):
        raise Refuse("INPUT/INFILE")
    body = step.body
    readers = step.plan.readers
    if len(readers) > 1:
        raise Refuse("more than one SET/MERGE")
    has_set = bool(readers)
    reader = readers[0] if readers else None
    if has_set:
        stmt = reader.stmt
        if stmt.kind != "SET" or len(stmt.datasets) != 1 or stmt.point or stmt.nobs:
            raise Refuse("only SET of one data set (no MERGE, POINT=, NOBS=)")
        ds = stmt.datasets[0]
        if ds.in_var:
            raise Refuse("IN=")
        pos = next((i for i, st in enumerate(body) if isinstance(st, D.SetStmt)), None)
        if pos is None:
            raise Refuse("a SET statement inside a block")
        if any(_executable(st) for st in body[:pos]):
            raise Refuse("statements before the SET statement")
        if any(isinstance(st, D.SetStmt) for st in _walk(body[pos + 1:])) or \
                any(isinstance(st, D.SetStmt) for st in _walk(body[:pos])):
            raise Refuse("a SET statement inside a block")
        ref = program.session.ref(f"{ds.libref}.{ds.member}")
        if not ref.exists():
            raise Refuse("the input is not a stored data set")
        from statgrid.sas.dataset import input_sql
        from statgrid.sas.where_sql import WhereNotSql
        try:
            input_sql(program, ds, reader.infos[0])
        except WhereNotSql:
            raise Refuse("a WHERE that SQL cannot say") from None
        body = body[:pos] + body[pos + 1:]
    elif step.by:
        raise Refuse("BY without SET")
    for st in _walk(body):
        if isinstance(st, (D.Input, D.Put, D.FileStmt, D.Declare, D.MethodStmt, D.SetStmt)):
            raise Refuse(f"the {type(st).__name__} statement")
    # character variables: only carried through from the input, never computed
    for var in pdv.slots:
        if var.type == "char" and not var.from_input:
            raise Refuse(f"the character variable {var.name} is not from the input")
        if var.type == "num" and var.init is not None and (not isinstance(var.init, float) or
                                                            (var.init != var.init and
                                                             getattr(var.init, "code", ".") != ".")):
            raise Refuse(f"the initial value of {var.name}")
    # the output's columns (output_columns may warn or raise just as the Python engine would at this point)
    try:
        names = step.output_columns(spec)
    except SasError:
        raise Refuse("the output's KEEP=/DROP= lists") from None
    columns, out_kinds, out_slots = [], [], []
    in_index = {}
    if has_set:
        in_index = {c.name.upper(): i for i, c in enumerate(reader.infos[0])}
    for n in names:
        var = pdv.vars[n]
        new = step.rename.get(n) or spec.rename.get(n) or var.name
        columns.append(ColumnInfo(new, var.type, var.length, var.format, var.informat, var.label))
        if var.type == "num":
            out_kinds.append(("num", len(out_slots)))
            out_slots.append(var.slot)
        else:
            out_kinds.append(("char", in_index[n], var.length))
    # the kernel
    cap = program.extras.get("datastep", {}).get("loop_cap", R.LOOP_CAP)
    gen = KernelGen(step, out_slots, int(cap))
    streaminit = [(i, st) for i, st in enumerate(body) if isinstance(st, D.CallStmt)
                  and st.name.upper() == "STREAMINIT"]
    nested = [st for st in _walk(body) if isinstance(st, D.CallStmt) and st.name.upper() == "STREAMINIT"]
    first_rand = None
    gen.emit(1, "pass")
    for i, st in enumerate(body):
        before = gen.uses_rand
        gen.stmt(st, 1)
        if gen.uses_rand and not before:
            first_rand = i
    gen.ret(1, 0)
    seed = None
    if gen.uses_rand:
        if len(nested) > 1 or len(nested) != len(streaminit):
            raise Refuse("more than one CALL STREAMINIT, or one inside a block")
        if streaminit:
            i, st = streaminit[0]
            arg = st.args[0] if len(st.args) == 1 else None
            if not isinstance(arg, A.Num) or arg.value != arg.value or int(arg.value) <= 0 or i >= first_rand:
                raise Refuse("CALL STREAMINIT without a positive constant seed before every RAND")
            seed = int(arg.value)
    body_lines = gen.lines
    gen.lines = []
    load, load_slots, flag_slots, by = [], [], [], []
    if has_set:
        for i, c in enumerate(reader.infos[0]):
            var = pdv.get(c.name)
            if var.type == "num":
                load.append(i)
                load_slots.append(var.slot)
        flag_slots = list(reader.first_slots) + list(reader.last_slots)
        if reader.end_slot is not None:
            flag_slots.append(reader.end_slot)
        for name, desc in reader.by:
            idx = in_index.get(name.upper())
            if idx is None:
                raise Refuse("a BY variable not in the input")
            by.append((idx, reader.infos[0][idx].type == "char", desc))
    reset = [s for s, _ in step.reset if pdv.slots[s].type == "num"]
    src = gen.module_from(body_lines, load_slots, flag_slots, reset, pdv.get("_N_").slot,
                          pdv.get("_ERROR_").slot, has_set, not gen.has_output)
    try:
        rows = _input_rows(step, reader.stmt.datasets[0]) if has_set else 1
    except Exception:  # noqa: BLE001 - a footer that cannot be read: the size is unknown (AUTO declines)
        rows = 0
    work = _factor(body) * rows
    init = [float(v.init) if (v.type == "num" and v.init is not None) else float("nan") for v in pdv.slots]
    return Plan(src, dict(gen.sites), list(gen.lags), columns, out_slots, out_kinds, load, load_slots, flag_slots, by,
                step.notsorted, reader is not None and reader.end_slot is not None, has_set, reader, work, seed,
                gen.uses_rand, init)
