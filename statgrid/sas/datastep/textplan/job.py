"""Running one INFILE step in the text engine: the look at the file (its bytes, then one DuckDB pass for
the record count and lengths), the COPY of the fields to the output's Parquet file through the step's
DatasetWriter, and the Python engine's NOTEs in its order: the infile's attributes, the records read with
their shortest and longest length, the data set."""
from __future__ import annotations

from statgrid.libraries import sql_ident
from statgrid.sas.datastep.sqlplan.exprsql import Refuse
from statgrid.sas.datastep.sqlplan.runner import Job, check_quiet_and_ordered, one_output, one_row, output_names
from statgrid.sas.datastep.textplan import fieldsql, source
from statgrid.sas.datastep.textplan.plan import StepPlan, plan_step


class RecordStats:
    """What the records NOTE says: the count and the shortest and longest record, in characters."""
    __slots__ = ("records", "min_chars", "max_chars")

    def __init__(self, records: int, min_chars: int | None, max_chars: int | None):
        self.records, self.min_chars, self.max_chars = records, min_chars, max_chars


class InfileJob(Job):
    def __init__(self, step, spec, names: list[str], plan: StepPlan):
        super().__init__(step, spec, names)
        self.plan = plan
        self.path = source.infile_path(step, plan.infile)
        self.w = self.writer()

    def check_data(self) -> None:
        inf = self.plan.infile
        source.check_bytes(self.path)
        recs = source.records_sql(self.path, inf)
        cur = self.con.cursor()
        try:
            row = one_row(cur, f"SELECT count(*), min(length(__rec)), max(length(__rec)) FROM ({recs})")
        finally:
            cur.close()
        self.stats = RecordStats(int(row[0]), row[1], row[2])
        reach = max((f.end_col for f in self.plan.fields.values()), default=0)
        shortest = inf.lrecl if inf.pad and inf.lrecl else row[1]
        if self.stats.records and not inf.missover and shortest < reach:
            # SAS's FLOWOVER would go on in the next record; the Python engine is the reference for it
            raise Refuse(f"a record of {shortest} characters, shorter than the INPUT statement reads ({reach})")
        line = f"SELECT {source.line_sql(inf)} AS __line FROM ({recs})"
        pieces = fieldsql.chunks_sql("__line", reach) + [f"length(__line) AS {fieldsql.LINE_CHARS}"]
        self.sql = f"SELECT {', '.join(self._columns())} FROM (SELECT {', '.join(pieces)} FROM ({line}))"

    def _columns(self) -> list[str]:
        inf, out = self.plan.infile, []
        for i, n in enumerate(self.names):
            f = self.plan.fields.get(n)
            var = self.step.pdv.vars[n]
            if f is not None:
                expr = fieldsql.value_sql(f, inf.only_missover, self.plan.letters)
            else:                               # a variable the step never sets: missing (blank) throughout
                expr = "NULL" if var.type == "num" else "''"
            typ = "DOUBLE" if var.type == "num" else "VARCHAR"
            out.append(f"CAST({expr} AS {typ}) AS {sql_ident(self.w.cols[i].name)}")
        if not out:
            raise Refuse("no variables to write")
        return out

    def _after_copy(self, rows: int) -> None:
        if rows != self.stats.records:
            raise Refuse(f"the file changed while it was read ({self.stats.records} records, then {rows})")
        self._notes()

    def _notes(self) -> None:
        st, log, s = self.plan.infile.stmt, self.step.log, self.stats
        self.step.textio._note_infile(st, self.path)
        text = f"{s.records} records were read from the infile {self.step.textio._infile_label(st.target)}."
        if s.records:
            text += f"\nThe minimum record length was {s.min_chars}.\nThe maximum record length was {s.max_chars}."
        log.note(text)
        self.step.notes.report(log)


def prepare(step) -> InfileJob:
    """The job for `step`, or Refuse: its structure (plan.py), one output data set without row options,
    no compile-time conversion NOTE, DuckDB keeping the file's order."""
    plan = plan_step(step)
    spec = one_output(step)
    check_quiet_and_ordered(step, "records")
    return InfileJob(step, spec, output_names(step, spec), plan)
