"""Expressions → Python source for the generated step function. Each expression is typed at compile
time: 'num' (a float; missing = NaN), 'char' (a str; its length known for the PDV), or 'bool' (a Python
bool from a comparison or logical operator, turned into 1/0 where a number is needed). SAS's implicit
conversions are made here with their NOTEs counted by place (SAS 9.4 Language Reference: Concepts,
"Automatic Numeric-Character Conversion")."""
from __future__ import annotations

from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.parse import ast as A
from statgrid.sas.values import MISSING


def _assign_out(result, v, outs):
    """A function's (result, [values of the arguments it assigns]) → the values into the PDV, the result."""
    if not (isinstance(result, tuple) and len(result) == 2):
        return result
    value, new = result
    for out, x in zip(outs, new or []):
        if out is None or x is None:
            continue
        slot, char, length = out
        if char:
            v[slot] = str(x)[:length].ljust(length)
        else:
            try:
                v[slot] = float(x)
            except (TypeError, ValueError):
                v[slot] = MISSING
    return value


def bounds_function(name: str) -> str:
    """'DIM', 'HBOUND' or 'LBOUND' for DIM/HBOUND/LBOUND and their DIMn forms (DIM2 …), else ''."""
    for base in ("DIM", "HBOUND", "LBOUND"):
        if name == base or (name.startswith(base) and name[len(base):].isdigit() and name[len(base):] != "0"):
            return base
    return ""

_CMP = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}
_ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow_"}
LAG_RE_NAMES = ("LAG", "DIF")


def _lag_n(name: str) -> tuple[str, int] | None:
    for base in LAG_RE_NAMES:
        if name.startswith(base):
            rest = name[len(base):]
            if rest == "":
                return base, 1
            if rest.isdigit():
                return base, int(rest)
    return None



SPLAT_OVER = 256          # a _TEMPORARY_ array longer than this goes into a function call as one slice


class Splat:
    """OF t{*} over a large _TEMPORARY_ array: the PDV row's slots [start, stop) spread into the call."""

    def __init__(self, line: int, start: int, stop: int):
        self.line, self.col, self.start, self.stop = line, 0, start, stop

