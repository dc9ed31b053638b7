"""SAS data sets read and written as SAS sees them, for the DATA step and the PROCs (the name and its
data set options are parsed by statgrid/sas/parse/dsname.py into a DatasetSpec):

- `input_sql(program, spec)`: a DuckDB SELECT of the data set as SAS sees it after its options, in SAS's
  order (SAS 9.4 Data Set Options: DROP=/KEEP= first, then RENAME=, then WHERE= on the new names, then
  FIRSTOBS=/OBS= counted among the rows WHERE keeps; the system options OBS=/FIRSTOBS= when the data set
  has none). Columns come out as SAS types: numbers DOUBLE (dates as days since 1960, datetimes and times
  as seconds), characters VARCHAR.
- `column_info(program, spec)`: name, type, length, format, informat, label per column.
- `DatasetWriter` / `write_dataset(...)`: atomic writes (batch by batch for the DATA step), nothing
  replaced in syntax-check mode, `program.last` set, SAS's NOTE on the observations and variables.
Column metadata lives in the Parquet key-value metadata `statgrid.columns` (statgrid/procs/sasdata.py).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import uuid
from dataclasses import dataclass
from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.errors import SasError
from statgrid.sas.parse.dsname import MAX_OBS, DatasetSpec
from statgrid.sas.parse.varlist import expand_numbered

COLUMNS_KEY = "statgrid.columns"
LABEL_KEY = "statgrid.label"
# The special missing values .A-.Z and ._ of a data set's numeric columns: Parquet has one null, so the
# letters live in the file's key-value metadata, {column: {0-based row: letter}} (read_specials); written by
# the DATA step's Python engine, read by its SET (a reader that does not look sees an ordinary missing).
SPECIALS_KEY = "statgrid.special_missing"


@dataclass
class ColumnInfo:
    name: str                 # as stored (case kept)
    type: str                 # 'num' | 'char'
    length: int = 8
    format: str = ""
    informat: str = ""
    label: str = ""
    source: str = ""          # the stored column name (before RENAME=)
    sql_type: str = "DOUBLE"  # the stored SQL type


def dataset_path(program: Any, spec: DatasetSpec):
    try:
        ref = program.session.ref(f"{spec.libref}.{spec.member}")
    except Exception as exc:  # noqa: BLE001 - a library that is not assigned
        raise SasError(f"Libref {spec.libref} is not assigned", spec.line, spec.col, spec.libref,
                       "a library assigned with LIBNAME") from exc
    if not ref.exists() and view_path(ref).is_file():
        return materialize_view(program, spec, ref)
    return ref


VIEW_SUFFIX = ".sasview.json"


def view_path(ref) -> Any:
    """Where a DATA step view (`DATA v / VIEW=v;`) keeps its program: beside the library's members."""
    return ref.library.path / (ref.member + VIEW_SUFFIX)


def save_view(program: Any, spec: DatasetSpec, statements: list) -> None:
    """Store a DATA step view: the step's statements (after macro resolution) and their DATALINES."""
    ref = program.session.libraries.for_write(f"{spec.libref}.{spec.member}")
    body = [{"text": s.text, "line": s.line, "datalines": s.datalines} for s in statements]
    view_path(ref).write_text(json.dumps({"version": 1, "statements": body}))
    program.log.note(f"DATA STEP view saved on file {spec.name}.")


def _view_cache(program: Any) -> dict:
    """The views materialized for the step that runs now: {view name: WORK member}. A view runs once per
    step that reads it (a PROC asks for the data set's path more than once); the next step runs it again.
    The step is known by the session's count of finished steps (a view's own DATA step runs inside the
    reading step, so it does not count)."""
    session = program.session
    steps = getattr(session, "steps", None)
    gen = (len(steps) if steps is not None else None, id(getattr(session, "_current", None)))
    holder = program.extras.get("datastep_view_cache")
    if holder is None or holder[0] != gen:
        holder = program.extras["datastep_view_cache"] = (gen, {})
    return holder[1]


