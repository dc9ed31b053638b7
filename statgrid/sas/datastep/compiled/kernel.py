"""DATA step statements and expressions → the Python source of one numba module: `_body` (one pass of the
implicit loop after the SET) and `_kernel` (the implicit loop over one batch of input rows). It mirrors
codegen.py/exprgen.py statement by statement, so that the two engines do the same operations in the same
order; anything outside the subset it knows raises Refuse (the step is left to the Python engine).

The PDV is a float64 array `v` indexed by the Python engine's slots (character slots unused: character
variables are only carried through, gathered by input row after the kernel — run.py)."""
from __future__ import annotations

from statgrid.sas.parse import ast as A
from statgrid.sas.parse import dsast as D
from statgrid.sas.datastep.compiled import state as S
from statgrid.sas.datastep.exprgen import _lag_n


class Refuse(Exception):
    """The step is outside the NUMBA engine's subset; the message says why."""


DECLARATIONS = (D.Length, D.Retain, D.Array, D.VarAttrs, D.By, D.Where)
ONE_ARG = {"ABS": "f_abs", "MISSING": "f_missing", "SIGN": "f_sign"}
ONE_ARG_BAIL = {"INT": "f_int", "CEIL": "f_ceil", "FLOOR": "f_floor", "SQRT": "f_sqrt", "EXP": "f_exp",
                "LOG": "f_log", "LOG10": "f_log10", "LOG2": "f_log2", "INTZ": "f_intz", "CEILZ": "f_ceilz",
                "FLOORZ": "f_floorz", "FUZZ": "f_fuzz"}
VARIADIC = {"MIN": "f_min", "MAX": "f_max", "N": "f_n", "NMISS": "f_nmiss", "COALESCE": "f_coalesce"}
VARIADIC_BAIL = {"SUM": "f_sum", "MEAN": "f_mean"}


def _runs(slots: list[int]) -> list[tuple[int, int]]:
    """Sorted slots as [lo, hi) runs of consecutive numbers (an array's elements reset as one slice)."""
    out: list[list[int]] = []
    for s in sorted(slots):
        if out and out[-1][1] == s:
            out[-1][1] = s + 1
        else:
            out.append([s, s + 1])
    return [(lo, hi) for lo, hi in out]


def compare_src(op: str, a: str, b: str) -> str:
    """A numeric comparison of two names as a Python/numba expression in SAS's order (runtime.eq/lt/le:
    every missing — only `.` here — equal to another and below every number)."""
    if op in ("GT", "GE"):
        a, b, op = b, a, ("LT" if op == "GT" else "LE")
    if op in ("EQ", "NE"):
        eq = f"({a} == {b} or ({a} != {a} and {b} != {b}))"
        return eq if op == "EQ" else f"(not {eq})"
    both = f"({a} == {a} and {b} == {b})"
    if op == "LT":
        return f"(({a} < {b}) if {both} else ({a} != {a} and {b} == {b}))"
    return f"(({a} <= {b}) if {both} else ({a} != {a}))"


def truth_src(x: str) -> str:
    """runtime.truth: neither missing nor 0."""
    return f"({x} == {x} and {x} != 0)"


