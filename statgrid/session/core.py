"""The Session: one OS process's libraries, WORK/UTIL directories, engine and step log.

    with statgrid.session(memsize="1G") as s:
        s.import_csv("sales.csv", out="work.sales")
        s.sort("work.sales", by=["region", "amount desc"])
        s.means("work.sales", var=["amount"], class_=["region"])

Every procedure runs as a *step*: it is timed by STIMER, logged as a NOTE block and a JSON
line, and its errors are turned into one clear `StepError` naming the step. WORK and UTIL are
removed when the session closes — normally, on an exception, or on SIGTERM/SIGINT.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

import duckdb
import pyarrow.parquet as pq

from statgrid.config import Config, SessionOptions, format_size, load_config
from statgrid.errors import LibraryError, SessionTerminated, StatgridError, StepError
from statgrid.procs import (access as _access, contents as _contents, datasets as _datasets, datastep as _datastep,
                            export as _export, freq as _freq, genmod as _genmod, glimmix as _glimmix, glm as _glm,
                            importing as _importing, logistic as _logistic, mining as _mining, mixed as _mixed, rank as _rank,
                            regression as _regression, reshape as _reshape,
                            sasdata as _sasdata, sort as _sort, tabulate as _tabulate, univariate as _univariate,
                            sqlproc as _sqlproc, summary as _summary)
from statgrid.procs import gee as _gee, surveylogistic as _surveylogistic
from statgrid.host import procfs as _procfs
from statgrid.libraries import (LIBNAMES_ENV, DatasetRef, Libraries, Library, atomic_output,
                                        decode_libnames, parquet_copy_sql)
from statgrid.session.log import SessionLog
from statgrid.host.scratch import ScratchDir
from statgrid.session.stimer import StepRecord, StepTimer, total_record

_SIGNALS = {signal.SIGTERM, signal.SIGINT}


class _Signals:
    """One process-wide SIGTERM/SIGINT handler for every live session.

    Installed when the first session opens and put back to what it was when the last one
    closes, whatever order sessions close in.
    """

    live: list["Session"] = []
    original: dict[int, Any] = {}

    @classmethod
    def add(cls, session: "Session") -> None:
        if not cls.live:
            cls.original = {signum: signal.signal(signum, cls.handle) for signum in _SIGNALS}
        cls.live.append(session)

    @classmethod
    def discard(cls, session: "Session") -> None:
        if session in cls.live:
            cls.live.remove(session)
            if not cls.live:
                for signum, handler in cls.original.items():
                    signal.signal(signum, handler)
                cls.original = {}

    @classmethod
    def handle(cls, signum: int, frame: Any) -> None:
        if any([s._on_signal(signum) for s in list(cls.live)]):
            raise SessionTerminated(signum)


@dataclass
class StepInfo:
    """What the running step has produced so far (filled in by `Session.write`)."""

    name: str
    outputs: list[str] = field(default_factory=list)
    rows_out: int | None = None


class Session:
    def __init__(self, config: Config | None = None, options: SessionOptions | Mapping[str, Any] | None = None,
                 log: SessionLog | None = None, procfs: str = _procfs.PROCFS_PATH,
                 pinned_options: frozenset[str] = frozenset()):
        self.config = config or load_config()
        if isinstance(options, SessionOptions):
            self.options = options
        else:
            self.options = self.config.session.with_overrides(options or {}, source="session options")
        self.id = f"{os.getpid():x}_{uuid.uuid4().hex[:8]}"
        self.log = log or SessionLog()
        self.procfs = procfs
        self.steps: list[StepRecord] = []
        self.terminating: int | None = None
        self._pinned = pinned_options
        self._closed = self._closing = False
        self._current: StepInfo | None = None
        self._failed = False
        self._threads_lowered = False
        self._timer = StepTimer(self.id, 0, "SESSION", procfs, reset_hwm=False)
        self.work: ScratchDir | None = None
        self.util: ScratchDir | None = None
        self.con: duckdb.DuckDBPyConnection | None = None
        # Librefs assigned by this session (libname()) or handed down by a parent job
        # ($STATGRID_LIBNAMES): what its own sub-tasks get (connect.py). grid.toml's are every session's.
        self.assigned_libnames: dict[str, Library] = {}
        # Hold SIGTERM/SIGINT until the handlers that clean up are in place: a signal in
        # between would otherwise leave WORK and UTIL behind (it is delivered on unblock).
        blocked = self._block_signals()
        try:
            self._start()
        except BaseException:
            self._restore_handlers()
            if self.con is not None:
                self.con.close()
            self._remove_scratch()
            if blocked:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
            raise
        try:
            if blocked:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
            self.log.note(f"session {self.id} started; WORK={self.work.path} UTIL={self.util.path}\n"
                          + " ".join(f"{k}={v}" for k, v in self.options.as_sas_names().items()))
            if self.assigned_libnames:
                self.log.note(f"Librefs of the parent job (${LIBNAMES_ENV}): " + ", ".join(
                    f"{lib.name.upper()}={lib.path}{' (read-only)' if lib.readonly else ''}"
                    for lib in self.assigned_libnames.values()))
        except BaseException:
            self.close(failed=True)
            raise

    def _start(self) -> None:
        roots = self.config.libraries
        self.work = ScratchDir.create(roots.work, "work", self.id)
        self.util = ScratchDir.create(roots.util, "util", self.id)
        self.libraries = Libraries()
        try:
            self.libraries.assign("data", roots.data, create=True)
        except OSError as exc:
            raise StatgridError(f"cannot use the data library {str(roots.data)!r}: {exc.strerror}; check "
                                "[libraries] data in grid.toml and the directory's permissions.") from None
        for lib in self.config.libnames.values():
            try:
                self.libraries.assign(lib.name, lib.path, lib.readonly)
            except LibraryError as exc:
                raise LibraryError(f"{exc} (from [libname.{lib.name}] in grid.toml)") from None
        inherited = os.environ.get(LIBNAMES_ENV)
        for lib in decode_libnames(inherited) if inherited else ():
            try:   # a sub-task's: the same permanent libraries as its parent session (WORK stays its own)
                self.assigned_libnames[lib.name] = self.libraries.assign(lib.name, lib.path, lib.readonly)
            except LibraryError as exc:
                raise LibraryError(f"{exc} (a libref of the parent job, from ${LIBNAMES_ENV}; the sub-task's host "
                                   "must see the parent's library directories at the same paths)") from None
        self.libraries.assign("work", self.work.path)
        self.con = duckdb.connect(config={"temp_directory": str(self.util.path)})
        self._apply_engine_options()
        self.libraries.sync_views(self.con)
        self.con.execute("SET search_path = 'work,main'")   # a one-level name means WORK
        self._install_signal_handlers()

    # ------------------------------------------------------------------ options
    def _apply_engine_options(self) -> None:
        o = self.options
        self.con.execute(f"SET memory_limit = '{o.memsize_bytes}B'")
        self.con.execute(f"SET threads = {o.effective_threads}")
        if o.utilsize_bytes:
            self.con.execute(f"SET max_temp_directory_size = '{o.utilsize_bytes}B'")

    @contextmanager
    def sort_memory(self) -> Iterator[int]:
        """SORTSIZE as DuckDB's memory_limit while a sort runs (sortsize_bytes, never above memsize; 0 or ≥
        memsize: no change), set back to memsize afterwards. Yields the limit in bytes. DuckDB has no sort
        memory of its own: its sorts spill to UTIL (temp_directory) when the query's limit is reached."""
        limit = max(self.options.sort_memory_bytes, 16 * 1024**2)      # DuckDB needs a little to run at all
        if limit >= self.options.memsize_bytes or self.con is None:
            yield self.options.memsize_bytes
            return
        self.con.execute(f"SET memory_limit = '{limit}B'")
        try:
            yield limit
        finally:
            if not self._closed:
                self.con.execute(f"SET memory_limit = '{self.options.memsize_bytes}B'")

    def sort(self, *args: Any, **kwargs: Any) -> DatasetRef:
        """PROC SORT (statgrid.procs.sort.sort) within SORTSIZE (sort_memory)."""
        with self.sort_memory():
            return _sort.sort(self, *args, **kwargs)

    sort.__doc__ = (_sort.sort.__doc__ or "") + "\n        Runs within the session's sortsize (Session.sort_memory)."

    def set_options(self, options: Mapping[str, Any], source: str = "session()") -> None:
        """Change session options (SAS names). Options pinned on the command line win."""
        wanted = dict(options)
        for key in [k for k in wanted if k.lower() in self._pinned]:
            self.log.note(f"{key}={wanted.pop(key)!r} from {source} is ignored: the command line set it.")
        if wanted:
            self.options = self.options.with_overrides(wanted, source=source)
            self._apply_engine_options()
            self.log.note("options: " + " ".join(f"{k}={v}" for k, v in self.options.as_sas_names().items()))

    # ------------------------------------------------------------------ libraries
    def libname(self, name: str, path: str | os.PathLike, readonly: bool = False) -> None:
        """Assign directory `path` as library `name` (like SAS LIBNAME)."""
        lib = self.libraries.assign(name, path, readonly)
        self.assigned_libnames[lib.name] = lib
        self.log.note(f"Libref {lib.name.upper()} was successfully assigned: {lib.path}"
                      + (" (read-only)" if readonly else ""))

    def ref(self, dsname: str) -> DatasetRef:
        return self.libraries.ref(dsname)

    def dataset(self, dsname: str) -> DatasetRef:
        """An existing data set, or LibraryError naming the library's members."""
        return self.libraries.for_read(dsname)

    def columns(self, source_sql: str) -> list[tuple[str, str]]:
        """[(name, SQL type)] of a relation given as SQL (a scan or a query)."""
        return [(r[0], r[1]) for r in self.execute(f"DESCRIBE SELECT * FROM {source_sql}").fetchall()]

    # ------------------------------------------------------------------ steps
    @contextmanager
    def step(self, name: str) -> Iterator[StepInfo]:
        """Run one step: STIMER around it, errors turned into StepError naming the step."""
        self._check_open()
        if self._current is not None:   # a procedure called from inside another: one step
            yield self._current
            return
        info = self._current = StepInfo(name)
        timer = StepTimer(self.id, len(self.steps) + 1, name, self.procfs)
        status, error = "ok", None
        try:
            yield info
            if self.terminating:
                raise SessionTerminated(self.terminating)
        except BaseException as exc:
            if self.terminating or isinstance(exc, SessionTerminated):
                status = "terminated"
                self.log.error(f"{name} stopped: the session received signal {self.terminating}.")
                raise SessionTerminated(self.terminating or signal.SIGTERM) from None
            status = "error"
            err = exc if isinstance(exc, StepError) else StepError(name, self._explain(exc))
            error = err.reason
            self._failed = True
            self.log.error(f"{name}: {error}")
            self.log.note(f"The session stopped processing {name} because of errors.")
            if err is exc:
                raise
            raise err from (exc if not isinstance(exc, StatgridError) else None)
        finally:
            self._current = None
            if self._threads_lowered and not self._closed:
                self.con.execute(f"SET threads = {self.options.effective_threads}")
                self._threads_lowered = False
            rec = timer.finish(status, error, info.outputs, info.rows_out)
            self.steps.append(rec)
            self.log.step(rec)

    def _explain(self, exc: BaseException) -> str:
        """One clear sentence for an engine or OS error, with the option that fixes it."""
        text = str(exc).strip()
        first = text.splitlines()[0] if text else type(exc).__name__
        if isinstance(exc, StatgridError):
            return str(exc)
        if isinstance(exc, duckdb.OutOfMemoryException):
            threads = 1 if self._threads_lowered else self.options.effective_threads
            return (f"out of memory at memsize={format_size(self.options.memsize_bytes)} "
                    f"(threads={threads}): {first}. Raise memsize (e.g. --option memsize=4G)"
                    + (" or lower threads." if threads > 1 else "."))
        if "No space left on device" in text or (isinstance(exc, OSError) and exc.errno == errno.ENOSPC):
            free = {k: shutil.disk_usage(d.path).free for k, d in (("WORK", self.work), ("UTIL", self.util)) if d}
            return ("no space left on device (free: " + ", ".join(f"{k} {format_size(v)}" for k, v in free.items())
                    + "); free space or point [libraries] work/util in grid.toml at a larger file system.")
        if isinstance(exc, PermissionError) and exc.filename:
            return f"Insufficient authorization to access {exc.filename}."       # SAS's words for EACCES
        if isinstance(exc, FileNotFoundError) and exc.filename:
            return f"Physical file does not exist, {exc.filename}."
        if isinstance(exc, duckdb.CatalogException):
            m = re.search(r'schema "([^"]+)" does not exist', text)
            if m:
                return (f"SQL error: library {m.group(1)!r} is not assigned; known libraries: "
                        f"{', '.join(lib.name for lib in self.libraries)}. Assign it with session.libname() or a "
                        f"[libname.{m.group(1)}] section in grid.toml.\n{text}")
            return f"SQL error: {text}\nData sets: " + "; ".join(
                f"{lib.name.upper()}: {', '.join(lib.members()[:10]) or '(none)'}" for lib in self.libraries)
        if isinstance(exc, (duckdb.ParserException, duckdb.BinderException)):
            return f"SQL error: {text}"
        if isinstance(exc, duckdb.Error):
            return text
        return f"{type(exc).__name__}: {text}"

    def _check_open(self) -> None:
        if self._closed:
            raise StatgridError(f"session {self.id} is closed; open a new one with statgrid.session().")

    # ------------------------------------------------------------------ sub-tasks (MP CONNECT)
    def parallel(self, tasks, queue: str | None = None, timeout_s: float | None = None, check: bool = True):
        """Run `tasks` (connect.Task) as grid jobs under this one and wait for them all; see
        statgrid.session.connect.parallel. Returns list[connect.TaskResult]."""
        from statgrid.session import connect   # the grid client only for sessions that use it

        return connect.parallel(self, tasks, queue=queue, timeout_s=timeout_s, check=check)

    # ------------------------------------------------------------------ engine
    def execute(self, sql: str, params: list | None = None) -> duckdb.DuckDBPyConnection:
        """Run SQL on the session engine. On out-of-memory with several threads, retry once on one.

        A wide sort needs a fixed amount of memory per thread before it can spill (DESIGN.md
        measured ~0.4–0.5 GB per thread for 25 columns under DuckDB 1.x; DuckDB 2.0 sorted 20
        columns in ~180 MiB on 2 threads); one thread often fits where two did not.
        """
        return self._retry_on_oom(lambda: self.con.execute(sql, params))

    def fetch_arrow(self, sql: str, limit: int | None = None):
        """Run a query and return its result (its first `limit` rows) as a pyarrow Table."""
        if limit is None:
            return self._retry_on_oom(lambda: self.con.sql(sql).to_arrow_table())
        return self._retry_on_oom(lambda: self.con.sql(sql).limit(limit).to_arrow_table())

    def _retry_on_oom(self, run: Callable[[], Any]) -> Any:
        try:
            return run()
        except duckdb.OutOfMemoryException:
            threads = self.options.effective_threads
            if self._threads_lowered or threads == 1 or self.terminating:
                raise
            self.log.note(f"out of memory at memsize={format_size(self.options.memsize_bytes)} with "
                          f"{threads} threads; the rest of the step runs with threads=1.")
            self.single_thread()
            return run()

    def single_thread(self) -> None:
        """Run the rest of the current step on one engine thread (file order, or less memory).

        Restored when the step ends, not sooner: a SET on the connection would replace the
        result a caller is about to fetch from it.
        """
        if not self._threads_lowered and self.options.effective_threads > 1:
            self.con.execute("SET threads = 1")
            self._threads_lowered = True

    def write(self, out: str | DatasetRef, select_sql: str,
              before_commit: Callable[[], None] | None = None, kv_metadata: dict[str, str] | None = None
              ) -> DatasetRef:
        """Write the result of `select_sql` as data set `out` (atomic: all or nothing).

        `before_commit` runs after the rows are written and before they replace `out`; if it
        raises, the new rows are discarded and any old `out` is left as it was.
        """
        ref = self.libraries.for_write(out.name if isinstance(out, DatasetRef) else out)   # refuses read-only
        with atomic_output(ref) as tmp:
            rows = self.execute(parquet_copy_sql(select_sql, tmp, self.options.dataset_io,
                                                 kv_metadata)).fetchone()[0]
            if before_commit is not None:
                before_commit()
        self.record_output(ref, rows)
        self.log.note(f"The data set {ref} has {rows} observations and {len(pq.read_schema(ref.path))} variables.")
        return ref

    def record_output(self, ref: DatasetRef, rows: int) -> None:
        """Count a data set the running step wrote into its STIMER record."""
        if self._current is not None:
            self._current.outputs.append(ref.name)
            self._current.rows_out = (self._current.rows_out or 0) + rows

    def write_table(self, out: str | DatasetRef, table, kv_metadata: dict[str, str] | None = None) -> DatasetRef:
        """Write an in-memory Arrow table (a procedure's small result) as data set `out`."""
        self.con.register("__statgrid_result", table)
        try:
            return self.write(out, "SELECT * FROM temp.main.__statgrid_result", kv_metadata=kv_metadata)
        finally:
            self.con.unregister("__statgrid_result")

    def nrows(self, ref: DatasetRef) -> int:
        return pq.read_metadata(ref.path).num_rows

    # ------------------------------------------------------------------ lifecycle
    @staticmethod
    def _block_signals() -> bool:
        if threading.current_thread() is not threading.main_thread():
            return False
        return not (_SIGNALS & signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS))

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is threading.main_thread():
            _Signals.add(self)

    def _restore_handlers(self) -> None:
        _Signals.discard(self)

    def _on_signal(self, signum: int) -> bool:
        """Flag the session as terminating; True if the caller should raise SessionTerminated.

        DuckDB runs Python signal handlers (PyErr_CheckSignals) while a query runs but does not
        stop every operator on its own (a cross join kept going): interrupt() does. The query
        then raises RuntimeError('Query interrupted') and our exception is lost — hence the
        flag, which `step` turns back into SessionTerminated.
        """
        first = self.terminating is None
        self.terminating = self.terminating or signum
        if not first or self._closing:
            return False
        if self.con is not None:
            self.con.interrupt()
        return True

    def _remove_scratch(self) -> None:
        for d in (self.util, self.work):
            if d is not None:
                d.remove()

    def close(self, failed: bool = False) -> StepRecord | None:
        """End the session: close the engine, log the total block, remove UTIL and WORK."""
        if self._closed:
            return None
        self._closing = True
        try:
            try:
                if self.con is not None:
                    self.con.close()
            finally:
                self._remove_scratch()
            status = ("terminated" if self.terminating else
                      "error" if (failed or self._failed) else "ok")
            total = total_record(self._timer, self.steps, status)
            self.log.step(total)
            self.log.note(f"session {self.id} ended ({status}); WORK and UTIL removed.")
            return total
        finally:
            self._closed = True
            self._restore_handlers()

    @property
    def failed(self) -> bool:
        return self._failed

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is not None and not isinstance(exc, (StepError, SessionTerminated)):
            self._failed = True
            self.log.error(f"{type(exc).__name__}: {exc}")
        self.close(failed=exc is not None)

    def __repr__(self) -> str:
        return f"<Session {self.id} WORK={self.work.path}{' closed' if self._closed else ''}>"

    # ------------------------------------------------------------------ procedures (statgrid/procs)
    import_csv = _importing.import_csv
    import_fixed = _importing.import_fixed
    sql = _sqlproc.sql
    data = _datastep.data
    means = _summary.means
    summary = _summary.summary
    freq = _freq.freq
    contents = _contents.contents
    print = _contents.print_rows
    datasets = _datasets.datasets
    copy = _datasets.copy
    delete = _datasets.delete
    export_csv = _export.export_csv
    reg = _regression.reg
    glm = _glm.glm
    genmod = _genmod.genmod
    gee = _gee.gee
    surveylogistic = _surveylogistic.surveylogistic
    logistic = _logistic.logistic
    tabulate = _tabulate.tabulate
    forest = _mining.forest
    fastclus = _mining.fastclus
    mixed = _mixed.mixed
    glimmix = _glimmix.glimmix
    rank = _rank.rank
    standardize = _rank.standardize
    transpose = _reshape.transpose
    surveyselect = _reshape.surveyselect
    univariate = _univariate.univariate
    lookup = _access.lookup
    point = _access.point
    import_sas = _sasdata.import_sas
    export_xpt = _sasdata.export_xpt
    sas_metadata = _sasdata.sas_metadata