def materialize_view(program: Any, spec: DatasetSpec, ref) -> Any:
    """Run a stored DATA step view into an internal WORK member for the step that reads it (SAS runs the
    view's step each time a step reads it: once per reading step here, the member kept for that step).
    The log has SAS's "View WORK.VW.VIEW used." and the NOTEs of the view's own reads; the internal
    member's "data set … has N observations" NOTE is not logged, and _LAST_ is left as it was."""
    from statgrid.sas.statement import Statement, statements_of

    cache = _view_cache(program)
    if spec.name in cache:
        if cache[spec.name] is None:
            raise SasError(f"The view {spec.name} reads itself.", spec.line, spec.col, spec.name)
        return cache[spec.name]
    stored = json.loads(view_path(ref).read_text())
    member = f"_view_{spec.libref.lower()}_{spec.member.lower()}"[:32]
    if "sql" in stored:                                   # a PROC SQL view (CREATE VIEW … AS SELECT)
        if program.sql_view is None:
            raise SasError(f"View {spec.name} cannot be read here: PROC SQL is not available in this program.")

        def run() -> None:
            program.sql_view(program, stored, member)
    else:
        stmts: list[Statement] = statements_of(f"data work.{member};")
        for item in stored["statements"]:
            got = statements_of(item["text"], item["line"])
            if got:
                got[-1].datalines = item.get("datalines")
            stmts += got
        if program.data_step is None:
            raise SasError(f"View {spec.name} cannot be read here: no DATA step runs in this program.")

        def run() -> None:
            program.data_step(stmts, program)
    program.log.note(f"View {spec.name}.VIEW used.")
    cache[spec.name] = None
    log, last = program.log, getattr(program, "last", None)
    internal = f"The data set WORK.{member.upper()} "
    own_note = "note" in vars(log)
    note = log.note

    def quiet_note(text, *args, **kwargs):
        if isinstance(text, str) and text.upper().startswith(internal.upper()):
            return None
        return note(text, *args, **kwargs)

    log.note = quiet_note
    try:
        run()
    except BaseException:
        cache.pop(spec.name, None)
        raise
    finally:
        if own_note:
            log.note = note
        else:
            del log.note
        program.last = last
    out = program.session.ref(f"work.{member}")
    cache[spec.name] = out
    return out


def stored_columns(program: Any, spec: DatasetSpec) -> list[ColumnInfo]:
    """The columns as stored, with SAS types and metadata; ERROR when the data set does not exist."""
    import pyarrow.parquet as pq
    import pyarrow as pa

    ref = dataset_path(program, spec)
    if not ref.exists():
        raise SasError(f"File {spec.libref}.{spec.member}.DATA does not exist", spec.line, spec.col, spec.name,
                       "an existing data set")
    import copy
    import os
    try:
        st = os.stat(ref.path)
        key = (str(ref.path), st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        key = None
    if key is not None and key in _STORED:
        return [copy.copy(c) for c in _STORED[key]]      # callers rename their copies (column_info)
    schema = pq.read_schema(ref.path)
    kv = schema.metadata or {}
    meta = json.loads(kv.get(COLUMNS_KEY.encode(), b"{}") or b"{}")
    out = []
    bare = [f.name for f in schema if (pa.types.is_string(f.type) or pa.types.is_large_string(f.type))
            and not meta.get(f.name, {}).get("length")]
    measured = _char_lengths(program, ref.path, bare) if bare else {}
    for f in schema:
        m = meta.get(f.name, {})
        is_char = pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
        length = int(m.get("length") or (measured.get(f.name, 8) if is_char else 8))
        fmt = m.get("format") or ""
        if not fmt and pa.types.is_date(f.type):
            fmt = "DATE9."
        elif not fmt and pa.types.is_timestamp(f.type):
            fmt = "DATETIME19."
        elif not fmt and pa.types.is_time(f.type):
            fmt = "TIME8."
        out.append(ColumnInfo(f.name, "char" if is_char else "num", length, fmt, m.get("informat") or "",
                              m.get("label") or "", f.name, str(f.type)))
    if key is not None:
        if len(_STORED) > 512:
            _STORED.clear()
        _STORED[key] = [copy.copy(c) for c in out]
    return out


# stored_columns by file version (path, mtime, size, inode): a data set is replaced by a rename, never changed in
# place (DatasetWriter), so a new version is a new key; 200 steps over one table read its schema once
_STORED: dict[tuple, list[ColumnInfo]] = {}


_CHAR_LENGTHS: dict[tuple, dict[str, int]] = {}
SAS_MAX_CHAR = 32767


def _char_lengths(program: Any, path: str, names: list[str]) -> dict[str, int]:
    """Lengths for character columns written without SAS's metadata (by the Python API or another tool): the
    longest value in bytes (at least 1, at most SAS's 32,767), as PROC IMPORT sizes a column — not a fixed 8,
    which a DATA step's SET would truncate every longer value to. One scan per file version, remembered."""
    import os
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size, tuple(names))
    if key not in _CHAR_LENGTHS:
        from statgrid.libraries import sql_ident
        cols = ", ".join(f"max(strlen({sql_ident(n)}))" for n in names)
        path_sql = str(path).replace("'", "''")
        row = program.session.execute(f"SELECT {cols} FROM read_parquet('{path_sql}')").fetchall()[0]
        if len(_CHAR_LENGTHS) > 256:
            _CHAR_LENGTHS.clear()
        _CHAR_LENGTHS[key] = {n: max(1, min(int(v or 1), SAS_MAX_CHAR)) for n, v in zip(names, row)}
    return _CHAR_LENGTHS[key]