class KernelGen:
    def __init__(self, step, out_slots: list[int], loop_cap: int):
        self.step, self.pdv = step, step.pdv
        self.out_slots = out_slots
        self.loop_cap = loop_cap
        self.lines: list[str] = []
        self.consts: list[str] = []
        self.const_names: dict[str, str] = {}
        self.sites: dict[tuple[int, int], int] = {}
        self.lags: list[int] = []             # per LAG site: its queue length
        self.loop_stack: list[list[str]] = []     # per open loop: the lines CONTINUE runs before `continue`
        self.d = 1
        self.tmp = 0
        self.uses_rand = False
        self.has_output = False
        self.array_slots = {s for a in step.pdv.arrays.values() for s in a.slots}
        self.used: set[int] = set()
        self.written: set[int] = set()

    # -- helpers --------------------------------------------------------------------------------------------------
    def emit(self, d: int, text: str) -> None:
        self.lines.append("    " * d + text)

    def fresh(self, base: str) -> str:
        self.tmp += 1
        return f"_{base}{self.tmp}"

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

    # -- expressions ----------------------------------------------------------------------------------------------
    # Each expression is flattened into statements emitted at depth self.d, in the Python engine's order of
    # evaluation (operands left to right, AND/OR short-circuited), and returns (source, kind): the source a
    # side-effect-free expression over constants, locals and temporaries; kind 'num' (float, NaN missing)
    # or 'bool'. What has effects (counts, random streams, LAG queues, the bail flag) is a statement.
    def e(self, text: str) -> None:
        self.emit(self.d, text)

    def temp(self, value: str, base: str = "t") -> str:
        t = self.fresh(base)
        self.e(f"{t} = {value}")
        return t

    def bail_check(self) -> None:
        self.e(f"if ist[{S.BAIL}] != 0: return {S.ST_BAIL}")

    def num(self, node) -> str:
        s, k = self.gen(node)
        return f"(1.0 if {s} else 0.0)" if k == "bool" else s

    def atom(self, node) -> str:
        """A numeric operand used more than once: a name or a constant."""
        s = self.num(node)
        if s.isidentifier() or s == "nan" or s.replace(".", "", 1).replace("e", "", 1).replace("-", "").isdigit():
            return s
        return self.temp(s)

    def boolean(self, node) -> str:
        s, k = self.gen(node)
        if k == "bool":
            return s
        x = s if s.isidentifier() else self.temp(s)
        return truth_src(x)

    def gen(self, n):
        m = getattr(self, "g_" + type(n).__name__, None)
        if m is None:
            raise Refuse(f"{type(n).__name__} expressions")
        return m(n)

    def g_Num(self, n):
        v = n.value
        if v != v:
            if getattr(v, "code", ".") != ".":
                raise Refuse("a special missing value")
            return "nan", "num"
        return repr(float(v)), "num"

    def g_Str(self, n):
        raise Refuse("a character expression")

    def numvar(self, name: str):
        if name in self.pdv.arrays:
            raise Refuse("an implicit array")
        v = self.pdv.get(name)
        if v is None or v.type != "num":
            raise Refuse(f"the character variable {name}" if v is not None else f"the variable {name}")
        if name.upper() == "_ERROR_":
            raise Refuse("_ERROR_")
        return v

    def g_Var(self, n):
        if "." in n.name and not n.name.startswith(("FIRST.", "LAST.")):
            raise Refuse(f"{n.name}")
        return self.ref(self.numvar(n.name)), "num"     # no assignment happens inside an expression

    def element(self, name: str, subs: list) -> str:
        """The element's place in v; the subscript checked as namespace.ix1 does ("Array subscript out of
        range": the Python engine's ERROR — the kernel stops)."""
        arr = self.pdv.arrays[name]
        if arr.implicit or arr.char or len(arr.dims) != 1 or any(x != 1 for x in arr.lower or [1]):
            raise Refuse(f"the array {name} (only one-dimensional numeric arrays from 1)")
        if len(subs) != 1 or subs == ["*"]:
            raise Refuse(f"the reference to array {name}")
        for sl in arr.slots:
            if self.pdv.slots[sl].type != "num":
                raise Refuse(f"the array {name}")
        slots = self.const_array(list(arr.slots))
        j = self.temp(self.num(subs[0]), "j")
        self.e(f"if not (1.0 <= {j} <= {float(len(arr.slots))!r}): return {S.ST_BAIL}")
        return f"v[{slots}[int({j}) - 1]]"

    def g_Index(self, n):
        if n.name not in self.pdv.arrays:
            raise Refuse("an undeclared array")
        return self.temp(self.element(n.name, n.subs)), "num"

    def counted(self, expr: str, node) -> str:
        """`expr` (an arithmetic result) with the "Missing values were generated" count at node's place."""
        t = self.temp(expr)
        self.e(f"if {t} != {t}: m{self.site(node)} += 1")
        return t

    def g_Unary(self, n):
        if n.op == "NOT":
            return f"(not {self.boolean(n.operand)})", "bool"
        s = self.num(n.operand)
        if n.op == "+":
            return s, "num"
        return self.counted(f"-{s}", n), "num"

    def g_Binary(self, n):
        if n.op in ("AND", "OR"):
            t = self.temp(self.boolean(n.left), "b")
            self.e(f"if {'' if n.op == 'AND' else 'not '}{t}:")
            self.d += 1
            self.e(f"{t} = {self.boolean(n.right)}")
            self.d -= 1
            return t, "bool"
        if n.op == "||":
            raise Refuse("concatenation")
        a, b = self.atom(n.left), self.atom(n.right)
        if n.op in ("MIN", "MAX"):
            return f"num{n.op.lower()}({a}, {b})", "num"
        if n.op in ("+", "-", "*"):
            return self.counted(f"{a} {n.op} {b}", n), "num"
        site = self.site(n)
        t = self.fresh("t")
        if n.op == "/":
            self.e(f"if {a} != {a} or {b} != {b}:")
            self.e(f"    m{site} += 1")
            self.e(f"    {t} = np.nan")
            self.e(f"elif {b} == 0:")
            # a division by zero sets _ERROR_ and dumps the PDV: only the Python engine writes that
            self.e(f"    return {S.ST_BAIL}")
            self.e("else:")
            self.e(f"    {t} = {a} / {b}")
            return t, "num"
        self.e(f"{t} = pow_({a}, {b}, cnt, NSITES, {site})")        # '**'
        return t, "num"

    def g_Compare(self, n):
        if n.colon:
            raise Refuse("the =: comparison")
        return compare_src(n.op, self.atom(n.left), self.atom(n.right)), "bool"

    def g_In(self, n):
        if n.array:
            raise Refuse("IN an array")
        src = self.atom(n.operand)             # evaluated once, as Python's `KEY(x) in set` does
        singles, los, his, miss = [], [], [], False
        for item in n.items:
            if isinstance(item, tuple):
                lo, hi = item[1], item[2]
                if not (isinstance(lo, A.Num) and isinstance(hi, A.Num)) or lo.value != lo.value \
                        or hi.value != hi.value:
                    raise Refuse("an IN range")
                los.append(float(lo.value))
                his.append(float(hi.value))
            elif isinstance(item, A.Num):
                if item.value != item.value:
                    if getattr(item.value, "code", ".") != ".":
                        raise Refuse("a special missing value")
                    miss = True
                else:
                    singles.append(float(item.value))
            else:
                raise Refuse("a character IN list")
        test = (f"in_list({src}, {self.const_floats(singles)}, {miss}, {self.const_floats(los)}, "
                f"{self.const_floats(his)})")
        return (f"(not {test})" if n.negated else test), "bool"

    def call(self, expr: str, bails: bool) -> str:
        """A helper call with effects (a random stream, a LAG queue, the bail flag): a statement, now."""
        t = self.temp(expr)
        if bails:
            self.bail_check()
        return t

    def g_Call(self, n):
        name = n.name
        if name in self.pdv.arrays:
            return self.temp(self.element(name, n.args)), "num"
        if name in ("DIM", "HBOUND", "LBOUND"):
            arr = self.pdv.arrays.get(n.args[0].name if n.args and isinstance(n.args[0], (A.Var, A.Index)) else "")
            if arr is None or arr.implicit:
                raise Refuse(f"{name}")
            src, _, _ = self.step.expr._bounds(n)
            return src, "num"
        lag = _lag_n(name)
        if lag:
            if len(n.args) != 1:
                raise Refuse(name)

            def lag_of(node) -> str:
                src = self.num(node)
                k = lag[1]
                if k == 0:
                    return src
                start = sum(self.lags)
                pos = S.IST_SIZE + len(self.lags)
                self.lags.append(k)
                return self.call(f"lag({src}, lq, ist, {pos}, {start}, {k})", False)
            if lag[0] == "DIF":                 # SUB(x, LAG(x)): x evaluated twice, as in exprgen
                x = self.atom(n.args[0])
                q = lag_of(n.args[0])
                return self.counted(f"{x} - {q}", n), "num"
            return lag_of(n.args[0]), "num"
        if name == "RAND":
            if not n.args or not isinstance(n.args[0], A.Str):
                raise Refuse("RAND without a distribution name constant")
            dist = n.args[0].value.strip().upper()
            if dist not in ("UNIFORM", "NORMAL", "GAUSSIAN") or len(n.args) > 3:
                raise Refuse(f"RAND('{dist}')")
            ps = [self.atom(a) for a in self.expand(n.args[1:])]
            self.uses_rand = True
            fn = "rand_uniform" if dist == "UNIFORM" else "rand_normal"
            ps_src = ps + ["0.0"] * (2 - len(ps))
            return self.call(f"{fn}(g, {len(ps)}, {ps_src[0]}, {ps_src[1]}, ist)", True), "num"
        args = self.expand(n.args)
        if name in ONE_ARG or name in ONE_ARG_BAIL:
            if len(args) != 1:
                raise Refuse(f"{name} with {len(args)} arguments")
            a = self.atom(args[0])
            if name in ONE_ARG:
                return f"{ONE_ARG[name]}({a})", "num"
            return self.call(f"{ONE_ARG_BAIL[name]}({a}, ist)", True), "num"
        if name in VARIADIC or name in VARIADIC_BAIL:
            if not args:
                raise Refuse(name)
            tup = "(" + ", ".join(self.atom(a) for a in args) + ",)"
            if name in VARIADIC:
                return f"{VARIADIC[name]}({tup})", "num"
            return self.call(f"{VARIADIC_BAIL[name]}({tup}, ist)", True), "num"
        if name == "ROUND":
            if len(args) not in (1, 2):
                raise Refuse("ROUND")
            unit = 1.0
            if len(args) == 2:
                u = args[1]
                if not isinstance(u, A.Num) or u.value != u.value:
                    raise Refuse("ROUND with a unit that is not a number constant")
                unit = abs(float(u.value))
            if unit == 0:
                raise Refuse("ROUND to a unit of 0")
            k = 0
            if unit < 1:
                inv = 1 / unit
                k = round(inv)
                # 1/k with k dividing 10**6: results of at most 6 decimals, exact through "%.15g" (rt.f_round)
                if abs(inv - k) >= 1e-9 * inv or 1_000_000 % k:
                    raise Refuse("ROUND to this unit")
            elif unit != int(unit) or unit >= 1e6:
                raise Refuse("ROUND to this unit")
            a = self.atom(args[0])
            return self.call(f"f_round({a}, {unit!r}, {float(k)!r}, ist)", True), "num"
        if name == "MOD":
            if len(args) != 2:
                raise Refuse("MOD")
            a, b = self.atom(args[0]), self.atom(args[1])
            return self.call(f"f_mod({a}, {b}, ist)", True), "num"
        if name in ("RANUNI", "UNIFORM", "RANNOR", "NORMAL"):
            if len(args) != 1:
                raise Refuse(name)
            fn = "f_ranuni" if name in ("RANUNI", "UNIFORM") else "f_rannor"
            return self.call(f"{fn}({self.atom(args[0])}, ist)", True), "num"
        raise Refuse(f"the function {name}")

    def expand(self, args: list) -> list:
        for a in args:
            if isinstance(a, A.Str):
                raise Refuse("a character argument")
        return self.step.expr.expand_args(args)

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
        self.emit(d, f"if {flag}:")
        self.block([st.then], d + 1)
        if st.else_ is not None:
            self.emit(d, "else:")
            self.block([st.else_], d + 1)

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
        guard = self.fresh("g")
        self.emit(d, f"{guard} = 0")
        if st.kind in ("while", "until"):
            first = self.fresh("f")
            self.emit(d, f"{first} = True")
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
            self.loop_stack.append([])
            self.block(st.body, d + 1)
            self.loop_stack.pop()
            return
        if st.kind != "iter" or not isinstance(st.var, A.Var):
            raise Refuse(f"this DO loop ({st.kind})")
        idx = self.ref(self.numvar(st.var.name), True)
        for start, stop, by in st.specs:
            if stop is None:                                   # a single value
                self.emit(d, f"{idx} = {self.at(d).num(start)}")
                self.emit(d, "for _once in range(1):")
                self.loop_stack.append([])
                self._loop_body(st, d + 1)
                self.loop_stack.pop()
                continue
            stop_v, by_v = self.fresh("stop"), self.fresh("by")
            self.emit(d, f"{idx} = {self.at(d).num(start)}")
            self.emit(d, f"{stop_v} = {self.at(d).num(stop)}")
            self.emit(d, f"{by_v} = {self.at(d).num(by) if by is not None else '1.0'}")
            self.emit(d, f"if {by_v} == 0 or {by_v} != {by_v}: return {S.ST_BAIL}")     # BY_ERROR
            self.emit(d, f"while ({idx} <= {stop_v}) if {by_v} > 0 else ({idx} >= {stop_v}):")
            self.cap(guard, d + 1)
            site = self.site(st)
            inc = [f"{idx} = {idx} + {by_v}", f"if {idx} != {idx}: m{site} += 1"]     # ADD at the DO's place
            self.loop_stack.append(inc)
            self._loop_body(st, d + 1)
            self.loop_stack.pop()
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
