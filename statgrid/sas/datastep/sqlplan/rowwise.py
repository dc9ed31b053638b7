"""The row-wise pattern: one SET of one data set, then assignments, IF/THEN/ELSE, subsetting IF and DELETE
— each output row a function of its input row — as one SELECT over the input (sqlplan/__init__.py runs it).

The statements are translated in order. Each assignment makes a new version of its variable: a column
`__vN` of a projection layer (a layer is closed when a later expression reads one of its columns); an
assignment under IF conditions is `CASE WHEN guard THEN value ELSE previous version END`, the guard being
the IF's condition saved as a column `__gN` where the IF stands (later assignments cannot change it). A
subsetting IF or a DELETE is a filter at its place. What the Python engine would do differently is refused
(Refuse): see exprsql.py for expressions; here: RETAIN, arrays, loops, OUTPUT, BY, more than one SET, SET
options that make rows depend on each other, statements before the SET that run, reading a variable
that may be missing, character values other than a variable or a constant."""
from __future__ import annotations

from statgrid.libraries import sql_ident
from statgrid.sas.parse import ast as A
from statgrid.sas.parse import dsast as D
from statgrid.sas.datastep.sqlplan.exprsql import ExprSql, Refuse, Val

# statements that only declare (the compile phase did their work): allowed anywhere
BASE = "__sqlplan_base__"            # stands for the input's SELECT until it is known

ATTR_KINDS = ("KEEP", "DROP", "RENAME", "LABEL", "FORMAT", "INFORMAT")


def declarative(st) -> bool:
    return (isinstance(st, D.VarAttrs) and st.kind in ATTR_KINDS) or isinstance(st, D.Where) or \
        (isinstance(st, D.Simple) and st.kind == "EMPTY")


def check_pdv(step, allow_auto=("_N_", "_ERROR_")) -> None:
    pdv = step.pdv
    if pdv.arrays:
        raise Refuse("arrays")
    for var in pdv.slots:
        if var.auto:
            if var.name.upper() not in allow_auto:
                raise Refuse(f"the automatic variable {var.name}")
            continue
        if (var.retained and not var.from_input) or var.init is not None:
            raise Refuse(f"variable {var.name} is retained")


def check_set(step, st) -> None:
    if not isinstance(st, D.SetStmt) or st.kind != "SET" or len(st.datasets) != 1:
        raise Refuse("not one SET of one data set")
    if st.end or st.point or st.nobs or st.datasets[0].in_var:
        raise Refuse("SET with END=, POINT=, NOBS= or IN=")
    if step.by:
        raise Refuse("BY")


def char_input_sql(col: str, length: int) -> str:
    """An input character value as the Python engine holds it (cut to the variable's length, a missing
    value blank) and writes it (trailing blanks removed)."""
    return f"rtrim(left(coalesce({col}, ''), {int(length)}), ' ')"