def expand_var_list(items: list, names: list[str], types: dict[str, str] | None = None) -> list[str]:
    """Variable-list items → names among `names` (case-blind), in the list's order."""
    by_up = {n.upper(): n for n in names}
    order = [n.upper() for n in names]
    out: list[str] = []
    for item in items:
        kind = item[0]
        if kind == "name":
            out.append(by_up.get(item[1].upper(), item[1]))
        elif kind == "range":
            out += expand_numbered(item[1], item[2])
        elif kind == "dashes":
            a, b = order.index(item[1]) if item[1] in order else -1, order.index(item[2]) if item[2] in order else -1
            if a < 0 or b < 0:
                raise SasError(f"Variable {item[1] if a < 0 else item[2]} in a -- list is not defined")
            sel = order[a:b + 1]
            if item[3] and types:
                want = "num" if item[3] == "NUMERIC" else "char"
                sel = [n for n in sel if types.get(n) == want]
            out += [by_up[n] for n in sel]
        elif kind == "special":
            want = {"_NUMERIC_": "num", "_CHARACTER_": "char"}.get(item[1])
            out += [by_up[n] for n in order if want is None or (types or {}).get(n) == want]
        elif kind == "prefix":
            out += [by_up[n] for n in order if n.startswith(item[1])]
    return out


def output_names(spec: DatasetSpec, names: list[str], types: dict[str, str]) -> list[str]:
    """The upper-case names an output data set keeps of `names` after its KEEP= and DROP= options (SAS
    applies both before RENAME=); the DATA step's writer and the PROCs' writer share it."""
    keep = [n.upper() for n in names]
    if spec.keep is not None:
        keep = [k.upper() for k in expand_var_list(spec.keep, names, types)]
    if spec.drop is not None:
        dropped = {k.upper() for k in expand_var_list(spec.drop, names, types)}
        keep = [k for k in keep if k not in dropped]
    return keep


def column_info(program: Any, spec: DatasetSpec) -> list[ColumnInfo]:
    """The columns SAS sees through the data set's options (DROP=/KEEP=, then RENAME=)."""
    cols = stored_columns(program, spec)
    names = [c.name for c in cols]
    types = {c.name.upper(): c.type for c in cols}
    keep = {n.upper() for n in names}
    if spec.keep is not None:
        kept = expand_var_list(spec.keep, names, types)
        missing = [k for k in kept if k.upper() not in keep]
        if missing:
            raise SasError(f"The variable {missing[0]} in the DROP, KEEP, or RENAME list has never been referenced",
                           spec.line, spec.col, missing[0])
        keep = {k.upper() for k in kept}
    if spec.drop is not None:
        dropped = {k.upper() for k in expand_var_list(spec.drop, names, types)}
        keep -= dropped
    out = []
    for c in cols:
        if c.name.upper() not in keep:
            continue
        new = spec.rename.get(c.name.upper())
        if new:
            c.name = new
        out.append(c)
    for old in spec.rename:
        if old not in {c.source.upper() for c in cols}:
            raise SasError(f"Variable {old} is not on file {spec.name}", spec.line, spec.col, old)
    return out


def _sas_value_sql(c: ColumnInfo) -> str:
    """The stored column converted to SAS's value (numbers DOUBLE: dates as SAS days, times as seconds)."""
    q = sql_ident(c.source)
    t = c.sql_type.lower()
    if c.type == "char":
        return q
    if t.startswith("date32") or t == "date":
        return f"CAST(date_diff('day', DATE '1960-01-01', {q}) AS DOUBLE)"
    if t.startswith("timestamp"):
        return f"(epoch_us(CAST({q} AS TIMESTAMP)) / 1e6 + 315619200.0)"
    if t.startswith("time"):
        return f"(epoch_us(CAST('1970-01-01' AS DATE) + {q}) / 1e6)"
    if t == "double":
        return f"CASE WHEN isnan({q}) THEN NULL ELSE {q} END"
    return f"CAST({q} AS DOUBLE)"


