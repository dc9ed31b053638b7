"""One DATA step: parse, compile (the PDV, then Python source for one function), run the implicit loop,
write the outputs, log SAS's NOTEs (SAS 9.4 Language Reference: Concepts, "DATA Step Processing"). The
statements that declare variables are declare.py's (DeclareMixin), the run-time namespace namespace.py's."""
from __future__ import annotations

from typing import Any

from statgrid.sas import values as V
from statgrid.sas.cursor import TokenCursor
from statgrid.sas.dataset import ColumnInfo, DatasetWriter
from statgrid.sas.parse.dsname import DatasetSpec, parse_dataset
from statgrid.sas.datastep import runtime as R
from statgrid.sas.datastep.codegen import DEL, STOP, CodeGen
from statgrid.sas.datastep.exprgen import ExprGen
from statgrid.sas.datastep.declare import DeclareMixin
from statgrid.sas.datastep.namespace import NamespaceMixin
from statgrid.sas.datastep.pdv import PDV
from statgrid.sas.errors import SasError
from statgrid.sas.parse import dsast as D
from statgrid.sas.parse.statements import Stream, parse_block
from statgrid.sas.procs.common import observations_read

OUT_BATCH = 65536


def _load_functions() -> None:
    import importlib
    import pkgutil
    try:
        import statgrid.sas.functions as F
    except ImportError:
        return
    for m in pkgutil.iter_modules(F.__path__):
        importlib.import_module(f"statgrid.sas.functions.{m.name}")


def stored_numbers(col, n: int) -> list:
    """Numbers as a numeric variable of length n (3..7) stores them: the first n bytes of the IEEE double,
    the low-order mantissa bytes dropped (SAS 9.4 Companion for UNIX, "Numeric variables": a length under 8
    keeps the sign, the exponent and the high-order mantissa bytes); the PDV keeps full precision until the
    value is written. Missing values stay missing."""
    import numpy as np

    a = np.asarray(col, dtype=np.float64)
    miss = np.isnan(a)
    u = a.view(np.uint64) & np.uint64((0xFFFFFFFFFFFFFFFF << (8 * (8 - n))) & 0xFFFFFFFFFFFFFFFF)
    out = u.view(np.float64).tolist()
    if miss.any():
        for k in np.flatnonzero(miss).tolist():
            out[k] = None
    return out


class Plan:
    """What the code generator asks of the step: outputs, readers, PUT/INPUT/CALL sites."""

    def __init__(self, step):
        self.step = step
        self.output_names = [o.name for o in step.outputs if not o.is_null]
        self.readers: list = []
        self.reader_of: dict[int, int] = {}

    def output_index(self, name: str, st) -> int:
        up = name.upper()
        if "." not in up:
            up = f"WORK.{up}"
        for i, o in enumerate(self.step.outputs):
            if o.name == up:
                return i
        raise SasError(f"Data set {name} is not in the DATA statement", st.line, st.col, name,
                       "a data set named in the DATA statement")

    def reader_index(self, st) -> int:
        return self.reader_of[id(st)]

    def call(self, gen, st, d):
        self._conversions(st)
        self.step.textio_call(gen, st, d)

    def _conversions(self, st) -> None:
        """A numeric value where a CALL routine takes a character argument (CALL SYMPUT's value) is
        converted with BEST12.: SAS's "Numeric values have been converted to character values" NOTE
        counts its place, as for any other conversion."""
        from statgrid.sas.functions import lookup_call
        from statgrid.sas.parse import ast as A
        r = lookup_call(st.name, st.line, st.col)
        types = r.args or "a"
        pdv = self.step.pdv
        for i, a in enumerate(st.args):
            if (types[i] if i < len(types) else types[-1]) != "c":
                continue
            numeric = isinstance(a, A.Num) or (isinstance(a, A.Var) and a.name not in pdv.arrays
                                               and pdv.get(a.name) is not None and pdv.get(a.name).type == "num")
            if numeric:
                self.step.notes.num2char[(a.line, a.col)] += 1

    def put(self, gen, st, d):
        self.step.textio.put(gen, st, d)

    def input_index(self, st):
        return self.step.textio.input_index(st)

    def file_index(self, st):
        return self.step.textio.file_index(st)


