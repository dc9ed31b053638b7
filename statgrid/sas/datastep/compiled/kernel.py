"""DATA step statements and expressions → the Python source of one numba module: `_body` (one pass of the
implicit loop after the SET) and `_kernel` (the implicit loop over one batch of input rows). It mirrors
codegen.py/exprgen.py statement by statement, so that the two engines do the same operations in the same
order; anything outside the subset it knows raises Refuse (the step is left to the Python engine).

The PDV is a float64 array `v` indexed by the Python engine's slots (character slots unused: character
variables are only carried through, gathered by input row after the kernel — run.py). The expressions are
exprs.py's (KernelExprs); the statements and the module are here."""
from __future__ import annotations

from statgrid.sas.parse import ast as A
from statgrid.sas.parse import dsast as D
from statgrid.sas.datastep.codegen import SourceLines
from statgrid.sas.datastep.compiled import state as S
from statgrid.sas.datastep.compiled.exprs import KernelExprs, Refuse, compare_src
from statgrid.sas.datastep.compiled.exprs import truth_src  # noqa: F401  (imported from here by tests)

DECLARATIONS = (D.Length, D.Retain, D.Array, D.VarAttrs, D.By, D.Where)


def _runs(slots: list[int]) -> list[tuple[int, int]]:
    """Sorted slots as [lo, hi) runs of consecutive numbers (an array's elements reset as one slice)."""
    out: list[list[int]] = []
    for s in sorted(slots):
        if out and out[-1][1] == s:
            out[-1][1] = s + 1
        else:
            out.append([s, s + 1])
    return [(lo, hi) for lo, hi in out]