def input_sql(program: Any, spec: DatasetSpec, columns: list[ColumnInfo] | None = None,
              row_number: str = "", row_number_type: str = "DOUBLE") -> str:
    """A DuckDB SELECT of the data set through its options (see the module's note on the order).
    `row_number`: a column name to add with the 1-based observation number in the file (for POINT=), a
    DOUBLE (a SAS number) unless `row_number_type` says BIGINT (a sort's tie-breaker: sorting by a computed
    DOUBLE cost PROC SORT 10–15 %)."""
    from statgrid.sas.where_sql import Column, register_udfs, where_sql

    cols = columns if columns is not None else column_info(program, spec)
    ref = dataset_path(program, spec)
    sel = [f"{_sas_value_sql(c)} AS {sql_ident(c.name)}" for c in cols]
    if row_number:
        sel.append(f"file_row_number AS {sql_ident(row_number)}" if row_number_type == "BIGINT" else
                   f"CAST(file_row_number + 1 AS DOUBLE) AS {sql_ident(row_number)}")
    sql = f"SELECT {', '.join(sel) or 'NULL AS __none'} FROM {ref.scan_sql(row_numbers=bool(row_number))}"
    if spec.where is not None:
        register_udfs(program.session.con)
        colmap = {c.name.upper(): Column(sql_ident(c.name), c.type, c.length) for c in cols}
        sql = f"SELECT * FROM ({sql}) WHERE {where_sql(spec.where, colmap, spec.name, program=program)}"
    first = spec.firstobs if spec.firstobs is not None else _sysopt(program, "FIRSTOBS", 1)
    obs = spec.obs if spec.obs is not None else _sysopt(program, "OBS", MAX_OBS)
    if getattr(program, "syntax_check", False):
        obs = 0
    if first > 1 or obs < MAX_OBS:
        count = max(0, obs - first + 1)
        sql = f"SELECT * FROM ({sql}) LIMIT {count} OFFSET {first - 1}"
    return sql


def _sysopt(program: Any, name: str, default: int) -> int:
    try:
        v = program.options.get(name)
        return int(v) if v is not None else default
    except Exception:  # noqa: BLE001
        return default


# -- writing ---------------------------------------------------------------------------------------------------
def columns_metadata(cols: list[ColumnInfo]) -> dict[str, dict]:
    out = {}
    for c in cols:
        m = {"length": c.length}
        if c.format:
            m["format"] = c.format
        if c.informat:
            m["informat"] = c.informat
        if c.label:
            m["label"] = c.label
        out[c.name] = m
    return out


def output_where_sql(program: Any, spec: DatasetSpec, cols: list[ColumnInfo]) -> str | None:
    """The SQL condition of an output data set's WHERE= option over its columns as written (SAS: "You can also
    select observations that are written to an output data set"), or None."""
    if spec.where is None:
        return None
    from statgrid.sas.where_sql import Column, register_udfs, where_sql
    register_udfs(program.session.con)
    colmap = {c.name.upper(): Column(sql_ident(c.name), c.type, c.length) for c in cols}
    return where_sql(spec.where, colmap, spec.name, program=program)


def dataset_io(program: Any, spec: DatasetSpec | None = None):
    """How output data set `spec` is written (config.DatasetIO): the session's BUFSIZE and COMPRESS (the
    OPTIONS statement and -bufsize set them: sas/options.py), then the data set options BUFSIZE= (bytes;
    0 = the session's) and COMPRESS=NO|YES|CHAR|BINARY. A bad value is a SasError at the option."""
    from dataclasses import replace

    from statgrid.config.dataset_io import MAX_BUFSIZE_BYTES, MIN_BUFSIZE_BYTES, DatasetIO, parse_compress
    from statgrid.sas.options import parse_size

    opts = getattr(program.session, "options", None)
    io = opts.dataset_io if opts is not None else DatasetIO()
    given = spec.options if spec is not None else {}
    for name in ("BUFSIZE", "COMPRESS"):
        if name not in given:
            continue
        raw = given[name]
        text = str(int(raw)) if isinstance(raw, float) and raw.is_integer() else str(raw)
        try:
            if name == "BUFSIZE":
                n = parse_size(text)
                if n:   # SAS's BUFSIZE=0: the engine's default, the session's here
                    io = replace(io, bufsize_bytes=min(max(n, MIN_BUFSIZE_BYTES), MAX_BUFSIZE_BYTES))
            else:
                io = replace(io, compress=parse_compress(text))
        except ValueError as exc:
            raise SasError(f"Invalid value for {name}= data set option", spec.line, spec.col, text, str(exc)) from None
    return io


