"""DATA step statements → the Python source of one step function (the compile phase's product).

The body of one implicit-loop iteration is split at top-level statement labels into segments, each a
function returning None (fall through), RET (RETURN), DEL (DELETE or a false subsetting IF), STOP, or
('G', k) (GOTO the segment k). LINK runs from a label to its RETURN and comes back. DO loops are Python
while loops over PDV slots; LEAVE/CONTINUE are break/continue; an iteration cap guards DO WHILE/UNTIL and
GOTO loops (SAS has no such cap; statgrid stops a runaway step with an ERROR instead of hanging a node)."""
from __future__ import annotations

from statgrid.sas.errors import SasError
from statgrid.sas.parse import ast as A
from statgrid.sas.parse import dsast as D

RET, DEL, STOP = 1, 2, 3


class SourceLines:
    """Python source written a line at a time at a depth of indentation, with fresh local names: the
    Python engine's CodeGen and the NUMBA engine's KernelGen (compiled/kernel.py) write their statements
    alike; `block(statements, depth)` is each one's."""

    def __init__(self):
        self.lines: list[str] = []
        self.tmp = 0

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def fresh(self, base: str) -> str:
        self.tmp += 1
        return f"_{base}{self.tmp}"

    def local(self, d: int, base: str, value: str) -> str:
        """A fresh local set to `value` at depth d: its name."""
        name = self.fresh(base)
        self.emit(d, f"{name} = {value}")
        return name

    def in_loop(self, cont, body) -> None:
        """body(): the statements of a loop whose CONTINUE runs `cont` before `continue` (self.loop_stack,
        each generator's own form of it)."""
        self.loop_stack.append(cont)
        body()
        self.loop_stack.pop()

    def do_to(self, idx: str, spec: tuple, d: int, num, by_error: str) -> str:
        """The head of `DO idx = start TO stop [BY by]` (spec) at depth d, num(node) an expression's
        numeric source: the index set, stop and by kept in locals (`by_error` when by is 0 or missing),
        then the while line. Returns by's local."""
        start, stop, by = spec
        self.emit(d, f"{idx} = {num(start)}")
        stop_v = self.local(d, "stop", num(stop))
        by_v = self.local(d, "by", num(by) if by is not None else "1.0")
        self.emit(d, f"if {by_v} == 0 or {by_v} != {by_v}: {by_error}")
        self.emit(d, f"while ({idx} <= {stop_v}) if {by_v} > 0 else ({idx} >= {stop_v}):")
        return by_v

    def if_then_else(self, cond: str, st, d: int) -> None:
        """`IF cond THEN st.then; [ELSE st.else_;]` as a Python if statement at depth d."""
        self.emit(d, f"if {cond}:")
        self.block([st.then], d + 1)
        if st.else_ is not None:
            self.emit(d, "else:")
            self.block([st.else_], d + 1)


