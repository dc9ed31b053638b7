"""The NUMBA engine's driver: the input read by DuckDB in Arrow record batches, each batch's numeric
columns as one float64 matrix and its FIRST./LAST./END= flags computed with numpy, the kernel called per
batch with the step's state (PDV, counts, random streams, LAG queues) kept in arrays between calls, the
output gathered in a fixed buffer and written through DatasetWriter whenever it fills (from inside the
kernel, through a ctypes callback) and at the end of each batch when character columns are carried through
(they are taken from the batch by input row index). Memory is bounded by the batch and buffer sizes.

A kernel that meets what only the Python engine does exactly (an invalid argument NOTE with its PDV dump,
a run-time ERROR, an input out of BY order) stops; the output is aborted, nothing has been logged, and
the step is left to the Python engine (try_run returns False)."""
from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import sys
import threading
import types
from pathlib import Path
from typing import Any

import numpy as np
from numba.core.errors import NumbaError

from statgrid.sas.datastep.compiled import state as S
from statgrid.sas.datastep.compiled.eligible import Plan

BATCH_ROWS = 262_144             # input rows per kernel call
OUT_ROWS = 262_144               # output buffer rows (a flush when full)

_kernels: dict[str, Any] = {}
_lock = threading.Lock()


def run_plan(step: Any, plan: Plan) -> bool:
    """Compile and run the analysed step; False (nothing done) when numba cannot compile it or the kernel
    stops where only the Python engine is exact."""
    try:
        mod = kernel_module(plan.source)
    except Exception as exc:  # noqa: BLE001 - a kernel numba cannot compile: the Python engine runs the step
        step.numba_refused = f"numba could not compile the step: {exc}"
        return False
    return Runner(step, plan, mod).run()


# -- compiling: in-process by source text, and numba's on-disk cache ----------------------------------------
def cache_dir() -> Path | None:
    """$XDG_CACHE_HOME/statgrid/datastep (default ~/.cache/…), the user's only (0700); None when unusable."""
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        d = base / "statgrid" / "datastep"
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = d.stat()
        if st.st_uid != os.getuid():
            return None
        if st.st_mode & 0o077:
            os.chmod(d, 0o700)
        return d
    except Exception:  # noqa: BLE001 - no cache: compiled in memory
        return None


def kernel_module(source: str):
    with _lock:
        mod = _kernels.get(source)
        if mod is None:
            mod = _load(source)
            _kernels[source] = mod
        return mod


def _load(source: str):
    """The kernel's module: written as a file named by its source's digest in the cache directory and
    imported (numba keeps the machine code beside it, in __pycache__, for the next process); in memory
    without caching when there is no usable cache directory."""
    name = "statgrid_datastep_kernel_" + hashlib.sha256(source.encode()).hexdigest()[:32]
    d = cache_dir()
    if d is not None:
        try:
            path = d / f"{name}.py"
            text = source.replace("CACHE = False", "CACHE = True", 1)
            if not path.is_file() or path.read_text() != text:
                tmp = d / f".{name}.{os.getpid()}.tmp"
                tmp.write_text(text)
                os.replace(tmp, path)
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            return mod
        except Exception:  # noqa: BLE001 - fall back to a module in memory
            sys.modules.pop(name, None)
    mod = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), mod.__dict__)
    return mod


# -- running --------------------------------------------------------------------------------------------------
class Bail(Exception):
    """The kernel stopped where only the Python engine is exact."""