def filter_written(program: Any, spec: DatasetSpec, cols: list[ColumnInfo], tmp) -> int | None:
    """Apply an output WHERE= to the Parquet file `tmp` just written (its rows, schema and metadata kept): the
    rows that pass replace it; their count, or None when there is no WHERE=."""
    cond = output_where_sql(program, spec, cols)
    if cond is None:
        return None
    import pyarrow.parquet as pq
    from statgrid.libraries import parquet_copy_sql

    kv = {k.decode(): v.decode() for k, v in (pq.read_schema(tmp).metadata or {}).items()
          if not k.startswith(b"ARROW:")}
    kept = Path(str(tmp) + ".where")
    path_sql = str(tmp).replace("'", "''")
    try:
        rows = int(program.session.execute(parquet_copy_sql(
            f"SELECT * FROM read_parquet('{path_sql}') WHERE {cond}", kept, dataset_io(program, spec), kv)
        ).fetchall()[0][0])
        os.replace(kept, tmp)
    finally:
        kept.unlink(missing_ok=True)
    return rows


class DatasetWriter:
    """One output data set written batch by batch to a temporary file beside it, renamed into place by
    `commit()` (atomic: a failed step leaves the old data set). In syntax-check mode nothing is replaced."""

    def __init__(self, program: Any, spec: DatasetSpec, cols: list[ColumnInfo], label: str | None = None):
        import pyarrow as pa

        self.program, self.spec, self.cols = program, spec, cols
        self.rows, self.writer, self.tmp = 0, None, None
        fields = [pa.field(c.name, pa.string() if c.type == "char" else pa.float64()) for c in cols]
        kv = {COLUMNS_KEY: json.dumps(columns_metadata(cols))}
        if label or spec.label:
            kv[LABEL_KEY] = label or spec.label
        self.schema = pa.schema(fields, metadata=kv)
        self.specials: dict[str, dict[str, str]] = {}     # column → {row: letter} (SPECIALS_KEY)
        self.ref = None
        if not spec.is_null:
            if spec.libref.lower() not in program.session.libraries:
                raise SasError(f"Libref {spec.libref.upper()} is not assigned", spec.line, spec.col, spec.name,
                               "a library assigned with LIBNAME")
            try:
                self.ref = program.session.libraries.for_write(f"{spec.libref}.{spec.member}")
            except Exception as exc:  # noqa: BLE001
                raise SasError(str(exc), spec.line, spec.col, spec.name) from None

    def write(self, arrays: list, specials: dict[int, dict[int, str]] | None = None) -> None:
        """Append one batch: one pyarrow array (or Python list) per column, in `cols` order; `specials`:
        {column index: {row in the batch: special-missing letter}} (those rows' values are null)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.ref is None:
            return
        for ci, rows in (specials or {}).items():
            mine = self.specials.setdefault(self.cols[ci].name, {})
            for r, code in rows.items():
                mine[str(self.rows + r)] = code
        batch = pa.RecordBatch.from_arrays([a if isinstance(a, pa.Array) else pa.array(a, f.type)
                                            for a, f in zip(arrays, self.schema)], schema=self.schema)
        if self.writer is None:
            self.tmp = self.ref.path.with_name(f".{self.ref.path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
            # dictionary encoding only for character columns: on numbers of distinct values (the usual
            # DATA step output) pyarrow's attempt costs ~2.5x the write and is dropped anyway
            chars = [f.name for f in self.schema if f.type == pa.string()]
            io = dataset_io(self.program, self.spec)
            self.row_group_rows = io.row_group_rows
            # BUFSIZE: groups of at most bufsize/8 rows and pages of bufsize bytes (config/dataset_io.py)
            self.writer = pq.ParquetWriter(str(self.tmp), self.schema, compression="none" if io.compress == "no"
                                           else io.codec, use_dictionary=chars, data_page_size=io.bufsize_bytes)
        self.writer.write_batch(batch, row_group_size=self.row_group_rows)
        self.rows += batch.num_rows

    def commit(self) -> None:
        p, log = self.program, self.program.log
        if self.ref is None:
            return
        if getattr(p, "syntax_check", False):
            self.abort()
            log.warning(f"Data set {self.spec.name} was not replaced because this step was stopped.")
            return
        if self.writer is None:
            self.write([[] for _ in self.cols])
        if self.specials and output_where_sql(p, self.spec, self.cols) is None:
            # (an output WHERE= keeps some rows only: their numbers change, the letters are not kept)
            self.writer.add_key_value_metadata({SPECIALS_KEY: json.dumps(self.specials)})
        self.writer.close()
        try:
            kept = filter_written(p, self.spec, self.cols, self.tmp)
        except BaseException:
            self.writer = None
            Path(self.tmp).unlink(missing_ok=True)
            raise
        self.rows = self.rows if kept is None else kept
        os.replace(self.tmp, self.ref.path)
        self.writer = None
        p.session.record_output(self.ref, self.rows)
        p.last = self.spec.name
        log.note(f"The data set {self.spec.name} has {self.rows} observations and {len(self.cols)} variables.")

    def adopt(self, write) -> None:
        """Commit a Parquet file that another writer made (the DATA step's SQL engine: DuckDB COPY): `write(tmp)`
        writes this data set's rows, with this writer's schema and key-value metadata, to the temporary path
        `tmp` beside the data set and returns the row count; then the same atomic rename, record and NOTE as
        commit(). A failing `write` leaves nothing (its exception goes on)."""
        p = self.program
        if self.ref is None:
            return
        self.tmp = self.ref.path.with_name(f".{self.ref.path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            self.rows = int(write(self.tmp))
            kept = filter_written(p, self.spec, self.cols, self.tmp)
            self.rows = self.rows if kept is None else kept
            os.replace(self.tmp, self.ref.path)
        except BaseException:
            self.abort()
            raise
        p.session.record_output(self.ref, self.rows)
        p.last = self.spec.name
        p.log.note(f"The data set {self.spec.name} has {self.rows} observations and {len(self.cols)} variables.")

    def abort(self) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            finally:
                self.writer = None
        if self.tmp is not None:
            try:
                self.tmp.unlink()
            except FileNotFoundError:
                pass


def write_dataset(program: Any, spec: DatasetSpec, data: Any, columns_meta: dict[str, dict] | None = None) -> None:
    """Write an Arrow table or the result of a SELECT as data set `spec` (its KEEP=/DROP=/RENAME=
    applied), atomically; columns_meta: {name: {"label","format","length","informat"}}."""
    import pyarrow as pa

    table = data if isinstance(data, pa.Table) else program.session.fetch_arrow(data)
    names = table.column_names
    types = {n.upper(): ("char" if pa.types.is_string(table.schema.field(n).type) else "num") for n in names}
    keep = output_names(spec, names, types)
    meta = {k.upper(): v for k, v in (columns_meta or {}).items()}
    cols, arrays = [], []
    for n in names:
        if n.upper() not in keep:
            continue
        m = meta.get(n.upper(), {})
        t = types[n.upper()]
        new = spec.rename.get(n.upper(), n)
        col = table.column(n)
        if t == "num" and not pa.types.is_floating(col.type):
            col = col.cast(pa.float64())
        cols.append(ColumnInfo(new, t, int(m.get("length") or 8), m.get("format") or "", m.get("informat") or "",
                               m.get("label") or ""))
        arrays.append(col.combine_chunks() if hasattr(col, "combine_chunks") else col)
    w = DatasetWriter(program, spec, cols)
    try:
        w.write(arrays)
        w.commit()
    except BaseException:
        w.abort()
        raise


def read_specials(path: Any) -> dict[str, dict[int, str]]:
    """The special missing letters a data set file keeps (SPECIALS_KEY): {COLUMN (upper case): {0-based row:
    letter}}; {} for a file without any."""
    import pyarrow.parquet as pq
    try:
        kv = pq.read_metadata(str(path)).metadata or {}
    except (OSError, ValueError):
        return {}
    raw = kv.get(SPECIALS_KEY.encode())
    if not raw:
        return {}
    try:
        got = json.loads(raw)
    except ValueError:
        return {}
    return {str(c).upper(): {int(r): str(code) for r, code in rows.items()} for c, rows in got.items()}
