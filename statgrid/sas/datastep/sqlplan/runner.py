"""Preparing and running one step in the SQL engine: the writer, the look at the input data, the COPY."""
from __future__ import annotations

import pyarrow.parquet as pq

from statgrid.libraries import parquet_copy_sql, sql_ident
from statgrid.sas.dataset import ColumnInfo, DatasetWriter, column_info, dataset_io, input_sql
from statgrid.sas.errors import SasError
from statgrid.sas.procs.common import observations_read
from statgrid.sas.where_sql import WhereNotSql
from statgrid.sas.datastep.sqlplan.exprsql import Refuse
from statgrid.sas.datastep.sqlplan import hashjoin, rowwise

from statgrid.sas.datastep.sqlplan.rowwise import BASE


def one_row(con, sql: str) -> tuple:
    """The one row of `sql`, fetched to the end (a result left open blocks the connection)."""
    return con.execute(sql).fetchall()[0]


def _read_row(con, sql: str) -> tuple:
    cur = con.cursor()
    try:
        return one_row(cur, sql)
    finally:
        cur.close()


def _count_sql(sql: str) -> str:
    return f"SELECT count(*) FROM ({sql})"


class Job:
    def __init__(self, step, spec, names: list[str]):
        self.step, self.spec, self.names = step, spec, names
        self.program = step.program
        self.con = step.program.session.con
        self.reads: list[tuple[object, int]] = []        # (data set, n): the NOTEs "There were n observations read …"

    def writer(self) -> DatasetWriter:
        pdv, step, spec = self.step.pdv, self.step, self.spec
        cols = []
        for n in self.names:
            var = pdv.vars[n]
            new = step.rename.get(n) or spec.rename.get(n) or var.name
            cols.append(ColumnInfo(new, var.type, var.length, var.format, var.informat, var.label))
        try:
            return DatasetWriter(self.program, spec, cols)
        except SasError as exc:                 # e.g. a read-only library: the Python engine reports it
            raise Refuse(f"the output data set: {exc}") from None

    def run(self) -> None:
        """COPY the query into the writer's temporary file (its schema checked to be the writer's), the step's
        NOTEs, then the writer's atomic rename and data set NOTE."""
        w = self.w

        def write(tmp) -> int:
            kv = {k.decode(): v.decode() for k, v in (w.schema.metadata or {}).items()}
            rows = self._copy(parquet_copy_sql(self.sql, tmp, dataset_io(self.program, self.w.spec), kv))
            got = pq.read_schema(tmp)
            if not got.equals(w.schema, check_metadata=True):
                raise Refuse(f"the file DuckDB wrote has the schema {got}, not the writer's {w.schema}")
            self._after_copy(rows)
            return rows
        w.adopt(write)

    def _after_copy(self, rows: int) -> None:
        """The NOTEs of the step that ran (a subclass may refuse here, before anything is renamed)."""
        self.step.notes.report(self.step.log)
        for ds, n in self.reads:
            observations_read(self.program, n, ds)     # with its WHERE clause echoed, as the Python engine

    def _copy(self, sql: str) -> int:
        """COPY with DuckDB's statistics propagation off: with it, a column it can prove never NULL (a
        constant, an input column without NULLs) is written `required`, and the file's schema would not be
        the one DatasetWriter writes (every column nullable). Restored after."""
        con = self.program.session.con
        was = one_row(con, "SELECT current_setting('disabled_optimizers')")[0] or ""
        off = ", ".join([o for o in was.split(",") if o.strip()] + ["statistics_propagation"])
        con.execute(f"SET disabled_optimizers = '{off}'")
        try:
            return self.program.session.execute(sql).fetchall()[0][0]
        finally:
            if was:
                con.execute(f"SET disabled_optimizers = '{was}'")
            else:
                con.execute("RESET disabled_optimizers")


def one_output(step):
    """The step's one output data set, without WHERE=, OBS=, FIRSTOBS= or IN= (what the SQL and text
    engines write); Refuse otherwise."""
    outs = list(step.outputs)
    if len(outs) != 1 or outs[0].is_null:
        raise Refuse("not exactly one output data set")
    spec = outs[0]
    if spec.where is not None or spec.obs is not None or spec.firstobs is not None or spec.in_var:
        raise Refuse("WHERE=, OBS=, FIRSTOBS= or IN= on the output data set")
    return spec


def output_names(step, spec) -> list[str]:
    """The output's variables; Refuse where the step cannot say them (the Python engine reports why)."""
    try:
        return step.output_columns(spec)
    except Exception as exc:  # noqa: BLE001 - the Python engine meets the same error and reports it
        raise Refuse(f"the output's variables: {exc}") from None


