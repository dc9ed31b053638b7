"""The run-time namespace of a generated DATA step function: SAS arithmetic and comparisons bound to
the step's NOTE counters, conversions, array subscripts, the loop guard, ABORT, CALL routines, hash
objects (a mixin of step.DataStep)."""
from __future__ import annotations

from statgrid.sas import values as V
from statgrid.sas.context import FunctionRuntime
from statgrid.sas.datastep import runtime as R
from statgrid.sas.datastep.codegen import DEL, RET, STOP
from statgrid.sas.errors import SasRuntimeError


class NamespaceMixin:
    def _declare_object(self, name, kind, args):
        if kind.upper() == "HITER":
            from statgrid.sas.datastep.hiter import HashIterator
            self.hashes[name] = HashIterator(self, name, args)
            return
        if kind.upper() != "HASH":
            raise SasRuntimeError(f"DECLARE {kind}: only the HASH and HITER objects are supported here", text=kind)
        from statgrid.sas.datastep.hashobj import HashObject
        self.hashes[name] = HashObject(self, name, args)

    def _namespace(self, v, writers, bufs) -> dict:
        ns = self.ns
        add, sub, mul, div, pow_, neg = R.make_ops(self.notes, self.log)
        state: dict = {}
        for name, line, col in ns.get("_rt_sites", []):
            ns[name] = FunctionRuntime(self.program, state, line, col)
        self.fn_state = state
        cap = self.program.extras.get("datastep", {}).get("loop_cap", R.LOOP_CAP)
        self.hashes = getattr(self, 'hashes', {})

        def loop_error(line, col):
            raise SasRuntimeError(f"A DO loop at line {line} column {col} ran more than {cap} iterations in one "
                                  "pass of the DATA step; the step was stopped (statgrid's limit against a "
                                  "runaway loop)", line, col, "DO")

        def by_error(line, col):
            raise SasRuntimeError(f"Invalid DO loop control information at line {line} column {col}: "
                                  "the BY value is zero or missing", line, col, "BY")

        def abort(args, line, col):
            from statgrid.sas.errors import ProgramAbort
            code = next((a for a in args if isinstance(a, float)), None)
            if "ABEND" in args or "RETURN" in args:
                raise ProgramAbort(int(code if code is not None else (12 if "ABEND" in args else 8)),
                                   f"Execution terminated by an ABORT statement at line {line} column {col}.")
            if code is not None and "CANCEL" not in args:
                self.program.extras["abort_code"] = int(code)    # SAS: n becomes the program's exit code
            raise SasRuntimeError(f"Execution terminated by an ABORT statement at line {line} column {col}",
                                  line, col, "ABORT")

        def c2n(s, site):
            r = R.char_to_num(s)
            if r is None:
                self.log.note(f"Invalid numeric data, '{s.strip()}' , at line {site[0]} column {site[1]}.")
                v[self.pdv.get('_ERROR_').slot] = 1.0
                return V.MISSING
            return r

        def substr_left(var, pos, n, val):
            p = int(pos) - 1
            ln = len(var)
            cnt = (ln - p) if n is None else int(n)
            cnt = max(0, min(cnt, ln - p))
            return var[:p] + V.pad(val, cnt) + var[p + cnt:]

        def ix1(slots, i, name, line, col):
            if i != i or i < 1 or i > len(slots) or int(i) != i and False:
                raise SasRuntimeError(f"Array subscript out of range at line {line} column {col}", line, col, name)
            return slots[int(i) - 1]

        def ixn(arr, subs, line, col):
            s = R.ArraySlots(arr.slots)
            s.dims = arr.dims
            return R.array_slot(s, arr.lower, subs, arr.name, line, col)

        def in_ranges(x, ranges):
            return x == x and any(lo <= x <= hi for lo, hi in ranges)

        def cmp_colon(a, b, op):
            a, b = R.colon_cmp(a, b)
            return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]

        ns.update(dict(ADD=add, SUB=sub, MUL=mul, DIV=div, POW_=pow_, NEG=neg, nan=V.MISSING, TRUTH=R.truth,
                       EQ=R.eq, LT=R.lt, LE=R.le, KEY=R.key, NUMMIN=R.num_min, NUMMAX=R.num_max, C2N=c2n,
                       BEST12=R.best12, PAD=V.pad, SUBSTR_LEFT=substr_left, IX1=ix1, IXN=ixn, INRANGES=in_ranges,
                       CMPCOLON=cmp_colon, LOOP_CAP=cap, LOOP_ERROR=loop_error, BY_ERROR=by_error, ABORT=abort,
                       RET=RET, DEL=DEL, STOP=STOP, SasRuntimeError=SasRuntimeError, HASH=self.hashes,
                       DECLARE=self._declare_object))
        for i, r in enumerate(self.plan.readers):
            ns[f"READ{i}"] = r
        for i, (slots, chars, cols) in enumerate(bufs):
            ns[f"OUT{i}"] = self._outputter(i, slots, cols, bufs, writers)

        def run_from(k, linked=False):
            segs = ns["_SEGS_RT"]
            guard = 0
            while k < len(segs):
                r = segs[k]()
                if r is None:
                    k += 1
                    continue
                if isinstance(r, tuple):
                    k = r[1]
                    guard += 1
                    if guard > cap:
                        loop_error(0, 0)
                    continue
                return r
            return RET
        ns["RUN_FROM"] = run_from
        return ns


    def textio_call(self, gen, st, d):
        """CALL routines (registry of statgrid.sas.functions): new values assigned back to variable args."""
        from statgrid.sas.functions import lookup_call
        from statgrid.sas.parse import ast as A
        r = lookup_call(st.name, st.line, st.col)
        args = gen.x.expand_args(st.args)
        srcs, targets = [], []
        for a in args:
            s, kind, length = gen.x.gen(a)
            if kind == "bool":
                s = f"(1.0 if {s} else 0.0)"
            srcs.append(s)
            targets.append((s, kind, length) if isinstance(a, (A.Var, A.Index)) or
                           (isinstance(a, A.Call) and a.name in self.pdv.arrays) else None)
        fn = gen.x.const(r.fn)
        rt = gen.x.const(None)
        self.ns.setdefault("_rt_sites", []).append((rt, st.line, st.col))
        res = gen.fresh("c")
        gen.emit(d, f"{res} = {fn}({rt}, [{', '.join(srcs)}])")
        gen.emit(d, f"if {res} is not None:")
        wrote = False
        for i, t in enumerate(targets):
            if t is None:
                continue
            s, kind, length = t
            val = f"{res}[{i}]"
            conv = f"PAD({val} if isinstance({val}, str) else BEST12({val}), {length})" if kind == "char" else \
                f"({val} if not isinstance({val}, str) else C2N({val}, {(st.line, st.col)!r}))"
            gen.emit(d + 1, f"if len({res}) > {i} and {val} is not None: {s} = {conv}")
            wrote = True
        if not wrote:
            gen.emit(d + 1, "pass")