class RowPlan:
    """The translation of the statements after the SET, given the input columns' magnitude bounds."""

    def __init__(self, step, reader, bounds: dict[str, float] | None):
        self.step, self.reader = step, reader
        self.rel = BASE
        self.pending: list[tuple[str, str]] = []
        self.n = 0
        self.env: dict[str, Val] = {}
        self.info: dict[str, tuple[bool, float]] = {}
        pdv = step.pdv
        self.input_num: dict[str, str] = {}      # PDV name → input column, numeric
        for c in reader.infos[0]:
            var = pdv.get(c.name)
            up = c.name.upper()
            if c.type == "num":
                self.input_num[up] = c.name
                b = 1.0 if bounds is None else bounds[up] if up in bounds else float("inf")
                self.env[up] = Val(sql_ident(c.name), "num", True, b)
            else:
                self.env[up] = Val(char_input_sql(sql_ident(c.name), var.length), "char", True, 0.0, var.length)
        for up in pdv.order:
            var = pdv.vars[up]
            if up not in self.env:
                self.env[up] = Val("NULL::DOUBLE" if var.type == "num" else "''", var.type or "num", False,
                                   0.0, var.length or 8)

    # -- layers -------------------------------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        self.n += 1
        return f"__{base}{self.n}"

    def need(self, refs: set) -> None:
        if any(a in refs for a, _ in self.pending):
            self.flush()

    def flush(self) -> None:
        if self.pending:
            cols = ", ".join(f"{e} AS {a}" for a, e in self.pending)
            self.rel = f"SELECT *, {cols} FROM ({self.rel})"
            self.pending = []

    def filter(self, cond: str, refs: set) -> None:
        self.flush()
        self.rel = f"SELECT * FROM ({self.rel}) WHERE {cond}"

    def expr(self):
        refs: set = set()
        return ExprSql(self.env, refs), refs

    # -- statements ---------------------------------------------------------------------------------------------
    def block(self, sts: list, guard: str | None) -> None:
        for st in sts:
            self.stmt(st, guard)

    def stmt(self, st, guard: str | None) -> None:
        if declarative(st):
            return
        if isinstance(st, D.Assign):
            self.assign(st, guard)
        elif isinstance(st, D.If):
            self.if_(st, guard)
        elif isinstance(st, D.Do) and st.kind == "block":
            self.block(st.body, guard)
        elif isinstance(st, D.Simple) and st.kind == "DELETE":
            self.filter("FALSE" if guard is None else f"(NOT {guard})", set())
        else:
            raise Refuse(f"the statement at line {st.line} ({type(st).__name__} {getattr(st, 'kind', '')})")

    def assign(self, st, guard: str | None) -> None:
        t = st.target
        if not isinstance(t, A.Var) or t.name not in self.env:
            raise Refuse("an assignment to something other than a variable")
        old = self.env[t.name]
        x, refs = self.expr()
        if old.kind == "char":
            # the Python engine pads or cuts the value to the variable's length and writes it without its
            # trailing blanks; a missing character value is blank, so no NOTE and no certainty to track
            sql, bound = f"rtrim(left({x.char(st.expr)}, {int(old.length)}), ' ')", 0.0
        else:
            sql, bound = x.num(st.expr)
        if guard is not None:
            refs.add(guard)
            sql = f"CASE WHEN {guard} THEN {sql} ELSE {old.sql} END"
            refs.add(old.sql)
        self.need(refs)
        col = self.fresh("v")
        self.pending.append((col, sql))
        self.env[t.name] = Val(col, old.kind, True, bound, old.length)

    def if_(self, st, guard: str | None) -> None:
        x, refs = self.expr()
        cond = x.cond(st.cond)
        if st.then is None:                                   # subsetting IF
            self.filter(cond if guard is None else f"((NOT {guard}) OR {cond})", refs)
            return
        self.need(refs)
        g = self.fresh("g")
        self.pending.append((g, cond if guard is None else f"({guard} AND {cond})"))
        self.flush()
        before = dict(self.env)
        self.stmt(st.then, g)
        after_then = dict(self.env)
        if st.else_ is not None:
            # the else branch reads the values as they were before the IF (its rows were not changed by the
            # THEN branch's CASE columns, so reading the newest columns is right; certainty is per path)
            for k, v in before.items():
                cur = self.env[k]
                self.env[k] = Val(cur.sql, v.kind, v.sure, v.bound, v.length)
            ng = self.fresh("g")
            self.pending.append((ng, f"({guard} AND NOT {g})" if guard is not None else f"(NOT {g})"))
            self.flush()
            self.stmt(st.else_, ng)
        after_else = self.env
        for k in after_then:
            a, b = after_then[k], after_else[k]
            if st.else_ is None:
                b = before[k]
            cur = self.env[k]
            self.env[k] = Val(cur.sql, cur.kind, a.sure and b.sure, max(a.bound, b.bound), cur.length)


def plan_rowwise(step, bounds: dict[str, float] | None):
    """(RowPlan, SetStmt) for a step of the row-wise pattern, else Refuse. With bounds None the structure
    is checked (no data read); with the inputs' bounds the magnitudes too."""
    if len(step.plan.readers) != 1:
        raise Refuse("not exactly one SET")
    check_pdv(step)
    body = step.body
    i = 0
    while i < len(body) and declarative(body[i]):
        i += 1
    if i == len(body):
        raise Refuse("no SET")
    check_set(step, body[i])
    reader = step.plan.readers[0]
    rp = RowPlan(step, reader, bounds)
    rp.block(body[i + 1:], None)
    rp.flush()
    return rp, body[i]


def referenced_inputs(step, rp: RowPlan) -> list[str]:
    """The input numeric columns any expression of the step names (checked for missing values)."""
    names = set()
    for st in step.body:
        for n in _walk_stmt(st):
            if isinstance(n, A.Var) and n.name in rp.input_num:
                names.add(n.name)
    return sorted(names)


def _walk_stmt(st):
    if isinstance(st, D.Assign):
        yield from A.walk(st.expr)
    elif isinstance(st, D.If):
        yield from A.walk(st.cond)
        for s in (st.then, st.else_):
            if s is not None:
                yield from _walk_stmt(s)
    elif isinstance(st, D.Do):
        for s in st.body:
            yield from _walk_stmt(s)