class Runner:
    def __init__(self, step, plan: Plan, mod):
        self.step, self.plan, self.mod = step, plan, mod
        self.program, self.log = step.program, step.log
        nsites = len(plan.sites)
        self.v = np.array(plan.init, dtype=np.float64)
        self.cnt = np.zeros(2 * nsites + 1, dtype=np.int64)
        self.ist = np.zeros(S.IST_SIZE + len(plan.lags), dtype=np.int64)
        self.lq = np.full(max(sum(plan.lags), 1), np.nan)
        n_num = sum(1 for k in plan.out_kinds if k[0] == "num")
        self.ob = np.empty((n_num, OUT_ROWS), dtype=np.float64)
        self.outs = np.array(plan.out_slots, dtype=np.int64)
        self.osrc = np.zeros(OUT_ROWS, dtype=np.int64)
        self.has_char = any(k[0] == "char" for k in plan.out_kinds)
        self.char_cols: dict = {}
        seed = plan.rand_seed
        if plan.uses_rand and seed is None:
            from statgrid.sas.functions.random import clock_seed
            seed = clock_seed()
        self.gen = np.random.Generator(np.random.MT19937(seed or 1))
        self.writer = None

    # the output buffer → one batch of the data set
    def flush(self) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        k = int(self.ist[S.OUTCOUNT])
        if k == 0:
            return
        arrays = []
        idx = None
        for kind in self.plan.out_kinds:
            if kind[0] == "num":
                arrays.append(pa.array(self.ob[kind[1], :k].copy(), from_pandas=True))
            else:
                if idx is None:
                    idx = pa.array(self.osrc[:k].copy())
                arrays.append(pc.take(self.char_cols[kind[1]], idx))
        self.writer.write(arrays)
        self.ist[S.OUTCOUNT] = 0

    def run(self) -> bool:
        from statgrid.sas.dataset import DatasetWriter

        step, plan = self.step, self.plan
        self.writer = DatasetWriter(self.program, step.outputs[0], plan.columns)
        self.flush_error: BaseException | None = None
        self.hook = ctypes.CFUNCTYPE(None)(self._hook)     # called by the kernel when its buffer is full
        cur = None
        try:
            if plan.has_set:
                cur = self.program.session.con.cursor()
                self._run_set(cur)
            else:
                self._call(np.empty((0, 0)), np.empty((0, 0)), 0)
            self.flush()
        except Bail:
            self.writer.abort()
            step.numba_refused = "the kernel stopped where the Python engine is needed (an ERROR or a NOTE)"
            return False
        except NumbaError as exc:            # compiled at the first call: a kernel numba cannot type
            self.writer.abort()
            step.numba_refused = f"numba could not compile the step: {exc}"
            return False
        except BaseException:
            self.writer.abort()
            self._counts()                   # as the Python engine: the NOTEs so far, then the error
            step.notes.report(self.log)
            raise
        finally:
            if cur is not None:
                try:
                    cur.close()
                except Exception:  # noqa: BLE001
                    pass
        try:
            self._notes()
            self.writer.commit()
        except BaseException:
            self.writer.abort()
            raise
        return True

    def _hook(self) -> None:
        # an exception cannot cross the C callback: kept, the kernel told to stop, raised again after it
        try:
            self.flush()
        except BaseException as exc:  # noqa: BLE001
            self.flush_error = exc
            self.ist[S.BAIL] = 9

    def _call(self, inp, fl, n) -> int:
        status = self.mod._kernel(inp, fl, n, self.v, self.cnt, self.ist, self.ob, self.osrc, self.lq, self.gen,
                                  self.hook, self.outs)
        if self.flush_error is not None:
            raise self.flush_error
        if status == S.ST_BAIL or self.ist[S.BAIL] != 0:
            raise Bail()
        return status

    def _run_set(self, cur) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        from statgrid.sas.dataset import input_sql
        from statgrid.sas.where_sql import register_udfs

        plan = self.plan
        ds = plan.reader.stmt.datasets[0]
        info = plan.reader.infos[0]
        register_udfs(cur)
        batches = iter(cur.sql(input_sql(self.program, ds, info)).to_arrow_reader(BATCH_ROWS))
        flags = ByFlags(plan)

        def next_batch():
            for b in batches:
                if b.num_rows:
                    return b
            return None

        batch = next_batch()
        while batch is not None:
            nxt = next_batch()
            n = batch.num_rows
            inp = np.empty((len(plan.load), n), dtype=np.float64)
            for j, ci in enumerate(plan.load):
                inp[j] = batch.column(ci).to_numpy(zero_copy_only=False)
            fl = flags.batch(batch, nxt)
            if self.has_char:
                self.char_cols = {}
                for kind in plan.out_kinds:
                    if kind[0] == "char" and kind[1] not in self.char_cols:
                        col = pc.fill_null(batch.column(kind[1]), "")
                        col = pc.utf8_rtrim(pc.utf8_slice_codeunits(col, 0, kind[2]), characters=" ")
                        self.char_cols[kind[1]] = col.cast(pa.string())
            status = self._call(inp, fl, n)
            if self.has_char:
                self.flush()               # the buffer's row indexes refer to this batch
            if status == S.ST_STOP:
                break
            batch = nxt

    def _notes(self) -> None:
        step, plan, log = self.step, self.plan, self.log
        by_index = {i: key for key, i in plan.sites.items()}
        dz = int(self.ist[S.DIVZERO])
        if dz:
            line, col = by_index[dz - 1]
            log.note(f"Division by zero detected at line {line} column {col}.")
            step.notes.divzero.append((line, col))
        self._counts()
        step.notes.report(log)
        if plan.has_set:
            ds = plan.reader.stmt.datasets[0]
            from statgrid.sas.procs.common import observations_read
            observations_read(self.program, int(self.ist[S.ROWSREAD]), ds)      # its WHERE echoed, as in Python

    def _counts(self) -> None:
        """The kernel's counts by place into the step's Notes (runtime.Notes), as the Python engine keeps them."""
        notes, sites = self.step.notes, self.plan.sites
        ns = len(sites)
        for key, i in sites.items():
            if self.cnt[i]:
                notes.missing[key] += int(self.cnt[i])
            if self.cnt[ns + i]:
                notes.invalid_math[key] += int(self.cnt[ns + i])