class ExprGen:
    def __init__(self, pdv, ns: dict, program: Any, notes):
        self.pdv, self.ns, self.program, self.notes = pdv, ns, program, notes
        self.n_const = 0

    def const(self, value) -> str:
        name = f"_k{self.n_const}"
        self.n_const += 1
        self.ns[name] = value
        return name

    # -- conversions ---------------------------------------------------------------------------------------------
    def as_num(self, node) -> str:
        src, kind, _ = self.gen(node)
        if kind == "num":
            return src
        if kind == "bool":
            return f"(1.0 if {src} else 0.0)"
        self.notes.char2num[(node.line, node.col)] += 1
        return f"C2N({src}, {(node.line, node.col)!r})"

    def as_char(self, node) -> tuple[str, int]:
        src, kind, length = self.gen(node)
        if kind == "char":
            return src, length
        if kind == "bool":
            src = f"(1.0 if {src} else 0.0)"
        self.notes.num2char[(node.line, node.col)] += 1
        return f"BEST12({src})", 12

    def as_bool(self, node) -> str:
        src, kind, _ = self.gen(node)
        if kind == "bool":
            return src
        if kind == "char":
            src = f"C2N({src}, {(node.line, node.col)!r})"
        return f"TRUTH({src})"

    # -- nodes ---------------------------------------------------------------------------------------------------
    def gen(self, n) -> tuple[str, str, int]:
        m = getattr(self, "g_" + type(n).__name__, None)
        if m is None:
            raise SasError(f"{type(n).__name__} is not valid in a DATA step expression", n.line, n.col)
        return m(n)

    def g_Num(self, n):
        v = n.value
        if v != v:
            return (self.const(v) if getattr(v, "code", ".") != "." else "nan"), "num", 8
        return repr(float(v)), "num", 8

    def g_Str(self, n):
        return repr(n.value), "char", max(len(n.value), 1)

    def var(self, name: str, text: str, line: int, col: int):
        v = self.pdv.get(name)
        if v is None:
            v = self.pdv.declare(text)
        if v.type is None:
            v.type, v.length = "num", 8
        return v

    def g_Var(self, n):
        if n.name.endswith(".NUM_ITEMS"):                             # h.num_items: a hash attribute
            return f"HASH[{n.name.split('.')[0]!r}].call('NUM_ITEMS', [], v)", "num", 8
        if n.name in self.pdv.arrays and not self.pdv.arrays[n.name].implicit:
            raise SasError(f"Illegal reference to the array {n.text}", n.line, n.col, n.text, "an array element a{i}")
        if n.name in self.pdv.arrays:                               # implicit array: the element at _I_
            return self.element(n.name, [], n.line, n.col)
        v = self.var(n.name, n.text, n.line, n.col)
        return f"v[{v.slot}]", v.type, v.length or 8

    def element(self, name: str, subs: list, line: int, col: int):
        arr = self.pdv.arrays[name]
        if arr.implicit:
            idx = f"v[{self.pdv.get(arr.index_var).slot}]" if not subs else self.as_num(subs[0])
            subs_src = [idx]
        else:
            if len(subs) != len(arr.dims):
                raise SasError(f"Array {name} has {len(arr.dims)} dimension(s); {len(subs)} subscript(s) given",
                               line, col, name)
            subs_src = [self.as_num(s) for s in subs]
        el = self.pdv.slots[arr.slots[0]] if arr.slots else None
        kind = "char" if arr.char else "num"
        length = (el.length if el and el.length else 8)
        if len(arr.dims) == 1 and all(x == 1 for x in arr.lower):
            sl = self.const(tuple(arr.slots))
            s = subs_src[0]
            return f"v[IX1({sl}, {s}, {name!r}, {line}, {col})]", kind, length
        info = self.const(arr)
        return f"v[IXN({info}, [{', '.join(subs_src)}], {line}, {col})]", kind, length

    def g_Index(self, n):
        if n.name not in self.pdv.arrays:
            raise SasError(f"Undeclared array referenced: {n.name}", n.line, n.col, n.name, "an ARRAY statement before")
        if n.subs == ["*"]:
            raise SasError(f"{n.name}{{*}} is valid only in a function's arguments", n.line, n.col, n.name)
        return self.element(n.name, n.subs, n.line, n.col)

    def g_Unary(self, n):
        if n.op == "NOT":
            return f"(not {self.as_bool(n.operand)})", "bool", 8
        s = self.as_num(n.operand)
        if n.op == "+":
            return s, "num", 8
        return f"NEG({s}, {(n.line, n.col)!r})", "num", 8

    def g_Binary(self, n):
        if n.op in ("AND", "OR"):
            return f"({self.as_bool(n.left)} {n.op.lower()} {self.as_bool(n.right)})", "bool", 8
        if n.op == "||":
            (a, la), (b, lb) = self.as_char(n.left), self.as_char(n.right)
            return f"({a} + {b})", "char", min(la + lb, 32767)
        a, b = self.as_num(n.left), self.as_num(n.right)
        if n.op in ("MIN", "MAX"):
            return f"NUM{n.op}({a}, {b})", "num", 8
        return f"{_ARITH[n.op].upper()}({a}, {b}, {(n.line, n.col)!r})", "num", 8

    def _operands(self, left, right):
        (a, ka, _), (b, kb, _) = self.gen(left), self.gen(right)
        if ka == "char" and kb == "char":
            return a, b, "char"
        if ka == "char":
            a = f"C2N({a}, {(left.line, left.col)!r})"
        if kb == "char":
            b = f"C2N({b}, {(right.line, right.col)!r})"
        if ka == "bool":
            a = f"(1.0 if {a} else 0.0)"
        if kb == "bool":
            b = f"(1.0 if {b} else 0.0)"
        return a, b, "num"

    def g_Compare(self, n):
        a, b, kind = self._operands(n.left, n.right)
        op = n.op
        if kind == "char":
            if n.colon:
                return f"CMPCOLON({a}, {b}, {_CMP[op]!r})", "bool", 8
            return f"({a}.rstrip(' ') {_CMP[op]} {b}.rstrip(' '))", "bool", 8
        if op == "EQ":
            return f"EQ({a}, {b})", "bool", 8
        if op == "NE":
            return f"(not EQ({a}, {b}))", "bool", 8
        if op in ("LT", "LE"):
            return f"{op}({a}, {b})", "bool", 8
        return f"{'LT' if op == 'GT' else 'LE'}({b}, {a})", "bool", 8

    def g_In(self, n):
        src, kind, _ = self.gen(n.operand)
        if n.array:
            arr = self.pdv.arrays.get(n.array)
            if arr is None:
                raise SasError(f"Array {n.array} is not defined", n.line, n.col, n.array)
            vals = ", ".join(f"v[{s}]" for s in arr.slots)
            if arr.char:
                test = f"({src}.rstrip(' ') in [x.rstrip(' ') for x in ({vals},)])"
            else:
                test = f"(KEY({src}) in [KEY(x) for x in ({vals},)])"
        else:
            singles, ranges = [], []
            for item in n.items:
                if isinstance(item, tuple):
                    ranges.append((item[1].value, item[2].value))
                elif isinstance(item, A.Str):
                    singles.append(item.value.rstrip(" "))
                elif isinstance(item, A.Num):
                    singles.append(item.value if item.value == item.value else ("M", getattr(item.value, "code", ".")))
                else:
                    raise SasError("An IN list holds constants only", item.line, item.col)
            if kind == "char":
                test = f"({src}.rstrip(' ') in {self.const(frozenset(singles))})"
            else:
                if kind == "bool":
                    src = f"(1.0 if {src} else 0.0)"
                parts = [f"(KEY({src}) in {self.const(frozenset(singles))})"] if singles else []
                if ranges:
                    parts.append(f"INRANGES({src}, {self.const(tuple(ranges))})")
                test = "(" + " or ".join(parts or ["False"]) + ")"
        return (f"(not {test})" if n.negated else test), "bool", 8

    def g_Call(self, n):
        name = n.name
        if name in self.pdv.arrays:
            return self.element(name, n.args, n.line, n.col)
        if bounds_function(name):
            return self._bounds(n)
        from statgrid.sas.datastep import vfuncs
        got = vfuncs.generate(self, n)
        if got is not None:
            return got
        lag = _lag_n(name)
        if lag:
            if len(n.args) != 1:
                raise SasError(f"{name} takes one argument", n.line, n.col, name)
            src, kind, length = self.gen(n.args[0])
            if kind == "bool":
                src, kind = f"(1.0 if {src} else 0.0)", "num"
            from statgrid.sas.datastep.runtime import Lag
            q = self.const(Lag(lag[1], " " * length if kind == "char" else MISSING))
            if lag[0] == "DIF":
                if kind == "char":
                    raise SasError("DIF needs a numeric argument", n.line, n.col, name)
                return f"SUB({src}, {q}({src}), {(n.line, n.col)!r})", "num", 8
            return f"{q}({src})", kind, length
        from statgrid.sas.functions import lookup_function
        f = lookup_function(name, n.line, n.col)
        args = self.expand_args(n.args)
        if len(args) < f.min_args or (f.max_args is not None and len(args) > f.max_args):
            raise SasError(f"The {name} function call has the wrong number of arguments", n.line, n.col, name,
                           f"{f.min_args} to {f.max_args if f.max_args is not None else 'any number of'} arguments")
        srcs, first_len = [], 8
        for i, a in enumerate(args):
            if isinstance(a, Splat):                 # a large _TEMPORARY_ array's values, spread into the call
                srcs.append(f"*v[{a.start}:{a.stop}]")
                continue
            want = f.arg_type(i)
            if want == "n":
                srcs.append(self.as_num(a))
            elif want == "c":
                s, ln = self.as_char(a)
                srcs.append(s)
                first_len = ln if i == 0 else first_len
            else:
                s, kind, ln = self.gen(a)
                if kind == "bool":
                    s = f"(1.0 if {s} else 0.0)"
                if i == 0:
                    first_len = ln
                srcs.append(s)
        fn = self.const(f.fn)
        rt = self.const(None)
        self.ns.setdefault("_rt_sites", []).append((rt, n.line, n.col))
        length, returns = 8, f.returns
        fmt_arg = next((a.value.lstrip("?") for a in args if isinstance(a, A.Str) and a.is_format), None)
        if name == "INPUT" and fmt_arg and fmt_arg.startswith("$"):
            returns = "char"                       # INPUT's type is its informat's (SAS 9.4 Functions: INPUT)
        if returns == "char":
            length = first_len if f.char_length == 0 else (f.char_length if f.char_length > 0 else 200)
            if f.char_length == -1 and fmt_arg:
                try:
                    from statgrid.sas.formats import format_width
                    length = format_width(fmt_arg, getattr(self.program, "formats", None))
                except Exception:  # noqa: BLE001 - an unknown format: found at run time
                    length = 200
        call = f"{fn}({rt}, {', '.join(srcs)})"
        if f.out_args:
            # FGET(fid, var, n), FILENAME(ref, …): the function assigns those arguments; it returns (result,
            # [their new values]), the variables named there get them (was: the tuple itself, a traceback)
            outs = []
            for pos in f.out_args:
                a = args[pos] if pos < len(args) else None
                var = self.pdv.get(a.name) if isinstance(a, A.Var) and a.name not in self.pdv.arrays else None
                outs.append((var.slot, var.type == "char", var.length or 8) if var is not None else None)
            call = f"{self.const(_assign_out)}({call}, v, {tuple(outs)!r})"
        return call, ("char" if returns == "char" else "num"), length

    def expand_args(self, args: list) -> list:
        out = []
        for a in args:
            if isinstance(a, A.OfList):
                for item in a.items:
                    arr = self.pdv.arrays.get(item[1]) if item[0] == "array" else None
                    if arr is not None and arr.temporary:
                        out += self._temp_elements(arr, a.line, a.col)
                        continue
                    for name in self.pdv.expand([item], a.line, a.col):
                        v = self.pdv.get(name)
                        out.append(A.Var(a.line, a.col, name, v.name if v else name))
            elif isinstance(a, A.Index) and a.subs == ["*"]:
                arr = self.pdv.arrays[a.name]
                if arr.temporary:
                    out += self._temp_elements(arr, a.line, a.col)
                    continue
                out += [A.Var(a.line, a.col, self.pdv.slots[s].name.upper(), self.pdv.slots[s].name) for s in arr.slots]
            else:
                out.append(a)
        return out

    @staticmethod
    def _temp_elements(arr, line: int, col: int) -> list:
        """A _TEMPORARY_ array's elements as references by constant subscripts (they have no names), in
        row-major order; a large one (its slots contiguous) as one slice of the PDV's row, so OF t{*} over a
        million elements is one argument, not a million expressions."""
        n = len(arr.slots)
        if n > SPLAT_OVER and arr.slots == list(range(arr.slots[0], arr.slots[0] + n)):
            return [Splat(line, arr.slots[0], arr.slots[0] + n)]
        out = []
        lower = list(arr.lower) + [1] * (len(arr.dims) - len(arr.lower))
        for i in range(len(arr.slots)):
            subs, k = [], i
            for d in reversed(arr.dims):
                subs.append(k % d)
                k //= d
            subs.reverse()
            out.append(A.Index(line, col, arr.name, [A.Num(line, col, float(x + lo)) for x, lo in zip(subs, lower)]))
        return out

    def _bounds(self, n):
        arg = n.args[0] if n.args else None
        name = arg.name if isinstance(arg, (A.Var, A.Index)) else ""
        arr = self.pdv.arrays.get(name)
        if arr is None:
            raise SasError(f"{n.name} needs an array name", n.line, n.col, n.name, "an array")
        base = bounds_function(n.name)
        # DIM(a, 2) or DIM2(a): the second dimension (SAS 9.4 Functions: DIM, HBOUND, LBOUND)
        k = int(n.args[1].value) - 1 if len(n.args) > 1 else int(n.name[len(base):] or 1) - 1
        if not 0 <= k < len(arr.dims):
            raise SasError(f"{n.name}: the array {name} has {len(arr.dims)} dimension(s), not {k + 1}", n.line,
                           n.col, n.name, f"a dimension from 1 to {len(arr.dims)}")
        if base == "DIM":
            val = arr.dims[k]
        elif base == "LBOUND":
            val = arr.lower[k]
        else:
            val = arr.lower[k] + arr.dims[k] - 1
        return repr(float(val)), "num", 8

    def g_Method(self, n):
        return f"HASH[{n.obj!r}].call({n.method!r}, [{', '.join(self._method_args(n))}], v)", "num", 8

    def _method_args(self, n):
        out = []
        for tag, e in n.args:
            s, kind, _ = self.gen(e)
            if str(tag or "").upper() == "RESULT" and s.startswith("v[") and s[2:-1].isdigit():
                out.append(f"('RESULT_SLOT', {s[2:-1]})")     # HAS_NEXT(RESULT: r) assigns r
                self.pdv.slots[int(s[2:-1])].uninit = False
                continue
            out.append(f"({tag!r}, {s})")
        return out

    def g_OfList(self, n):
        raise SasError("OF is valid only in a function's arguments", n.line, n.col, "OF")