class CodeGen(SourceLines):
    def __init__(self, pdv, expr, plan):
        super().__init__()
        self.pdv, self.x, self.plan = pdv, expr, plan
        self.labels: dict[str, int] = {}
        self.loop_stack: list[str] = []     # per open loop: the code CONTINUE runs before `continue`

    # -- segments ---------------------------------------------------------------------------------------------------
    def segments(self, body: list) -> list[list]:
        segs, cur = [], []
        for st in body:
            if isinstance(st, D.Simple) and st.kind == "LABEL":
                segs.append(cur)
                self.labels[st.args[0]] = len(segs)
                cur = [st.args[1]]
            else:
                cur.append(st)
        segs.append(cur)
        return segs

    def generate(self, body: list) -> str:
        segs = self.segments(body)
        for k, seg in enumerate(segs):
            self.emit(1, f"def _seg{k}():")
            for st in seg:
                self.stmt(st, 2)
            self.emit(2, "return None")
        self.emit(1, f"_SEGS = ({', '.join(f'_seg{k}' for k in range(len(segs)))},)")
        return "\n".join(self.lines)

    # -- statements -------------------------------------------------------------------------------------------------
    def stmt(self, st, d: int) -> None:
        m = getattr(self, "s_" + type(st).__name__, None)
        if m is None:
            return                                             # declarations: done in the compile phase
        m(st, d)

    def assign_target(self, target, src_node, d: int, value_src: str | None = None) -> None:
        x = self.x
        if isinstance(target, A.Call) and target.name == "SUBSTR" and target.name not in self.pdv.arrays:
            # SUBSTR(var, pos, n) = value: replace characters in place (SAS 9.4 Functions: SUBSTR (left of =))
            var = target.args[0]
            vs, kind, length = x.gen(var)
            pos = x.as_num(target.args[1])
            n = x.as_num(target.args[2]) if len(target.args) > 2 else "None"
            val, _ = x.as_char(src_node)
            self.emit(d, f"{vs} = SUBSTR_LEFT({vs}, {pos}, {n}, {val})")
            return
        ts, kind, length = x.gen(target)
        if value_src is not None:
            self.emit(d, f"{ts} = {value_src}")
            return
        if kind == "char":
            src, _ = x.as_char(src_node)
            self.emit(d, f"{ts} = PAD({src}, {length})")
        else:
            self.emit(d, f"{ts} = {x.as_num(src_node)}")

    def s_Assign(self, st, d):
        self.assign_target(st.target, st.expr, d)

    def s_SumStmt(self, st, d):
        ts, kind, _ = self.x.gen(st.target)
        tmp = self.local(d, "s", self.x.as_num(st.expr))
        # SUM(var, expr): a missing expression leaves the variable as it is (SAS 9.4 Statements: Sum)
        self.emit(d, f"if {tmp} == {tmp}: {ts} = ({ts} + {tmp}) if {ts} == {ts} else {tmp}")

    def block(self, sts, d: int) -> None:
        if not sts:
            self.emit(d, "pass")
        for s in sts:
            self.stmt(s, d)

    def s_If(self, st, d):
        cond = self.x.as_bool(st.cond)
        if st.then is None:
            self.emit(d, f"if not ({cond}): return DEL")
            return
        self.if_then_else(cond, st, d)

    def s_Select(self, st, d):
        first = True
        subj = None
        if st.expr is not None:
            subj = A.Var(st.line, st.col, "", "")
            s, kind, length = self.x.gen(st.expr)
            subj_src, subj_kind = self.local(d, "sel", s), kind
        for exprs, body in st.whens:
            conds = []
            for e in exprs:
                if subj is None:
                    conds.append(self.x.as_bool(e))
                else:
                    es, ek, _ = self.x.gen(e)
                    if subj_kind == "char" and ek == "char":
                        conds.append(f"({subj_src}.rstrip(' ') == {es}.rstrip(' '))")
                    else:
                        conds.append(f"EQ({subj_src}, {self.x.as_num(e) if ek != 'num' else es})")
            self.emit(d, f"{'if' if first else 'elif'} {' or '.join(conds)}:")
            self.block([body], d + 1)
            first = False
        self.emit(d, "else:")
        if st.has_otherwise:
            self.block([st.otherwise] if st.otherwise else [], d + 1)
        else:
            self.emit(d + 1, f"raise SasRuntimeError('Unsatisfied WHEN clause and no OTHERWISE clause at line "
                             f"{st.line} column {st.col}', {st.line}, {st.col}, 'SELECT')")

    def s_Do(self, st, d):
        x = self.x
        if st.kind == "block":
            self.block(st.body, d)
            return
        guard = self.local(d, "g", "0")

        def cap(dd):
            self.emit(dd, f"{guard} += 1")
            self.emit(dd, f"if {guard} > LOOP_CAP: LOOP_ERROR({st.line}, {st.col})")

        if st.kind in ("while", "until"):
            first = self.local(d, "f", "True")
            self.emit(d, "while True:")
            if st.kind == "while":
                self.emit(d + 1, f"if not ({x.as_bool(st.while_)}): break")
            else:
                self.emit(d + 1, f"if not {first} and ({x.as_bool(st.until)}): break")
                self.emit(d + 1, f"{first} = False")
            cap(d + 1)
            self.in_loop("", lambda: self.block(st.body, d + 1))
            return
        if st.kind == "over":
            arr = self.pdv.arrays.get(st.array)
            if arr is None:
                raise SasError(f"Array {st.array} is not defined", st.line, st.col, st.array)
            if not arr.implicit or not arr.index_var:
                # SAS 9.4 Statements, DO OVER: "array-name specifies an implicitly subscripted array"
                raise SasError(f"DO OVER needs an implicitly subscripted array; {st.array} is explicitly "
                               "subscripted (use DO i = 1 TO DIM(array))", st.line, st.col, st.array,
                               "an array defined without a dimension")
            iv = self.pdv.get(arr.index_var)
            self.emit(d, f"v[{iv.slot}] = 1.0")
            self.emit(d, f"while v[{iv.slot}] <= {len(arr.slots)}:")
            inc = f"v[{iv.slot}] += 1.0"
            self.in_loop(inc, lambda: self.block(st.body, d + 1))
            self.emit(d + 1, inc)
            return
        # iterative DO: each spec in turn (SAS 9.4 Statements: DO, iterative)
        idx, ikind, ilen = x.gen(st.var)
        for spec in st.specs:
            start, stop, _ = spec
            if stop is None:                                   # a single value
                if ikind == "char":
                    sv, _ = x.as_char(start)
                    self.emit(d, f"{idx} = PAD({sv}, {ilen})")
                else:
                    self.emit(d, f"{idx} = {x.as_num(start)}")
                self.emit(d, "for _once in (1,):")
                self.in_loop("", lambda: self._loop_body(st, d + 1))
                continue
            by_v = self.do_to(idx, spec, d, x.as_num, f"BY_ERROR({st.line}, {st.col})")
            cap(d + 1)                  # `do i = 1 to 10; i = 1; end;` never ends: the same guard
            inc = f"{idx} = ADD({idx}, {by_v}, {(st.line, st.col)!r})"
            self.in_loop(inc, lambda: self._loop_body(st, d + 1))
            self.emit(d + 1, inc)

    def _loop_body(self, st, d):
        x = self.x
        if st.while_ is not None:
            self.emit(d, f"if not ({x.as_bool(st.while_)}): break")
        if st.until is not None:
            # UNTIL is tested after the body: CONTINUE jumps here too
            self.loop_stack[-1] = f"if {x.as_bool(st.until)}: break\n" + self.loop_stack[-1]
        self.block(st.body, d)
        if st.until is not None:
            self.emit(d, f"if {x.as_bool(st.until)}: break")

    def s_Simple(self, st, d):
        k = st.kind
        if k in ("EMPTY", "DATALINES", "MISSING"):
            self.emit(d, "pass")
        elif k == "OUTPUT":
            targets = st.args or self.plan.output_names
            for name in targets:
                idx = self.plan.output_index(name, st)
                self.emit(d, f"OUT{idx}()")
        elif k == "DELETE":
            self.emit(d, "return DEL")
        elif k == "STOP":
            self.emit(d, "return STOP")
        elif k == "RETURN":
            self.emit(d, "return RET")
        elif k in ("LEAVE", "CONTINUE"):
            if not self.loop_stack:
                self.emit(d, "pass")          # SAS: LEAVE/CONTINUE outside a DO loop does nothing (a NOTE)
            elif k == "LEAVE":
                self.emit(d, "break")
            else:
                for line in self.loop_stack[-1].split("\n"):
                    if line:
                        self.emit(d, line)
                self.emit(d, "continue")
        elif k == "GOTO":
            self.emit(d, f"return ('G', {self._label(st)})")
        elif k == "LINK":
            r = self.local(d, "r", f"RUN_FROM({self._label(st)}, True)")
            self.emit(d, f"if {r} == DEL or {r} == STOP: return {r}")
        elif k == "ABORT":
            self.emit(d, f"ABORT({st.args!r}, {st.line}, {st.col})")
        elif k == "LABEL":
            raise SasError("A statement label is valid here only outside DO groups", st.line, st.col, st.args[0])

    def _label(self, st) -> int:
        lab = st.args[0]
        if lab not in self.labels:
            raise SasError(f"Statement label {lab} is not defined", st.line, st.col, lab, "a label: before a statement")
        return self.labels[lab]

    def s_SetStmt(self, st, d):
        self.emit(d, f"if READ{self.plan.reader_index(st)}(): return STOP")

    def s_Where(self, st, d):
        pass

    def s_CallStmt(self, st, d):
        self.plan.call(self, st, d)

    def s_Put(self, st, d):
        self.plan.put(self, st, d)

    def s_Input(self, st, d):
        # INPUT{i}() is True when the input is exhausted (the step stops), or ('G', k) for INFILE EOF=label
        self.plan.step.textio.eof_labels = {str(k).upper(): v for k, v in self.labels.items()}
        r = self.local(d, "r", f"INPUT{self.plan.input_index(st)}()")
        self.emit(d, f"if {r}: return STOP if {r} is True else {r}")

    def s_FileStmt(self, st, d):
        self.emit(d, f"FILESTMT{self.plan.file_index(st)}()")

    def s_MethodStmt(self, st, d):
        s, _, _ = self.x.gen(st.call)
        self.emit(d, s)

    def s_Declare(self, st, d):
        args = ", ".join(f"({tag!r}, {self.x.gen(e)[0]})" for tag, e in st.args)
        self.emit(d, f"DECLARE({st.name!r}, {st.kind!r}, [{args}])")