class ByFlags:
    """FIRST./LAST. of each BY variable and END= for one batch, with the keys of the previous batch's last
    row and the next batch's first row (inputs.SetReader._flags: a character key without trailing blanks,
    every numeric missing alike); a pair of rows out of BY order (SetReader.check_sorted's order:
    missing lowest) stops the kernel: the Python engine writes that ERROR."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.prev: list | None = None        # the last row's keys: (flag key, order key) per BY variable

    def _keys(self, batch, ci, char):
        import pyarrow as pa
        import pyarrow.compute as pc
        col = batch.column(ci)
        if char:
            k = pc.utf8_rtrim(pc.fill_null(col, ""), characters=" ").cast(pa.string())
            return k, k
        x = col.to_numpy(zero_copy_only=False)
        return x, np.where(np.isnan(x), -np.inf, x)

    def batch(self, batch, nxt) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        plan = self.plan
        n = batch.num_rows
        nflags = len(plan.flag_slots)
        fl = np.empty((nflags, n), dtype=np.float64)
        if plan.by:
            change = np.zeros(n + 1, dtype=bool)       # change[i]: row i-1 → row i (i = 0: previous batch)
            bad = np.zeros(n + 1, dtype=bool)
            undecided = np.ones(n + 1, dtype=bool)
            firsts, lasts, last_keys = [], [], []
            for ci, char, desc in plan.by:
                k, o = self._keys(batch, ci, char)
                nk = no = None
                if nxt is not None:
                    nk, no = self._keys(nxt.slice(0, 1), ci, char)
                if char:                          # the ends stand in for missing neighbours (overridden below)
                    before = self.prev[len(last_keys)][0] if self.prev else ""
                    after = nk[0].as_py() if nk is not None else ""
                    ext = pa.concat_arrays([pa.array([before], pa.string()), k, pa.array([after], pa.string())])
                    a, b = ext.slice(0, n + 1), ext.slice(1, n + 1)
                    diff = pc.not_equal(a, b).to_numpy(zero_copy_only=False)
                    less = pc.less(b, a).to_numpy(zero_copy_only=False)
                    more = pc.greater(b, a).to_numpy(zero_copy_only=False)
                else:
                    pk = self.prev[len(last_keys)] if self.prev else (np.nan, np.nan)
                    ek = np.concatenate(([pk[0]], k, [nk[0] if nk is not None else np.nan]))
                    eo = np.concatenate(([pk[1]], o, [no[0] if no is not None else np.nan]))
                    a, b = ek[:-1], ek[1:]
                    diff = ~((a == b) | (np.isnan(a) & np.isnan(b)))
                    less = eo[1:] < eo[:-1]
                    more = eo[1:] > eo[:-1]
                if desc:
                    less, more = more, less
                bad |= undecided & less
                undecided &= ~(less | more)
                change |= diff
                if self.prev is None:
                    change[0] = True
                if nxt is None:
                    change[n] = True
                firsts.append(change[:n].astype(np.float64))
                lasts.append(change[1:].astype(np.float64))
                last_keys.append((k[-1].as_py(), None) if char else (k[-1], o[-1]))
            if self.prev is None:
                bad[0] = False
            if nxt is None:
                bad[n] = False
            if not plan.notsorted and bad.any():
                raise Bail()
            self.prev = last_keys
            for j, f in enumerate(firsts + lasts):
                fl[j] = f
        if plan.end:
            fl[nflags - 1] = 0.0
            if nxt is None:
                fl[nflags - 1, n - 1] = 1.0
        return fl
