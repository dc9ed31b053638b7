"""INPUT/INFILE and PUT/FILE at run time (SAS 9.4 Statements: INPUT — list, column, formatted; INFILE
options DLM= DSD MISSOVER TRUNCOVER PAD LRECL= FIRSTOBS= OBS= END=; PUT — list, named, formatted,
column pointers; FILE LOG/PRINT/a file). The invalid-data NOTE names the input line and the columns,
prints the line and the PDV, and sets _ERROR_ = 1 (SAS 9.4 Language Reference: Concepts, "Invalid Data").
The records themselves (RECFM=, LRECL=, FIRSTOBS=, OBS=, ENCODING=) are records.py's."""
from __future__ import annotations

from statgrid.sas import values as V
from statgrid.sas.errors import SasError, SasRuntimeError
from statgrid.sas.parse import ast as A
from statgrid.sas.parse import dsast as D
from statgrid.sas.datastep.infiles import InfileMixin
from statgrid.sas.datastep.linegroup import LineGroupMixin
from statgrid.sas.datastep.putio import PutMixin
from statgrid.sas.datastep.records import LineSource


def _informat(text, spec, catalog=None, whole=False):
    from statgrid.sas.formats import informat_value
    return informat_value(text, spec, catalog, whole=whole)


class TextIO(InfileMixin, LineGroupMixin, PutMixin):
    def __init__(self, step):
        self.step = step
        self.inputs: list = []
        self.files: list = []
        self.reads = False
        self.infile = None          # the current INFILE (opts, source)
        self.held = None            # a line held by a trailing @ / @@
        self.held_kind = ""
        self.out_target = "LOG"
        self.out_buf = ""
        self.print_lines: list[str] = []        # FILE PRINT's lines of this step
        self.out_files: dict = {}    # path → the open file, its label and the records written
        self.out_opts: dict = {}     # the current FILE statement's options (DLM=, DSD, MOD)
        self.out_label = ""
        self.out_pending = False     # a held output line ends in a list value: a delimiter before the next
        self.print_count = 0         # lines written to FILE PRINT
        self.line_no = 0             # records read so far
        self.cur_no = 0              # the current record's number (the invalid-data NOTE names it)
        self.quiet = 0               # the INPUT item being read has ? (1) or ?? (2)
        self.dlmstr: str | None = None   # INFILE DLMSTR=
        self.eof_labels: dict = {}   # statement label → its segment (INFILE EOF=label)
        self.eof_taken: set = set()  # the INFILEs whose EOF= label has been gone to
        self.group: list[str] = []   # the records of the observation being read (#n and / move among them)
        self.group_idx = 0
        self.group_first = 0
        self.v = None
        self.infile_paths: list = []
        self.infile_slot: int | None = None   # _INFILE_'s PDV slot: the input buffer as a variable
        self.cur_line = ""
        self.flowed = False          # FLOWOVER took a new line for a list-input value (a NOTE at the end)
        self.closed: list = []       # files FILEVAR= closed, for the records-read NOTEs at the end
        self.opened: dict = {}       # INFILE statement id → (options, LineSource, id, target), in open order

    @property
    def cur_line(self) -> str:
        return self._cur_line

    @cur_line.setter
    def cur_line(self, line: str) -> None:
        self._cur_line = line
        if self.infile_slot is not None and self.v is not None:
            self.v[self.infile_slot] = line

    # -- compile --------------------------------------------------------------------------------------------------
    def declare_infile_var(self) -> None:
        """_INFILE_ (SAS 9.4 Statements: INPUT, INFILE): in a step that reads text, an automatic character
        variable (not written) holding the current input record; a program may read it in expressions or
        change it, and a held record is then read from the changed value."""
        body = list(self._walk(self.step.body))
        if any(isinstance(s, D.Input) or (isinstance(s, D.FileStmt) and s.kind == "INFILE") for s in body):
            v = self.step.pdv.declare("_INFILE_", "char", 32767, auto=True)
            v.retained, v.uninit, v.len_explicit = True, False, True
            v.init = ""
            self.infile_slot = v.slot

    def declare_input(self, st) -> None:
        pdv = self.step.pdv
        self.reads = True
        st.items[:] = [e for it in st.items for e in self._array_elements(it)]
        for it in st.items:
            if it[0] != "var":
                continue
            _, target, char, mode, start, end, informat, amp = it[:8]
            if isinstance(target, A.Var) and target.name not in pdv.arrays:
                v = pdv.get(target.name)
                if v is None or v.type is None:
                    if char:
                        if mode == "col":
                            n = end - start + 1
                        elif informat:
                            from statgrid.sas.formats import parse_spec
                            n = parse_spec(informat).width or 8
                        else:
                            n = 8
                        v = pdv.declare(target.text, "char", n)
                    else:
                        v = pdv.declare(target.text, "num", 8)
                v.uninit = False

    def _array_elements(self, it) -> list:
        """An INPUT item `a{*}` as one item per element of array A, in its order (SAS reads them all)."""
        target = it[1] if it[0] == "var" else None
        if not (isinstance(target, A.Index) and target.subs == ["*"]):
            return [it]
        arr = self.step.pdv.arrays.get(target.name)
        if arr is None:
            raise SasError(f"Undeclared array referenced: {target.name}", target.line, target.col, target.name,
                           "an ARRAY statement before")
        import itertools
        subs = itertools.product(*(range(lo, lo + n) for lo, n in zip(arr.lower, arr.dims)))
        return [(it[0], A.Index(target.line, target.col, target.name,
                                [A.Num(target.line, target.col, float(k)) for k in sub]), *it[2:]) for sub in subs]

    def new_iteration(self) -> None:
        """A line held by a single trailing @ is released when the DATA step loops; @@ keeps it."""
        if self.held is not None and self.held_kind == "hold":
            self.held = None

    def input_index(self, st) -> int:
        self.inputs.append(st)
        return len(self.inputs) - 1

    def file_index(self, st) -> int:
        self.files.append(st)
        return len(self.files) - 1

    # -- run ------------------------------------------------------------------------------------------------------
    def start(self, v, ns) -> None:
        self.v, self.ns = v, ns
        for i, st in enumerate(self.inputs):
            ns[f"INPUT{i}"] = (lambda st=st: self.run_input(st))
        for i, st in enumerate(self.files):
            ns[f"FILESTMT{i}"] = (lambda st=st: self.run_file(st))
        self.datalines = None
        self.line_base = 0                   # DATALINES: the log's line numbers (the lines follow the statement)
        for s in self.step.body:
            if isinstance(s, D.Simple) and s.kind == "DATALINES":
                self.datalines = (s.args[0].datalines if s.args and s.args[0] is not None else None) or []
                last = s.args[0].tokens[-1].line if s.args and s.args[0] is not None and s.args[0].tokens else s.line
                self.line_base = last
        infiles = [s for s in self._walk(self.step.body) if isinstance(s, D.FileStmt) and s.kind == "INFILE"]
        if self.inputs and not infiles:
            if self.datalines is None:
                raise SasError("No DATALINES or INFILE statement for the INPUT statement", self.inputs[0].line,
                               self.inputs[0].col, "INPUT", "an INFILE statement or DATALINES")
            self.infile = ({}, LineSource(self.datalines, {}), "DATALINES")

    def _walk(self, sts):
        for s in sts:
            yield s
            for attr in ("then", "else_", "otherwise"):
                x = getattr(s, attr, None)
                if isinstance(x, D.Stmt):
                    yield from self._walk([x])
            if isinstance(s, D.Do):
                yield from self._walk(s.body)
            if isinstance(s, D.Select):
                yield from self._walk([b for _, b in s.whens])

    def run_input(self, st) -> bool:
        """One INPUT statement; True when the input is exhausted (the step stops)."""
        if self.infile is None and self.datalines is not None:
            # before an INFILE statement has run, INPUT reads the instream data (INFILE is executable: the
            # FILEVAR= idiom reads the file names from DATALINES, then each file)
            opened = self.opened.get("DATALINES")
            if opened is None:
                opened = self.opened["DATALINES"] = ({}, LineSource(list(self.datalines), {}), "DATALINES",
                                                     "DATALINES")
            self.infile, self.infile_name = opened[:3], "DATALINES"
        if self.infile is None:
            raise SasRuntimeError("INPUT without an INFILE statement before it", st.line, st.col, "INPUT")
        opts, src = self.infile[0], self.infile[1]
        if self.held is not None and self.held_kind == "hold2" and not self.held[0][self.held[1]:].strip():
            self.held = None                    # @@ at the end of its line: the next INPUT reads a new line
        if self.held is not None:
            line, pos = self.held
            if self.infile_slot is not None and isinstance(self.v[self.infile_slot], str):
                line = self.v[self.infile_slot]          # _INFILE_ changed by the program: the buffer changed
        else:
            line = src.next()
            if line is None:
                return self._at_eof(opts)
            pos = 0
            self.line_no += 1
            self.group, self.group_idx, self.group_first = [line], 0, self.line_no
            for _ in range(self.lines_per_obs(opts) - 1):   # #n or N=: the observation's N records at once
                more = self._next_record(src)
                if more is None:
                    return True
                self.group.append(more)
            self.cur_no = self.group_first
        self.held = None
        dlm = opts.get("DLM") or opts.get("DELIMITER") or " "
        if isinstance(dlm, list):
            dlm = "".join(dlm)
        dsd = bool(opts.get("DSD"))
        dlmstr = opts.get("DLMSTR")                # DLMSTR='||': one delimiter of several characters
        self.dlmstr = dlmstr if isinstance(dlmstr, str) and dlmstr else None
        if dsd and "DLM" not in opts and "DELIMITER" not in opts:
            dlm = ","
        missover = bool(opts.get("MISSOVER") or opts.get("TRUNCOVER"))
        # a column or formatted field that the line ends inside: TRUNCOVER reads what is there, MISSOVER
        # sets the variable to missing (SAS 9.4 Statements: INFILE, MISSOVER and TRUNCOVER); PAD or RECFM=F
        # lines are padded to LRECL, so no field is cut
        only_missover = bool(opts.get("MISSOVER")) and not opts.get("TRUNCOVER") and not src.pad
        stopover = bool(opts.get("STOPOVER")) and not missover
        # instream records are 80-column card images, blank-padded, or the whole line when longer (SAS 9.4
        # Statements: DATALINES, "Reading Long Data Lines", NOCARDIMAGE): a field inside them reads blanks
        # where the typed line ends; one that reaches past them flows over like any record's
        instream = str(getattr(self, "infile_name", "DATALINES")).upper() in ("DATALINES", "CARDS")
        self.cur_line = line
        for it in st.items:
            kind = it[0]
            if kind == "at":
                pos = self._at(it[1], line, pos)
                continue
            if kind == "plus":
                pos += int(self._num(it[1]))
                continue
            if kind in ("slash", "line"):
                line = self._move_line(src, it)
                if line is None:
                    return True
                pos = 0
                continue
            if kind in ("hold", "hold2"):
                self.held, self.held_kind = (line, pos), kind
                continue
            _, target, char, mode, start, end, informat, amp = it[:8]
            self.quiet = it[8] if len(it) > 8 else 0
            if mode in ("col", "fmt"):
                if mode == "fmt":
                    from statgrid.sas.formats import parse_spec
                    w = parse_spec(informat).width or 8
                    start, end = pos + 1, pos + w           # the columns the invalid-data NOTE names
                reclen = max(80, len(line)) if instream else len(line)
                if end > reclen and not src.pad and not missover:
                    # the field reaches past the record's end: FLOWOVER (the default) reads it from the next
                    # record, column 1 on for formatted input, its own columns for column input, as far as
                    # that record goes; STOPOVER stops the step (SAS 9.4 Statements: INFILE, "Reading Past
                    # the End of a Line")
                    if stopover:
                        self._stopover(st)
                    line = self._flow(src)
                    if line is None:
                        return True
                    if mode == "fmt":
                        start, end = 1, w
                text = line[start - 1:end] if not (only_missover and end > reclen) else ""
                pos = end
            else:
                text, pos = self._token(line, pos, dlm, dsd, amp)
                if text is not None:
                    # the value's columns (for the invalid-data NOTE): the pointer is past its delimiter
                    past = 1 if 0 < pos <= len(line) and line[pos - 1] in dlm and not amp else 0
                    start, end = pos - past - len(text), pos - past
                    start = max(start, 0) + 1
                if text is None and stopover:
                    self._stopover(st)
                if text is None:
                    if missover:
                        text = ""
                    else:
                        line = self._flow(src)
                        if line is None:
                            return True
                        pos = 0
                        text, pos = self._token(line, pos, dlm, dsd, amp)
                        text = text or ""
            self._store(target, char, informat, text, mode, start, end, st)
        end = opts.get("END")
        if end:                                   # END=: 1 once the current line is the last one
            var = self.step.pdv.get(end)
            if var is not None:
                self.v[var.slot] = 1.0 if src.at_end() else 0.0
        self._pointer_vars(opts, pos)
        return False

    def _stopover(self, st) -> None:
        """INFILE STOPOVER and a record too short for the INPUT statement: _ERROR_=1, the record shown under a
        RULE, and the step stops as at STOP, the observation not written (SAS 9.4 Statements: INFILE,
        STOPOVER); the ERROR and the PDV are written by the step's run-time error path."""
        target = getattr(self, "infile_name", "DATALINES")
        label = "CARDS" if str(target).upper() in ("DATALINES", "CARDS") else self._infile_label(target)
        self.v[self.step.pdv.get("_ERROR_").slot] = 1.0
        exc = SasRuntimeError(f"INPUT statement exceeded record length.  INFILE {label} OPTION STOPOVER specified",
                              st.line, st.col)
        exc.record_lines = self._rule_lines()
        raise exc

    def _rule_lines(self) -> list[str]:
        """The RULE line and the current record (as the invalid-data NOTE shows them)."""
        rule = "".join("+" if i % 10 == 5 else (str(i // 10 % 10) if i % 10 == 0 else "-")
                       for i in range(1, max(len(self.cur_line), 10) + 1))
        return [f"{'RULE:':<10}{rule}", f"{self.cur_no + self.line_base:<10}{self.cur_line}"]

    def _token(self, line, pos, dlm, dsd, amp):
        n = len(line)
        if self.dlmstr:
            return self._token_dlmstr(line, pos, self.dlmstr, dsd)
        if dsd:
            if pos > n:
                return None, pos
            if pos < n and line[pos] == '"':
                j = line.find('"', pos + 1)
                j = n if j < 0 else j
                tok = line[pos + 1:j]
                k = j + 1
                return tok, (k + 1 if k < n and line[k] in dlm else k)
            j = pos
            while j < n and line[j] not in dlm:
                j += 1
            return line[pos:j], j + 1
        while pos < n and line[pos] in dlm:
            pos += 1
        if pos >= n:
            return None, pos
        j = pos
        if amp:
            k = line.find("  ", pos)
            j = n if k < 0 else k
        else:
            while j < n and line[j] not in dlm:
                j += 1
            if j < n:
                # list input leaves the pointer in the second column after the value, past its delimiter
                # (SAS 9.4 Statements: INPUT, "Pointer Location After Reading"): `x $ y $73.` over
                # 'abc 123 456' reads y from column 9
                return line[pos:j], j + 1
        return line[pos:j], j

    def _store(self, target, char, informat, text, mode, start, end, st) -> None:
        from statgrid.sas.formats import InvalidData
        from statgrid.sas.formats.numeric import read_number
        x = self.step.expr
        slot_src, kind, length = x.gen(target)
        if not (slot_src.startswith("v[") and slot_src.endswith("]")):
            raise SasRuntimeError("INPUT reads into a variable or an array element", st.line, st.col)
        # a variable (v[7]) or an array element (v[IX1(…, subscript, …)]: its subscript evaluated now)
        inner = slot_src[2:-1]
        slot = int(inner) if inner.isdigit() else int(eval(inner, self.ns, {"v": self.v}))
        var = self.step.pdv.slots[slot]
        informat = informat or var.informat          # an INFORMAT/ATTRIB statement's informat (list input)
        try:
            if var.type == "char":
                if informat:
                    val = _informat(text, informat, whole=(mode == "list"))
                else:                              # list and column input read a character value as $w. does
                    val = _informat(text.strip() if mode != "col" else text, "$.", whole=True)
                self.v[slot] = V.pad(val, var.length)
            else:
                if informat:
                    val = _informat(text, informat, whole=(mode == "list"))
                else:
                    t = text.strip()
                    if t in ("", "."):
                        val = V.MISSING
                    elif len(t) == 2 and t[0] == "." and (t[1].isalpha() or t[1] == "_"):
                        val = V.special_missing(t[1])
                    elif len(t) == 1 and t.upper() in self.step.pdv.missing_letters:
                        val = V.special_missing(t)
                    else:
                        val = read_number(t)      # SAS's standard numeric input: not Python's float syntax
                self.v[slot] = val
        except (InvalidData, ValueError):
            self.v[slot] = V.MISSING if var.type == "num" else V.pad("", var.length)
            if self.quiet:
                # `x ? 8.`: no NOTE nor record shown, _ERROR_ still 1; `x ?? 8.`: _ERROR_ not set either
                if self.quiet == 1:
                    self.v[self.step.pdv.get("_ERROR_").slot] = 1.0
                return
            cols = f"{start}-{end}" if start else ""
            line_no = self.cur_no + self.line_base
            self.step.log.note(f"Invalid data for {var.name} in line {line_no} {cols}".rstrip() + ".")
            rule = "".join("+" if i % 10 == 5 else (str(i // 10 % 10) if i % 10 == 0 else "-")
                           for i in range(1, max(len(self.cur_line), 10) + 1))
            self.step.log.put(f"{'RULE:':<10}{rule}")
            cur = self.cur_line
            if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in cur):
                # a record with unprintable bytes: SAS shows it as CHAR (. for those), ZONE and NUMR
                # (the high and low half of each byte in hexadecimal)
                codes = [ord(c) & 0xFF if ord(c) < 256 else 0x3F for c in cur]
                chars = "".join(c if 32 <= ord(c) < 127 or ord(c) >= 160 else "." for c in cur)
                self.step.log.put(f"{line_no:<4}{'CHAR':<6}{chars}")
                self.step.log.put(f"{'':<4}{'ZONE':<6}{''.join(f'{b >> 4:X}' for b in codes)}")
                self.step.log.put(f"{'':<4}{'NUMR':<6}{''.join(f'{b & 15:X}' for b in codes)}")
            else:
                self.step.log.put(f"{line_no:<10}{cur}")
            self.v[self.step.pdv.get("_ERROR_").slot] = 1.0

    def _at(self, x, line: str, pos: int) -> int:
        """The pointer after `@x`: column x (@n, @numvar, @(expr)); for a character value (@'text', @charvar,
        @(char-expression)) the column after the text's next occurrence from the pointer on, trailing blanks
        of a variable's value not part of it (SAS 9.4 Statements: INPUT, Column Pointer Controls); a text
        not found puts the pointer past the record's end (the next value is then read as at a record's end)."""
        if isinstance(x, (int, float)):
            return int(x) - 1
        if isinstance(x, A.Str):
            text = x.value
        else:
            val = self._value(x)
            if not isinstance(val, str):
                return int(float(val)) - 1
            text = val.rstrip(" ")
        if not text:
            return pos
        k = line.find(text, pos)
        return len(line) + 1 if k < 0 else k + len(text)

    def _num(self, x) -> float:
        return float(x) if isinstance(x, (int, float)) else float(self._value(x))

    def _value(self, x):
        """A pointer control's expression, evaluated on the PDV now."""
        s, _, _ = self.step.expr.gen(x)
        return eval(s, self.ns, {"v": self.v})

    def _flow(self, src):
        """FLOWOVER: INPUT goes on in the next record (SAS's NOTE at the step's end), or None after a LOST CARD
        NOTE when the input has no more records."""
        line = src.next()
        if line is None:
            self.step.log.note("LOST CARD.")
            return None
        self.flowed = True
        self.line_no += 1
        self.group.append(line)
        self.group_idx, self.cur_no = len(self.group) - 1, self.line_no
        self.cur_line = line
        return line

    def finish(self) -> None:
        if self.out_buf:
            self._emit(self.out_buf.rstrip())
            self.out_buf = ""
        self.flush_print()
        self.close_outputs()
        self._close_infiles()
        if self.flowed:
            self.step.log.note("SAS went to a new line when INPUT statement reached past the end of a line.")

    def dump_pdv(self, v) -> None:
        """SAS's PDV listing after an error in an observation: the variables, then FIRST./LAST., then
        _ERROR_ and _N_ (temporary array elements and IN=/END= variables are not shown)."""
        parts = [f"{x.name}={self._render(v[x.slot], x.format, True).strip() or ' '}" for x in self._listed_vars()]
        self.step.log.put(" ".join(parts))

    def _listed_vars(self) -> list:
        """In PDV order: FIRST./LAST. stand where the BY statement put them, before the variables the step
        creates after it (a SAS 9.4 log: "... key=13620_HPLX alpha=… FIRST.key=1 LAST.key=1 counter=1 …")."""
        slots = self.step.pdv.slots
        listed = [x for x in slots if not x.auto or x.name.upper().startswith(("FIRST.", "LAST."))]
        return listed + [self.step.pdv.get("_ERROR_"), self.step.pdv.get("_N_")]