def check_quiet_and_ordered(step, rows: str) -> None:
    """Refuse a step with a conversion NOTE at compile time (only the Python engine places it) or a
    session where DuckDB does not keep the input's order (`rows`: what would lose it)."""
    n = step.notes
    if n.missing or n.divzero or n.char2num or n.num2char or n.invalid_math:
        raise Refuse("conversion NOTEs at compile time")
    order = one_row(step.program.session.con, "SELECT current_setting('preserve_insertion_order')")[0]
    if str(order).lower() not in ("true", "1"):
        raise Refuse(f"preserve_insertion_order is off (the {rows} would lose their order)")


def _common(step):
    """The one output data set and its variables; refuses what neither pattern takes."""
    spec = one_output(step)
    if step.textio.inputs or getattr(step.textio, "reads", False):
        raise Refuse("INPUT/INFILE")
    names = output_names(step, spec)
    check_quiet_and_ordered(step, "rows")
    return spec, names


def _input_sql(step, ds, info, row_number: str = "") -> str:
    try:
        return input_sql(step.program, ds, info, row_number=row_number)
    except WhereNotSql as exc:
        raise Refuse(f"a WHERE that SQL cannot say: {exc}") from None


class RowJob(Job):
    def __init__(self, step, spec, names):
        super().__init__(step, spec, names)
        rowwise.plan_rowwise(step, None)                 # structure only: refuses before any data is read
        self.reader = step.plan.readers[0]
        self.ds, self.info = self.reader.stmt.datasets[0], self.reader.infos[0]
        self.base = _input_sql(step, self.ds, self.info)
        self.w = self.writer()

    def check_data(self) -> None:
        rp, _ = rowwise.plan_rowwise(self.step, None)
        cols = rowwise.referenced_inputs(self.step, rp)
        parts = ["count(*)"]
        if cols:
            nulls = " OR ".join(f"{sql_ident(rp.input_num[c])} IS NULL" for c in cols)
            parts.append(f"count(*) FILTER (WHERE {nulls})")
            parts += [f"max(abs({sql_ident(rp.input_num[c])}))" for c in cols]
        row = _read_row(self.con, f"SELECT {', '.join(parts)} FROM ({self.base})")
        if cols and row[1]:
            raise Refuse(f"missing values in the input columns {', '.join(cols)}")
        bounds = {c: float(b) if b is not None else 0.0 for c, b in zip(cols, row[2:])}
        rp, _ = rowwise.plan_rowwise(self.step, bounds)
        self.reads = [(self.ds, int(row[0]))]
        sel = []
        for n in self.names:
            var = self.step.pdv.vars[n]
            new = self.w.cols[len(sel)].name
            sel.append(f"CAST({rp.env[n].sql} AS {'DOUBLE' if var.type == 'num' else 'VARCHAR'}) AS {sql_ident(new)}")
        rel = rp.rel.replace(BASE, self.base, 1)
        self.sql = f"SELECT {', '.join(sel) or 'NULL AS __none'} FROM ({rel})"
        if not sel:
            raise Refuse("no variables to write")


class HashJob(Job):
    def __init__(self, step, spec, names):
        super().__init__(step, spec, names)
        self.hp = hashjoin.plan_hash(step)
        from statgrid.sas.parse.dsname import parse_dataset_text
        try:
            self.l_spec = parse_dataset_text(self.hp.dataset, step.program)
            self.l_info = column_info(step.program, self.l_spec)
        except Exception as exc:  # noqa: BLE001 - the Python engine reports it at run time
            raise Refuse(f"the hash data set: {exc}") from None
        rb = step.plan.readers[1]
        self.b_ds, self.b_info = rb.stmt.datasets[0], rb.infos[0]
        ra = step.plan.readers[0]
        self.a_ds = ra.stmt.datasets[0]
        self.a_sql = _input_sql(step, self.a_ds, ra.infos[0])
        self.l_sql = _input_sql(step, self.l_spec, self.l_info, row_number="__r")
        self.b_sql = _input_sql(step, self.b_ds, self.b_info, row_number="__r")
        l_cols = {c.name.upper(): c.name for c in self.l_info}
        for c in self.l_info:
            if c.name.upper() in self.hp.keys + self.hp.data and c.type != "num":
                raise Refuse(f"hash key or data {c.name} is character in the hash's data set")
        self.sql = hashjoin.hash_sql(step, self.hp, spec, names, self.l_sql, l_cols, self.b_sql, self.b_info)
        self.w = self.writer()

    def check_data(self) -> None:
        n_l, n_b = _read_row(self.con, f"SELECT ({_count_sql(self.l_sql)}), ({_count_sql(self.b_sql)})")
        # the hash's load NOTE comes first (the first iteration), then each SET's count: `if 0 then set L`
        # never reads
        self.reads = [(self.l_spec, int(n_l)), (self.a_ds, 0), (self.b_ds, int(n_b))]


def prepare(step) -> Job:
    spec, names = _common(step)
    errors = []
    for cls in (RowJob, HashJob):
        try:
            return cls(step, spec, names)
        except Refuse as exc:
            errors.append(str(exc))
    raise Refuse("; ".join(errors))
