"""The records of one observation for INPUT's line pointer controls (SAS 9.4 Statements: INPUT, "Line
Pointer Controls"; INFILE, N=): `#n` moves the pointer to record n of the observation's records, `/` to
the next record. The number of records available at once is INFILE N=, by default the highest `#n` of the
step's INPUT statements (1 when there is none): each new observation's first INPUT reads that many
records, so `input #1 a #3 b;` uses three records per observation even though it reads from two. A
record the input does not have (the file ends inside an observation) is SAS's LOST CARD: the step stops
and the incomplete observation is not written.

Also INPUT's other INFILE helpers: EOF=label (the end of the input goes to the label once), the LENGTH=,
COLUMN= and LINE= variables, and DLMSTR= list input."""
from __future__ import annotations

from statgrid.sas.errors import SasRuntimeError


class LineGroupMixin:
    _lines_per_obs: int | None = None

    def lines_per_obs(self, opts: dict) -> int:
        """N=, or the highest #n of the step's INPUT statements, or 1."""
        if self._lines_per_obs is None:
            highest = max([int(float(it[1])) for st in self.inputs for it in st.items if it[0] == "line"],
                          default=1)
            self._lines_per_obs = highest
        n = opts.get("N")
        if n is not None:
            try:
                return max(int(float(n)), self._lines_per_obs)
            except ValueError:
                raise SasRuntimeError(f"INFILE option N={n} is not a number of lines; write N=2 for example",
                                      0, 0, "N") from None
        return self._lines_per_obs

    def _next_record(self, src) -> str | None:
        """The next record of the input, counted; None after SAS's LOST CARD NOTE when there is none."""
        line = src.next()
        if line is None:
            self.step.log.note("LOST CARD.")
            return None
        self.line_no += 1
        return line

    def _move_line(self, src, it) -> str | None:
        """`#n` or `/`: the record the pointer moves to (read from the input when the observation does not
        have it yet), made current; None when the input has no more records (LOST CARD)."""
        if it[0] == "line":
            k = int(float(it[1]))
            if k < 1:
                raise SasRuntimeError(f"The line pointer #{k} is not a record number; #1 is the first record "
                                      "of the observation", 0, 0, "#")
            target = k - 1
        else:
            target = self.group_idx + 1
        while len(self.group) <= target:
            line = self._next_record(src)
            if line is None:
                return None
            self.group.append(line)
        self.group_idx = target
        self.cur_no = self.group_first + target
        self.cur_line = self.group[target]
        return self.cur_line

    def _at_eof(self, opts: dict):
        """INPUT finds no more records: the step stops (True), or with INFILE EOF=label it goes to the label
        the first time (SAS 9.4 Statements: INFILE, EOF=: "an implicit GO TO"); a later INPUT at the end
        stops the step."""
        label = opts.get("EOF")
        key = id(opts)
        if isinstance(label, str) and key not in self.eof_taken:
            seg = self.eof_labels.get(label.upper())
            if seg is None:
                raise SasRuntimeError(f"Statement label {label} named by INFILE EOF= is not defined", 0, 0, label)
            self.eof_taken.add(key)
            return ("G", seg)
        return True

    def _pointer_vars(self, opts: dict, pos: int) -> None:
        """INFILE LENGTH=, COLUMN= (COL=) and LINE=: the current record's length, the column the pointer is
        at and the line pointer's record of the observation, after each INPUT (SAS 9.4 Statements: INFILE)."""
        for opt, value in (("LENGTH", len(self.cur_line)), ("COLUMN", pos + 1), ("COL", pos + 1),
                           ("LINE", self.group_idx + 1)):
            name = opts.get(opt)
            if isinstance(name, str):
                var = self.step.pdv.get(name)
                if var is not None:
                    self.v[var.slot] = float(value)

    @staticmethod
    def _token_dlmstr(line: str, pos: int, s: str, dsd: bool):
        """List input's next value with INFILE DLMSTR='s' (SAS 9.4 Statements: INFILE, DLMSTR=): the string
        s separates values; without DSD consecutive delimiters count as one (and a leading one is skipped),
        with DSD each delimits a value (two in a row: a missing value) and a value may be double-quoted.
        (value or None at the record's end, the pointer after the delimiter)."""
        n = len(line)
        if dsd:
            if pos > n:
                return None, pos
            if pos < n and line[pos] == '"':
                j = line.find('"', pos + 1)
                j = n if j < 0 else j
                k = j + 1
                return line[pos + 1:j], (k + len(s) if line.startswith(s, k) else k)
            j = line.find(s, pos)
            return (line[pos:], n + 1) if j < 0 else (line[pos:j], j + len(s))
        while line.startswith(s, pos):
            pos += len(s)
        if pos >= n:
            return None, pos
        j = line.find(s, pos)
        j = n if j < 0 else j
        return line[pos:j], j
