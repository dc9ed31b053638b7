"""The DATA step's compile phase: the statements that declare variables (LENGTH, RETAIN, ARRAY, SET,
INPUT, assignments, ATTRIB/FORMAT/LABEL, KEEP/DROP/RENAME) build the PDV, and the output data sets' columns
follow from it (SAS 9.4 Language Reference: Concepts, "The Compilation Phase"; a mixin of step.DataStep)."""
from __future__ import annotations

from statgrid.sas import values as V
from statgrid.sas.datastep.inputs import SetReader
from statgrid.sas.datastep.pdv import ArrayInfo
from statgrid.sas.errors import SasError
from statgrid.sas.parse import dsast as D
from statgrid.sas.parse.dsname import DatasetSpec


class DeclareMixin:
    def declare(self, sts: list) -> None:
        pdv = self.pdv
        for st in sts:
            if isinstance(st, D.Length):
                for items, kind, n in st.items:
                    for name in pdv.expand(items, st.line, st.col, declare=False):
                        v = pdv.get(name)
                        if v is not None and v.type is not None and v.length and not v.uninit:
                            self.log.warning(f"Length of variable {v.name} cannot be changed because it is "
                                             "already set; it keeps its length.")
                            continue
                        orig = next((i[1] for i in items if i[0] == 'name' and i[1].upper() == name), name)
                        v = pdv.declare(orig, kind, n, st.line, st.col)
                        v.length, v.len_explicit = n, True
                if st.default:
                    pdv.default_length = st.default
            elif isinstance(st, D.Simple) and st.kind == "MISSING":
                pdv.missing_letters |= {a.upper() for a in st.args}
                self.program.missing_letters |= {a.upper() for a in st.args}   # global in scope
            elif isinstance(st, D.Retain):
                for items, vals in st.items:
                    names = pdv.expand(items, st.line, st.col, declare=False) if items else []
                    if st.all_:
                        names = list(pdv.order)
                    for i, name in enumerate(names):
                        orig = next((it[1] for it in items if it[0] == "name" and it[1].upper() == name), name)
                        if isinstance(vals, tuple):
                            init = vals[1]
                        else:
                            init = vals[i] if i < len(vals) else None
                        if init is not None:
                            v = pdv.declare(orig, "char" if isinstance(init, str) else "num",
                                            max(len(init), 1) if isinstance(init, str) else 8, st.line, st.col)
                            v.init = init
                        else:
                            v = pdv.declare(orig)
                        v.retained = True
            elif isinstance(st, D.Array):
                self._array(st)
            elif isinstance(st, D.SetStmt):
                r = SetReader(self.program, pdv, st, self.by_for(st), self.notsorted)
                r.declare()
                self._varlenchk(r, st)
                self.plan.reader_of[id(st)] = len(self.plan.readers)
                self.plan.readers.append(r)
            elif isinstance(st, D.Assign):
                self._declare_assign(st.target, st.expr)
            elif isinstance(st, D.SumStmt):
                if isinstance(st.target, D.Stmt.__class__) or True:
                    from statgrid.sas.parse import ast as A
                    if isinstance(st.target, A.Var):
                        v = pdv.declare(st.target.text, "num")
                        v.retained = True
                        if v.init is None:
                            v.init = 0.0
                        v.uninit = False
            elif isinstance(st, D.If):
                self.expr.gen(st.cond)
                self.declare([s for s in (st.then, st.else_) if s is not None])
            elif isinstance(st, D.Do):
                if st.kind == "iter" and st.specs:
                    self._declare_assign(st.var, st.specs[0][0])
                self.declare(st.body)
            elif isinstance(st, D.Select):
                self.declare([b for _, b in st.whens] + ([st.otherwise] if st.otherwise else []))
            elif isinstance(st, D.Simple) and st.kind == "LABEL":
                self.declare([st.args[1]])
            elif isinstance(st, D.VarAttrs):
                self._attrs(st)
            elif isinstance(st, D.Input):
                self.textio.declare_input(st)
            elif isinstance(st, D.FileStmt) and st.kind == "INFILE":
                if isinstance(st.options.get("END"), str):
                    pdv.auto_var(st.options["END"])
                for opt in ("LENGTH", "COLUMN", "COL", "LINE"):   # numeric, set by INPUT, not written
                    if isinstance(st.options.get(opt), str):
                        pdv.auto_var(st.options[opt])
                for opt in ("FILEVAR", "FILENAME"):      # like automatic variables, not written (INFILE)
                    if isinstance(st.options.get(opt), str):
                        self._auto_char(st.options[opt])
            elif isinstance(st, D.CallStmt):
                from statgrid.sas.functions.registry import call_sets
                from statgrid.sas.parse import ast as A
                sets = call_sets(st.name, len(st.args))
                for i, a in enumerate(st.args):
                    if isinstance(a, A.Var) and pdv.get(a.name) is None:
                        pdv.declare(a.text)
                    if i in sets and isinstance(a, A.Var):
                        pdv.get(a.name).uninit = False      # assigned by the routine (CALL MISSING, RANUNI…)
            elif isinstance(st, D.Where):
                self.where.append(st)

    def _auto_char(self, name: str) -> None:
        """A character variable SAS does not write (INFILE's FILEVAR= and FILENAME= variables)."""
        v = self.pdv.declare(name)
        if not v.auto:
            v.auto = True
            self.pdv.order.remove(name.upper())
        if v.type is None:
            v.type, v.length = "char", 200
        v.uninit = False

    def _varlenchk(self, reader, st) -> None:
        """VARLENCHK=WARN|ERROR (SAS 9.4 System Options: VARLENCHK=): a character variable read by SET or
        MERGE from a data set where it is longer than the variable's length (set by its first definition or
        a LENGTH statement before) is cut: SAS's WARNING (or ERROR), once per variable; BY variables aside."""
        mode = str(self.program.options.get("VARLENCHK") or "WARN").upper()
        if mode == "NOWARN":
            return
        by = {n.upper() for n, _ in (reader.by or [])}
        warned = getattr(self, "_varlen_warned", set())
        self._varlen_warned = warned
        if getattr(st, "kind", "") == "MERGE" and len(reader.infos) > 1:
            # SAS 9.4: a BY variable whose length differs between the merged data sets
            for name in sorted(by):
                lengths = {c.length for info in reader.infos for c in info
                           if c.name.upper() == name and c.type == "char"}
                if len(lengths) > 1 and ("BY " + name) not in warned:
                    warned.add("BY " + name)
                    var = self.pdv.get(name)
                    self.log.warning(f"Multiple lengths were specified for the BY variable "
                                     f"{var.name if var is not None else name} by input data sets. This might "
                                     "cause unexpected results.")
        for info in reader.infos:
            for c in info:
                if c.type != "char" or c.name.upper() in by or c.name.upper() in warned:
                    continue
                var = self.pdv.get(c.name)
                if var is not None and var.type == "char" and var.length and c.length and c.length > var.length:
                    warned.add(c.name.upper())
                    msg = (f"Multiple lengths were specified for the variable {var.name} by input data set(s). "
                           "This can cause truncation of data.")
                    if mode == "ERROR":
                        raise SasError(msg, st.line, st.col, var.name)
                    self.log.warning(msg)

    def _only_in_attributes(self, var) -> bool:
        return var.name.upper() in getattr(self, "assigned_elsewhere", set())

    def by_for(self, st):
        return self.by

    def _declare_assign(self, target, expr) -> None:
        from statgrid.sas.parse import ast as A
        pdv = self.pdv
        _, kind, length = self.expr.gen(expr)
        if isinstance(target, A.Var) and target.name not in pdv.arrays:
            v = pdv.get(target.name)
            if v is None or v.type is None:
                t = "char" if kind == "char" else "num"
                v = pdv.declare(target.text, t, (length if t == "char" else 8))
            v.uninit = False

    # what one element of a _TEMPORARY_ array costs here at its peak (measured, 5M elements 690 MB: its entries in the PDV's
    # slot list, in the row of values and in the array's slot tuple, the slot numbers, a float when set; SAS's
    # own need is 8 bytes a number, the length a character)
    TEMPORARY_ELEMENT_BYTES = 112

    def _check_temporary_size(self, st, n: int) -> None:
        """SAS's ERROR when an array cannot be held within MEMSIZE (rather than the node running out of memory)."""
        try:
            memsize = int(self.program.options.get("MEMSIZE"))
        except Exception:  # noqa: BLE001 - no options (a test's bare step): no limit
            return
        need = n * max(self.TEMPORARY_ELEMENT_BYTES, (st.length or 8) if st.char else 8)
        if memsize and need > memsize:
            raise SasError(f"Unable to allocate sufficient memory for the array {st.name}: {n:,} elements need "
                           f"about {need / 2**20:,.0f} MB, more than MEMSIZE={memsize / 2**20:,.0f}M allows",
                           st.line, st.col, st.name, "fewer elements, or a larger -memsize")

    def _partial_init(self, st, n: int) -> None:
        """SAS's WARNING when an ARRAY statement gives fewer initial values than the array has elements (the
        rest start missing)."""
        if st.init and len(st.init) < n:
            self.log.warning(f"Partial value initialization of the array {getattr(st, 'text', '') or st.name}.")

    def _array(self, st) -> None:
        pdv = self.pdv
        kind = "char" if st.char else "num"
        length = st.length or (8 if not st.char else 8)
        if st.temporary:
            n = 1
            for dd in st.dims:
                n *= dd
            self._check_temporary_size(st, n)
            self._partial_init(st, n)
            blank = " " * length if st.char else V.MISSING
            inits = [x if x is not None else blank for x in st.init[:n]]
            slots = pdv.temp_block(n, kind, length, inits)
            for sl in slots[len(inits):len(inits) + 1]:
                pdv.slots[sl].init = blank        # the shared element: missing (or blanks) at the start
            pdv.arrays[st.name] = ArrayInfo(st.name, slots, list(st.dims), st.lower, st.char, True)
            return
        names = pdv.expand(st.elements, st.line, st.col, declare=False) if st.elements else []
        implicit = not st.dims
        if not names:
            total = 1
            for dd in st.dims:
                total *= dd
            names = [f"{st.text or st.name}{i}" for i in range(1, total + 1)]
        dims = list(st.dims)
        if dims == ["*"] or implicit:
            dims = [len(names)]
        self._partial_init(st, len(names))
        slots = []
        for i, name in enumerate(names):
            orig = next((it[1] for it in st.elements if it[0] == "name" and it[1].upper() == name), name)
            v = pdv.declare(orig, kind if (st.char or pdv.get(name) is None or pdv.get(name).type is None) else None,
                            length if st.char or st.length else None, st.line, st.col)
            if st.char and v.type != "char":
                raise SasError("All variables in array list must be the same type, i.e., all numeric or character",
                               st.line, st.col, name)
            if i < len(st.init):
                v.init, v.retained = st.init[i], True
            slots.append(v.slot)
        info = ArrayInfo(st.name, slots, dims, st.lower or [1], st.char or (bool(slots) and pdv.slots[slots[0]].type == "char"),
                         implicit=implicit)
        if implicit:
            iv = getattr(st, "index_var", "")
            if iv:                  # ARRAY a(j) …: j is an ordinary variable (written out unless dropped)
                var = pdv.get(iv)
                if var is None or var.type is None:
                    var = pdv.declare(iv, "num", 8, st.line, st.col)
                var.uninit = False
                info.index_var = var.name.upper()
            else:
                pdv.declare("_I_", "num", auto=True)
                info.index_var = "_I_"
        pdv.arrays[st.name] = info

    def _attrs(self, st) -> None:
        pdv = self.pdv
        if st.kind == "KEEP":
            self.keep = (self.keep or []) + [("items", st.items)]
        elif st.kind == "DROP":
            self.drop_items = getattr(self, "drop_items", []) + [st.items]
        elif st.kind == "RENAME":
            for old, new in st.items:
                self.rename[old] = new
        elif st.kind == "LABEL":
            for name, label in st.items:
                pdv.declare(name).label = label
        elif st.kind in ("FORMAT", "INFORMAT"):
            for items, fmt in st.items:
                for name in pdv.expand(items, st.line, st.col):
                    v = pdv.get(name)
                    if st.kind == "FORMAT":
                        v.format = fmt
                    else:
                        v.informat = fmt
        elif st.kind == "ATTRIB":
            for items, attrs in st.items:
                for name in pdv.expand(items, st.line, st.col, declare=False):
                    orig = next((it[1] for it in items if it[0] == "name" and it[1].upper() == name), name)
                    if "LENGTH" in attrs:
                        kind, n = attrs["LENGTH"]
                        v = pdv.declare(orig, kind, n, st.line, st.col)
                        v.length, v.len_explicit = n, True
                    else:
                        v = pdv.declare(orig)
                    v.format = attrs.get("FORMAT", v.format)
                    v.informat = attrs.get("INFORMAT", v.informat)
                    v.label = attrs.get("LABEL", v.label)

    # -- outputs --------------------------------------------------------------------------------------------------
    def output_columns(self, spec: DatasetSpec) -> list:
        pdv = self.pdv
        names = [n for n in pdv.order if not pdv.vars[n].auto]
        if not getattr(self, "_warned_lists", False):
            self._warned_lists = True
            listed = [n for _, items in (self.keep or []) for n in pdv.expand(items, declare=False)]
            listed += [n for items in getattr(self, "drop_items", []) for n in pdv.expand(items, declare=False)]
            listed += list(self.rename)
            for n in dict.fromkeys(listed):
                var = pdv.get(n)
                if var is None:
                    self.log.warning(f"The variable {n.lower()} in the DROP, KEEP, or RENAME list has never "
                                     "been referenced.")
        if self.keep is not None:
            kept = set()
            for _, items in self.keep:
                kept |= set(pdv.expand(items, declare=False))
            names = [n for n in names if n in kept]
        for items in getattr(self, "drop_items", []):
            dropped = set(pdv.expand(items, declare=False))
            names = [n for n in names if n not in dropped]
        if spec.keep is not None:
            kept = set(pdv.expand(spec.keep, declare=False))
            for k in kept:
                if k not in names:
                    raise SasError(f"The variable {k} in the DROP, KEEP, or RENAME list has never been referenced",
                                   spec.line, spec.col, k)
            names = [n for n in names if n in kept]
        if spec.drop is not None:
            dropped = set(pdv.expand(spec.drop, declare=False))
            names = [n for n in names if n not in dropped]
        return names
