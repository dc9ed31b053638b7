"""DATA step expressions → numba source for kernel.py (a mixin of KernelGen): each expression flattened
into statements in the Python engine's order of evaluation (exprgen.py), with SAS's missing values (NaN),
comparisons, "Missing values were generated" counts and the functions the NUMBA engine knows; anything
else raises Refuse."""
from __future__ import annotations

from statgrid.sas.parse import ast as A
from statgrid.sas.datastep.compiled import state as S
from statgrid.sas.datastep.exprgen import _lag_n


class Refuse(Exception):
    """The step is outside the NUMBA engine's subset; the message says why."""


ONE_ARG = {"ABS": "f_abs", "MISSING": "f_missing", "SIGN": "f_sign"}
ONE_ARG_BAIL = {"INT": "f_int", "CEIL": "f_ceil", "FLOOR": "f_floor", "SQRT": "f_sqrt", "EXP": "f_exp",
                "LOG": "f_log", "LOG10": "f_log10", "LOG2": "f_log2", "INTZ": "f_intz", "CEILZ": "f_ceilz",
                "FLOORZ": "f_floorz", "FUZZ": "f_fuzz"}
VARIADIC = {"MIN": "f_min", "MAX": "f_max", "N": "f_n", "NMISS": "f_nmiss", "COALESCE": "f_coalesce"}
VARIADIC_BAIL = {"SUM": "f_sum", "MEAN": "f_mean"}


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


class KernelExprs:
    """The expressions of KernelGen (its emit, fresh, local, site, const_array and ref; self.d the depth)."""

    # Each expression is flattened into statements emitted at depth self.d, in the Python engine's order of
    # evaluation (operands left to right, AND/OR short-circuited), and returns (source, kind): the source a
    # side-effect-free expression over constants, locals and temporaries; kind 'num' (float, NaN missing)
    # or 'bool'. What has effects (counts, random streams, LAG queues, the bail flag) is a statement.
    def e(self, text: str) -> None:
        self.emit(self.d, text)

    def temp(self, value: str, base: str = "t") -> str:
        return self.local(self.d, base, value)

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
        from statgrid.sas.datastep.exprgen import bounds_function
        if bounds_function(name):
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
        out = self.step.expr.expand_args(args)
        if any(type(a).__name__ == "Splat" for a in out):
            raise Refuse("OF over a large _TEMPORARY_ array")
        return out