class DataStep(DeclareMixin, NamespaceMixin):
    def __init__(self, statements: list, program: Any):
        self.program, self.log = program, program.log
        self.first = statements[0]
        self.statements = statements[1:]
        self.outputs: list[DatasetSpec] = []
        self.view = ""
        self._parse_data_statement()
        self.body = parse_block(Stream(statements[1:], program))
        self.pdv = PDV()
        self.pdv.missing_letters |= program.missing_letters    # MISSING statements run before (global in scope)
        self.notes = R.Notes()
        self.ns: dict[str, Any] = {}
        self.keep, self.drop, self.rename = None, set(), {}
        self.by, self.notsorted = None, False
        self.where = []
        from statgrid.sas.datastep.textio import TextIO
        self.textio = TextIO(self)

    def _parse_data_statement(self) -> None:
        cur = TokenCursor(self.first.tokens, self.first.source)
        cur.next()                                       # DATA
        while not cur.at_end() and not cur.at("/"):
            self.outputs.append(parse_dataset(cur, self.program))
        if cur.accept("/"):
            while not cur.at_end():
                opt = cur.next().upper
                if cur.accept("="):
                    val = cur.dotted_name("a view name")
                    if opt == "VIEW":
                        self.view = val.upper()
        cur.expect_end("DATA")
        if not self.outputs:                             # DATA; → DATA1, DATA2 … (SAS's _DATA_)
            from statgrid.sas.parse.dsname import next_data_name
            self.outputs.append(DatasetSpec("WORK", next_data_name(self.program, "WORK")))

    # -- run ------------------------------------------------------------------------------------------------------
    def compile(self) -> None:
        _load_functions()
        self.plan = Plan(self)
        self.expr = ExprGen(self.pdv, self.ns, self.program, self.notes)
        pdv = self.pdv
        pdv.declare("_N_", "num", auto=True)
        pdv.declare("_ERROR_", "num", auto=True)
        bys = [s for s in self.textio._walk(self.body) if isinstance(s, D.By)]
        if bys:
            self.by, self.notsorted = bys[0].vars, bys[0].notsorted
        self.textio.declare_infile_var()
        self.declare(self.body)
        for v in pdv.slots:
            if v.type is None:
                v.type, v.length = "num", 8
            if v.type == "num" and not v.len_explicit and not v.from_input and not v.auto:
                v.length = pdv.default_length     # LENGTH DEFAULT=n: numeric variables (SAS 9.4 Statements: LENGTH)
            if v.type == "char" and not v.length:
                v.length = pdv.default_length
        for arr in pdv.arrays.values():
            for sl in arr.slots:
                pdv.slots[sl].uninit = False
        for var in pdv.slots:
            if var.uninit and not (var.auto or var.from_input or var.init is not None) and \
                    not self._only_in_attributes(var):
                self.log.note(f"Variable {var.name} is uninitialized.")
        gen = CodeGen(pdv, self.expr, self.plan)
        self.source = gen.generate(self.body)
        self.reset = [(v.slot, v.missing) for v in pdv.slots
                      if not (v.retained or v.from_input or v.auto or v.init is not None)]
        if self.where:
            self._apply_where()

    def _apply_where(self) -> None:
        """The step's WHERE statements onto the data sets of its one SET/MERGE: a later WHERE replaces the
        earlier one, WHERE SAME AND / WHERE ALSO adds to it (SAS's NOTEs "WHERE clause has been replaced." /
        "augmented."); a WHERE= data set option on a data set is kept and joined with AND."""
        from statgrid.sas.parse import ast as A
        first = self.where[0]
        if len(self.plan.readers) != 1:
            raise SasError("A WHERE statement needs one SET or MERGE statement in the step", first.line, first.col,
                           "WHERE")
        expr = None
        for w in self.where:
            if expr is not None:
                self.log.note("WHERE clause has been augmented." if w.same else "WHERE clause has been replaced.")
            expr = A.Binary(w.line, w.col, "AND", expr, w.expr) if (w.same and expr is not None) else w.expr
        for ds in self.plan.readers[0].stmt.datasets:
            ds.where = expr if ds.where is None else A.Binary(first.line, first.col, "AND", ds.where, expr)

    def run(self) -> None:
        if self.view:
            spec = next((o for o in self.outputs if o.name.endswith("." + self.view) or o.member == self.view), None)
            if spec is None:
                raise SasError(f"The view {self.view} is not among the data sets of the DATA statement",
                               self.first.line, 0, self.view)
            self.compile()                                     # a view is checked when it is stored
            from statgrid.sas.dataset import save_view
            if not self.program.syntax_check:
                save_view(self.program, spec, self.statements)
            return
        self.compile()
        if self.program.syntax_check:
            # syntax-check mode after an ERROR: the step is compiled, not run (SAS 9.4 Language Reference:
            # Concepts, "Syntax Check Mode"); an existing data set is not replaced, a new one gets its
            # descriptor: the variables, 0 observations
            for spec in self.outputs:
                if not spec.is_null:
                    self._syntax_check_output(spec)
            return
        from statgrid.sas.datastep.engines import run_fast
        if self._short_numeric_outputs():
            # a numeric variable stored in fewer than 8 bytes: only this engine cuts the stored value
            self.engine = "PYTHON"
            self.program.extras.setdefault("datastep_engines", []).append((self.first.line, "PYTHON"))
        else:
            self.engine = run_fast(self)
        if self.engine != "PYTHON":
            return
        pdv, program = self.pdv, self.program
        v = [var.missing if var.init is None else (V.pad(var.init, var.length) if var.type == "char" else var.init)
             for var in pdv.slots]
        writers, bufs = [], []
        self._stored_len = []
        try:
            for spec in self.outputs:
                names = self.output_columns(spec)
                cols = []
                for n in names:
                    var = pdv.vars[n]
                    new = self.rename.get(n) or spec.rename.get(n) or var.name
                    cols.append(ColumnInfo(new, var.type, var.length, var.format, var.informat, var.label))
                w = DatasetWriter(program, spec, cols)
                writers.append(w)
                slots = [pdv.vars[n].slot for n in names]
                chars = [pdv.vars[n].type == "char" for n in names]
                bufs.append((slots, chars, [[] for _ in names]))
                self._stored_len.append([8 if c.type == "char" else int(c.length or 8) for c in cols])
            ns = self._namespace(v, writers, bufs)
            self._error_hooks(v)
            for r in self.plan.readers:
                try:
                    r.start(v, self.row_filter)
                except SasError as exc:
                    if exc.message.startswith("BY variables are not properly sorted"):
                        # SAS's words; the check runs before the first row is read, so neither the PDV
                        # nor the observations before the unsorted one can be written as SAS does
                        self.log.error(exc.message + ".")
                        exc.logged = True
                    raise
            self.textio.start(v, ns)
            code = compile("def _make(v):\n" + self.source + "\n    return _SEGS\n", f"<DATA step line {self.first.line}>", "exec")
            exec(code, ns)
            segs = ns["_make"](v)
            self.notes.report_compile(self.log)
            try:
                self._loop(v, segs, ns, bufs)
            except SasError as exc:
                self._runtime_error(exc, v)
                raise
            for i in range(len(writers)):
                self._flush(i, bufs, writers)
            self.textio.finish()                        # the files' NOTEs, then the run's, then the reads
            self.notes.report(self.log)
            for r in self.plan.readers:
                for ds, n in zip(r.stmt.datasets, r.counts):
                    observations_read(self.program, n, ds)     # with its WHERE clause echoed
            for w in writers:
                w.commit()
            if self.view:
                pass
        except BaseException as exc:
            try:
                self.textio.flush_print()           # what FILE PRINT wrote before the ERROR, as SAS shows it
            except Exception:  # noqa: BLE001  (the step's own ERROR stands)
                pass
            if getattr(exc, "runtime", False):
                # SAS: the rows each SET/MERGE read before the ERROR, then what became of the outputs
                read = [("NOTE", f"There were {n} observations read from the data set {ds.name}.")
                        for r in self.plan.readers for ds, n in zip(r.stmt.datasets, getattr(r, "counts", ()))]
                exc.after = read + self._keep_partial(writers, bufs)
            for w in writers:
                w.abort()
            self.notes.report(self.log)
            raise
        finally:
            for r in self.plan.readers:
                r.close()

    def _short_numeric_outputs(self) -> bool:
        for spec in self.outputs:
            if spec.is_null:
                continue
            for n in self.output_columns(spec):
                var = self.pdv.vars[n]
                if var.type == "num" and (var.length or 8) < 8:
                    return True
        return False

    def _errors_limit(self) -> int:
        try:
            return int(float(self.program.options.get("ERRORS")))
        except (TypeError, ValueError):
            return 20

    def _error_observation(self, v) -> None:
        """An observation with _ERROR_ = 1: its PDV, for the first ERRORS= (20) such observations; then
        SAS's WARNING, once (SAS 9.4 System Options: ERRORS=)."""
        self._err_obs = getattr(self, "_err_obs", 0) + 1
        limit = self._errors_limit()
        if self._err_obs <= limit:
            self.textio.dump_pdv(v)
        elif self._err_obs == limit + 1:
            self.log.warning("Limit set by ERRORS= option reached.  Further errors of this type will not be printed.")

    def _error_hooks(self, v) -> None:
        """A math fault (an invalid argument to a function, a division by zero) sets _ERROR_ to 1, so the
        observation's PDV is written, and counts its place for the step-end NOTE (SAS 9.4 Language
        Reference: Concepts, "Execution-Time Errors": illegal arguments to functions, illegal mathematical
        operations)."""
        err_slot = self.pdv.get("_ERROR_").slot
        notes = self.notes

        def on_error():
            v[err_slot] = 1.0

        limit = self._errors_limit()

        def on_invalid(line, col, math=True):
            """Returns whether the NOTE is written: not past ERRORS= observations with errors."""
            v[err_slot] = 1.0
            if math:
                notes.invalid_math[(line, col)] += 1
            return getattr(self, "_err_obs", 0) < limit
        notes.on_error = on_error
        self.fn_state["_on_invalid"] = on_invalid

    def _syntax_check_output(self, spec) -> None:
        program = self.program
        try:
            exists = program.session.libraries.for_write(f"{spec.libref}.{spec.member}").path.exists()
        except Exception:  # noqa: BLE001  (a library that cannot be written: nothing is created)
            exists = True
        if exists:
            self.log.warning(f"Data set {spec.name} was not replaced because this step was stopped.")
            return
        pdv = self.pdv
        cols = []
        for n in self.output_columns(spec):
            var = pdv.vars[n]
            new = self.rename.get(n) or spec.rename.get(n) or var.name
            cols.append(ColumnInfo(new, var.type, var.length, var.format, var.informat, var.label))
        w = DatasetWriter(program, spec, cols)
        program.syntax_check = False           # the writer replaces nothing in syntax-check mode: this is new
        try:
            w.commit()
        finally:
            program.syntax_check = True

    def _keep_partial(self, writers, bufs) -> list:
        """After an execution-time ERROR SAS keeps what a new data set got so far ("WARNING: The data set X
        may be incomplete.  When this step was stopped there were n observations and m variables.") and
        leaves an existing one as it was ("WARNING: Data set X was not replaced because this step was
        stopped."). Returns those WARNINGs: the driver writes them after its "stopped processing" NOTE."""
        out = []
        for i, w in enumerate(writers):
            ref = getattr(w, "ref", None)
            if ref is None:
                continue
            if ref.path.exists():
                out.append(f"Data set {w.spec.name} was not replaced because this step was stopped.")
                continue
            try:
                self._flush(i, bufs, writers)
                log = self.log
                log.note = lambda *a, **k: None      # commit's "has n observations" NOTE: SAS writes the WARNING
                try:
                    w.commit()
                finally:
                    del log.note
            except Exception:  # noqa: BLE001  (nothing kept: the step's ERROR stands)
                continue
            out.append(f"The data set {w.spec.name} may be incomplete.  When this step was stopped there were "
                       f"{w.rows} observations and {len(w.cols)} variables.")
        return out

    def _runtime_error(self, exc, v) -> None:
        """An ERROR while the step runs (array subscript out of range, a hash method's fault…): SAS writes
        the ERROR, then the PDV with _ERROR_=1, and stops this step only; it does not enter syntax-check
        mode (SAS 9.4 Language Reference: Concepts, "Execution-Time Errors")."""
        msg = getattr(exc, "message", str(exc))
        if " at line " in msg or msg.startswith(("BY variables are not properly sorted", "INPUT statement exceeded")):
            self.log.error(msg if msg.endswith(".") else msg + ".")
        else:
            self.log.sas_error(exc)
        for text in getattr(exc, "record_lines", ()):     # STOPOVER: the record at fault under its RULE
            self.log.put(text)
        v[self.pdv.get("_ERROR_").slot] = 1.0
        self.textio.dump_pdv(v)
        exc.runtime = True          # the driver: logged already, no syntax-check mode…
        exc.logged = True
        if msg.startswith("Execution terminated by an ABORT statement"):
            # …except after ABORT, which in batch sets OBS=0 and checks the rest of the job (SAS 9.4
            # Statements: ABORT, without arguments)
            exc.syntax_check = True

    def row_filter(self, node, reader):
        """A WHERE that SQL cannot say, as a Python predicate over one input row (a tuple in the reader's
        column order): compiled like the step's own expressions, over a PDV of the row's columns."""
        from statgrid.sas.context import FunctionRuntime
        pdv = PDV()
        for u in reader.columns:
            var = self.pdv.get(u)
            pdv.declare(var.name, var.type, var.length)
        gen = ExprGen(pdv, self.ns, self.program, self.notes)
        src = gen.as_bool(node)
        for name, line, col in self.ns.get("_rt_sites", []):
            if self.ns.get(name) is None:
                self.ns[name] = FunctionRuntime(self.program, self.fn_state, line, col)
        test = eval(f"lambda v: {src}", self.ns)
        conv = [(i, var.length if var.type == "char" else 0) for i, var in enumerate(pdv.slots)]

        def keep(row) -> bool:
            vals = []
            for i, length in conv:
                x = row[i]
                vals.append(V.pad(x or "", length) if length else (V.MISSING if x is None else x))
            return bool(test(vals))
        return keep

    def _flush(self, i, bufs, writers):
        slots, chars, cols = bufs[i]
        if not cols or not cols[0]:
            if not cols and getattr(self, "_nrows", [0] * len(bufs))[i]:
                pass
            return
        arrays, specials = [], {}
        lens = self._stored_len[i] if i < len(getattr(self, "_stored_len", ())) else [8] * len(cols)
        for ci, (ch, col, n) in enumerate(zip(chars, cols, lens)):
            if ch:
                arrays.append([s.rstrip(" ") for s in col])
                continue
            arrays.append(stored_numbers(col, n) if n < 8 else [None if x != x else x for x in col])
            if any(x != x for x in col):
                # .A-.Z and ._ keep their letter beside the file's nulls (dataset.SPECIALS_KEY)
                codes = {r: x.code for r, x in enumerate(col) if x != x and x.__class__ is V.SpecialMissing}
                if codes:
                    specials[ci] = codes
        if specials:
            writers[i].write(arrays, specials)
        else:
            writers[i].write(arrays)
        for col in cols:
            col.clear()

    def _outputter(self, i, slots, cols, bufs, writers):
        pairs = list(zip(slots, [c.append for c in cols]))
        first = cols[0] if cols else None
        count = [0]
        self.out_counts = getattr(self, "out_counts", {})

        def out():
            for s, app in pairs:
                app(v_ref[0][s])
            count[0] += 1
            if first is not None and len(first) >= OUT_BATCH:
                self._flush(i, bufs, writers)
        v_ref = self._vref = getattr(self, "_vref", [None])
        return out

    def _loop(self, v, segs, ns, bufs) -> None:
        self._vref[0] = v
        ns["_SEGS_RT"] = segs
        run_from = ns["RUN_FROM"]
        has_output = self._has_output(self.body)
        n_slot, err_slot = self.pdv.get("_N_").slot, self.pdv.get("_ERROR_").slot
        reads = bool(self.plan.readers) or self.textio.reads
        reset = self.reset
        outs = [ns[f"OUT{i}"] for i in range(len(bufs))]
        new_iteration = self.textio.new_iteration if self.textio.inputs else None
        n = 0
        while True:
            n += 1
            v[n_slot] = float(n)
            v[err_slot] = 0.0
            for slot, miss in reset:
                v[slot] = miss
            if new_iteration is not None:
                new_iteration()
            r = run_from(0)
            if r == STOP:
                break
            if r != DEL and not has_output:
                for o in outs:
                    o()
            if v[err_slot]:
                self._error_observation(v)
            if not reads:
                break

    def _has_output(self, sts) -> bool:
        for st in sts:
            if isinstance(st, D.Simple) and st.kind == "OUTPUT":
                return True
            if isinstance(st, D.Simple) and st.kind == "LABEL" and self._has_output([st.args[1]]):
                return True
            if isinstance(st, D.If) and self._has_output([s for s in (st.then, st.else_) if s]):
                return True
            if isinstance(st, D.Do) and self._has_output(st.body):
                return True
            if isinstance(st, D.Select) and self._has_output([b for _, b in st.whens] + ([st.otherwise] if st.otherwise else [])):
                return True
        return False