class KernelGen(KernelExprs, SourceLines):
    def __init__(self, step, out_slots: list[int], loop_cap: int):
        super().__init__()
        self.step, self.pdv = step, step.pdv
        self.out_slots = out_slots
        self.loop_cap = loop_cap
        self.consts: list[str] = []
        self.const_names: dict[str, str] = {}
        self.sites: dict[tuple[int, int], int] = {}
        self.lags: list[int] = []             # per LAG site: its queue length
        self.loop_stack: list[list[str]] = []     # per open loop: the lines CONTINUE runs before `continue`
        self.d = 1
        self.uses_rand = False
        self.has_output = False
        self.array_slots = {s for a in step.pdv.arrays.values() for s in a.slots}
        self.used: set[int] = set()
        self.written: set[int] = set()

    # -- helpers --------------------------------------------------------------------------------------------------
    def site(self, node) -> int:
        key = (node.line, node.col)
        if key not in self.sites:
            self.sites[key] = len(self.sites)
        return self.sites[key]

    def const_array(self, values: list, dtype: str = "int64") -> str:
        """A module-level constant array (numba freezes it into the machine code), one per content."""
        text = f"np.array({values!r}, dtype=np.{dtype})"
        if text not in self.const_names:
            self.const_names[text] = f"_C{len(self.consts)}"
            self.consts.append(f"{self.const_names[text]} = {text}")
        return self.const_names[text]

    def const_floats(self, values: list[float]) -> str:
        return self.const_array(values, "float64")

    # -- PDV variables: a numeric variable no array holds lives in a local of _body (a register in the loops),
    # loaded from v on entry and stored back wherever v is read next (OUTPUT, the iteration's end); the
    # missing-value counts are locals too, added to `cnt` when the pass ends --------------------------------
    def ref(self, var, write: bool = False) -> str:
        if var.slot in self.array_slots:
            return f"v[{var.slot}]"
        self.used.add(var.slot)
        if write:
            self.written.add(var.slot)
        return f"x{var.slot}"

    def ret(self, d: int, code: int, cond: str | None = None) -> None:
        if cond is not None:
            self.emit(d, f"if {cond}:")
            d += 1
        self.emit(d, "#SYNCRET")
        self.emit(d, f"return {code}")

    def finish_body(self, lines: list[str]) -> list[str]:
        """The prologue (locals loaded, counts zero) and each #SYNC point (written locals stored; at a
        return, the counts added) of _body's lines."""
        sites = range(len(self.sites))
        out = ["    " + f"x{s} = v[{s}]" for s in sorted(self.used)] + ["    " + f"m{i} = 0" for i in sites]
        for line in lines:
            mark = line.strip()
            if mark in ("#SYNC", "#SYNCRET"):
                ind = line[:len(line) - len(line.lstrip())]
                out += [f"{ind}v[{s}] = x{s}" for s in sorted(self.written)]
                if mark == "#SYNCRET":
                    out += [f"{ind}cnt[{i}] += m{i}" for i in sites]
                out.append(f"{ind}pass")
            else:
                out.append(line)
        return out

    # -- statements -----------------------------------------------------------------------------------------------
    def at(self, d: int) -> "KernelGen":
        self.d = d
        return self

    def capture(self, fn) -> list[str]:
        """The lines `fn` emits, indented from depth 0 (to be emitted again where they are needed)."""
        saved, saved_d = self.lines, self.d
        self.lines, self.d = [], 0
        try:
            fn()
            return self.lines
        finally:
            self.lines, self.d = saved, saved_d

    def emit_lines(self, d: int, lines: list[str]) -> None:
        for line in lines:
            self.emit(d, line)

    def stmt(self, st, d: int) -> None:
        if isinstance(st, DECLARATIONS):
            return
        m = getattr(self, "s_" + type(st).__name__, None)
        if m is None:
            raise Refuse(f"the {type(st).__name__} statement")
        self.d = d
        m(st, d)

    def block(self, sts, d: int) -> None:
        self.emit(d, "pass")
        for s in sts:
            self.stmt(s, d)

    def s_Assign(self, st, d):
        value = self.at(d).num(st.expr)
        t = st.target
        if isinstance(t, A.Var):
            self.emit(d, f"{self.ref(self.numvar(t.name), True)} = {value}")
            return
        if isinstance(t, A.Index) and t.name in self.pdv.arrays:
            subs = t.subs
        elif isinstance(t, A.Call) and t.name in self.pdv.arrays:
            subs = t.args
        else:
            raise Refuse("this assignment target")
        tmp = self.temp(value)                          # Python evaluates the value before the subscript
        self.emit(d, f"{self.element(t.name, subs)} = {tmp}")

    def s_SumStmt(self, st, d):
        if not isinstance(st.target, A.Var):
            raise Refuse("a sum statement on an array element")
        tmp = self.temp(self.at(d).num(st.expr), "s")
        ts = self.ref(self.numvar(st.target.name), True)
        # SUM(var, expr): a missing expression leaves the variable as it is (SAS 9.4 Statements: Sum)
        self.emit(d, f"if {tmp} == {tmp}:")
        self.emit(d + 1, f"{ts} = ({ts} + {tmp}) if {ts} == {ts} else {tmp}")

    def s_If(self, st, d):
        flag = self.temp(self.at(d).boolean(st.cond), "b")
        if st.then is None:
            self.ret(d, S.ST_DEL, f"not {flag}")
            return
        self.if_then_else(flag, st, d)

    def s_Select(self, st, d):
        subj = None
        if st.expr is not None:
            subj = self.temp(self.at(d).num(st.expr), "sel")
        # WHEN expressions are tried one by one until one is true (the Python engine's `or` chain)
        depth = d
        for exprs, body in st.whens:
            for e in exprs:
                self.d = depth
                if subj is None:
                    c = self.boolean(e)
                else:
                    x = self.atom(e)
                    c = compare_src("EQ", subj, x)
                flag = self.temp(c, "w")
                self.emit(depth, f"if {flag}:")
                self.block([body], depth + 1)
                self.emit(depth, "else:")
                depth += 1
        if st.has_otherwise:
            self.block([st.otherwise] if st.otherwise else [], depth)
        else:
            self.emit(depth, f"return {S.ST_BAIL}")     # "Unsatisfied WHEN clause": the Python engine's ERROR

    def cap(self, guard: str, d: int) -> None:
        self.emit(d, f"{guard} += 1")
        self.emit(d, f"if {guard} > {self.loop_cap}: return {S.ST_BAIL}")   # LOOP_ERROR

    def s_Do(self, st, d):
        if st.kind == "block":
            self.block(st.body, d)
            return
        guard = self.local(d, "g", "0")
        if st.kind in ("while", "until"):
            first = self.local(d, "f", "True")
            self.emit(d, "while True:")
            if st.kind == "while":
                c = self.at(d + 1).boolean(st.while_)
                self.emit(d + 1, f"if not {c}: break")
            else:
                self.emit(d + 1, f"if not {first}:")
                c = self.at(d + 2).boolean(st.until)
                self.emit(d + 2, f"if {c}: break")
                self.emit(d + 1, f"{first} = False")
            self.cap(guard, d + 1)
            self.in_loop([], lambda: self.block(st.body, d + 1))
            return
        if st.kind != "iter" or not isinstance(st.var, A.Var):
            raise Refuse(f"this DO loop ({st.kind})")
        idx = self.ref(self.numvar(st.var.name), True)
        for spec in st.specs:
            start, stop, _ = spec
            if stop is None:                                   # a single value
                self.emit(d, f"{idx} = {self.at(d).num(start)}")
                self.emit(d, "for _once in range(1):")
                self.in_loop([], lambda: self._loop_body(st, d + 1))
                continue
            by_v = self.do_to(idx, spec, d, self.at(d).num, f"return {S.ST_BAIL}")     # BY_ERROR
            self.cap(guard, d + 1)
            site = self.site(st)
            inc = [f"{idx} = {idx} + {by_v}", f"if {idx} != {idx}: m{site} += 1"]     # ADD at the DO's place
            self.in_loop(inc, lambda: self._loop_body(st, d + 1))
            self.emit_lines(d + 1, inc)

    def _loop_body(self, st, d):
        if st.while_ is not None:
            c = self.at(d).boolean(st.while_)
            self.emit(d, f"if not {c}: break")
        until: list[str] = []
        if st.until is not None:
            # UNTIL is tested after the body: CONTINUE runs it too
            def gen_until():
                c = self.boolean(st.until)
                self.e(f"if {c}: break")
            until = self.capture(gen_until)
            self.loop_stack[-1] = until + self.loop_stack[-1]
        self.block(st.body, d)
        self.emit_lines(d, until)

    def s_Simple(self, st, d):
        k = st.kind
        if k == "EMPTY":
            self.emit(d, "pass")
        elif k == "OUTPUT":
            names = self.step.plan.output_names
            for name in st.args:
                up = name.upper() if "." in name else f"WORK.{name.upper()}"
                if [up] != names:
                    raise Refuse("OUTPUT to another data set")
            self.has_output = True
            self.emit(d, "#SYNC")
            self.emit(d, "output(v, ob, osrc, row, ist, hook, outs)")
            self.emit(d, f"if ist[{S.BAIL}] != 0: return {S.ST_BAIL}")   # the flush failed
        elif k == "DELETE":
            self.ret(d, S.ST_DEL)
        elif k == "STOP":
            self.ret(d, S.ST_STOP)
        elif k == "RETURN":
            self.ret(d, S.ST_OK)
        elif k in ("LEAVE", "CONTINUE"):
            if not self.loop_stack:
                self.emit(d, "pass")
            elif k == "LEAVE":
                self.emit(d, "break")
            else:
                self.emit_lines(d, self.loop_stack[-1])
                self.emit(d, "continue")
        else:
            raise Refuse(f"the {k} statement")

    def s_CallStmt(self, st, d):
        if st.name.upper() != "STREAMINIT":
            raise Refuse(f"CALL {st.name}")
        if not all(isinstance(x, A.Num) for x in st.args):
            raise Refuse("CALL STREAMINIT with an argument that is not a number constant")
        # checked by eligible.py: one CALL STREAMINIT, a positive constant, before every RAND; the seed is
        # given to the generator before the kernel runs
        self.emit(d, "pass")

    # -- the module -----------------------------------------------------------------------------------------------
    def module_from(self, body_lines: list[str], load_slots: list[int], flag_slots: list[int],
                    reset_slots: list[int], n_slot: int, err_slot: int, has_set: bool, implicit_output: bool,
                    ) -> str:
        """The module's source around `body_lines` (the statements after the SET, generated at depth 1)."""
        body_src = "\n".join(self.finish_body(body_lines))
        load = self.const_array(load_slots)
        flags = self.const_array(flag_slots)
        implicit = "r == 0" if implicit_output else "False"
        head = [
            '"""A DATA step compiled by statgrid (datastep/compiled/kernel.py)."""',
            "import math",
            "import numpy as np",
            "from numba import njit",
            "from statgrid.sas.datastep.compiled.rt import *  # noqa: F401,F403",
            "CACHE = False",
            f"NSITES = {len(self.sites)}",
            *self.consts,
            "",
            "@njit(cache=CACHE)",
            "def _body(v, cnt, ist, ob, osrc, row, lq, g, hook, outs):",
            body_src,
            "",
            "@njit(cache=CACHE)",
            "def _kernel(inp, fl, nrows, v, cnt, ist, ob, osrc, lq, g, hook, outs):",
            f"    n = ist[{S.NITER}]",
            "    i = 0",
            f"    while i < {'nrows' if has_set else '1'}:",
            "        n += 1",
            f"        v[{n_slot}] = float(n)",
            f"        v[{err_slot}] = 0.0",
            *[f"        v[{lo}:{hi}] = np.nan" for lo, hi in _runs(reset_slots)],
        ]
        if has_set:
            head += [
                f"        for c in range({load}.shape[0]):",
                f"            v[{load}[c]] = inp[c, i]",
                f"        for c in range({flags}.shape[0]):",
                f"            v[{flags}[c]] = fl[c, i]",
                f"        ist[{S.ROWSREAD}] += 1",
            ]
        head += [
            "        r = _body(v, cnt, ist, ob, osrc, i, lq, g, hook, outs)",
            "        i += 1",
            f"        ist[{S.NITER}] = n",
            f"        if r == {S.ST_BAIL} or ist[{S.BAIL}] != 0:",
            f"            return {S.ST_BAIL}",
            f"        if r == {S.ST_STOP}:",
            f"            return {S.ST_STOP}",
            f"        if {implicit}:",
            "            output(v, ob, osrc, i - 1, ist, hook, outs)",
            f"            if ist[{S.BAIL}] != 0:",
            f"                return {S.ST_BAIL}",
            f"    return {S.ST_OK}",
        ]
        return "\n".join(head) + "\n"
