"""Data for the Mixed Analytics workload: deterministic, scalable, one grid job per data set.

Every value is a function of (seed, data set, row number, column) through DuckDB's hash, so a
data set is the same whichever node makes it, in whatever order, with however many threads —
the same seed gives byte-identical files (for one DuckDB version). Sizes scale linearly with
`scale` from the row counts at scale 1.0 below (the papers' row counts, up to 90 M), each with a
floor so the smallest scales still give every procedure something to fit. In bytes, scale 1.0 is
about 141 GB of files (`written_bytes_per_row`; `statgrid datagen --dry-run` prints the estimate):
the papers' workloads move more — seed 000: 600 GB of input and output, 2.25 TB read and written
by the grid; seed 003: about 420 GB per node (300 GB for the I/O tests, 120 GB for computation) —
so matching their bytes takes a scale of about 3–4, not 1.

| name          | shape                                                                  | rows at 1.0 |
|---------------|------------------------------------------------------------------------|-------------|
| household     | census-like fixed-width text, 115 fields (549 B records)               | 30 M        |
| person        | fixed-width text, 128 fields, household key (622 B records)            | 90 M        |
| model297      | wide modelling table: 297 columns (binary and continuous targets)      | 10 M        |
| messy55       | 55 columns of mixed types, duplicates, padding and missing values      | 90 M        |
| customer_dim  | customer dimension, fixed 2000-byte text records                       | 10 M        |
| sales_fact    | fact table keyed to the customer dimension                             | 90 M        |
| rows128 / rows1k / rows10k | tables of 128 B / 1 KB / 10 KB rows for random read/write | 80 M / 10 M / 1 M |
| customer120   | 120-variable customer table                                            | 5 M         |
| design        | designed data for GLM and mixed models (factors, subjects, time)       | 1 M         |

Text files are written as `<name>.txt` beside the data sets of the library, with their field
layout in `layout(name)` (what the import jobs read them with). A manifest `_datagen.json` in the
library records seed, scale, rows and bytes of each finished data set; a data set whose entry
matches is not made again (restartable), and each file appears atomically.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

MANIFEST = "_datagen.json"
VERSION = 2


@dataclass(frozen=True)
class Spec:
    name: str
    kind: str                      # 'parquet' or 'text'
    rows_at_1: int
    min_rows: int
    # Bytes per row of the file as written (text, or Parquet zstd: the random payloads compress),
    # measured with `statgrid datagen --scale 0.01` (seed 1); at smaller scales the files' fixed
    # overhead adds up to 11 % (scale 0.002, checked by tests/unit/test_datagen_size.py). Orders the grid jobs biggest first and gives the
    # dry run's size estimate.
    written_bytes_per_row: float
    description: str
    build: Callable[[int], str]    # rows → SELECT (for text: one VARCHAR column 'line')


# ---------------------------------------------------------------------------- random values in SQL
def _u(salt: int) -> str:
    """Uniform (0, 1) from the row number i, a per-column salt and the seed (macro parameter)."""
    return f"sg_u(i, {salt})"


def _normal(salt: int) -> str:
    return f"(sqrt(-2 * ln({_u(salt)})) * cos(2 * pi() * {_u(salt + 7919)}))"


def _int(salt: int, lo: int, hi: int) -> str:
    return f"({lo} + (hash(i, {salt}, getvariable('sg_seed')) % {hi - lo + 1})::BIGINT)"


def macros(con, seed: int) -> None:
    con.execute(f"SET VARIABLE sg_seed = {int(seed)}")
    con.execute("CREATE OR REPLACE TEMP MACRO sg_u(i, s) AS "
                "((hash(i, s, getvariable('sg_seed')) >> 11)::DOUBLE + 0.5) / 9007199254740992.0")


# ---------------------------------------------------------------------------- fixed-width layouts
def _fixed_fields(prefix: str, n_fields: int, salt0: int) -> list[tuple[str, int, str, str]]:
    """(name, width, type, SQL producing the text of the field) — widths and types cycle."""
    kinds = [("int", 2), ("int", 4), ("num", 9), ("$", 6), ("int", 1), ("num", 7), ("$", 3), ("int", 6)]
    out = []
    for j in range(n_fields):
        typ, width = kinds[j % len(kinds)]
        salt = salt0 + j
        if typ == "int":
            expr = f"lpad({_int(salt, 0, 10 ** width - 1)}::VARCHAR, {width}, '0')"
        elif typ == "num":
            expr = f"lpad(printf('%.2f', {_u(salt)} * {10 ** (width - 3)}), {width}, ' ')"
        else:
            expr = f"rpad(chr(65 + ({_int(salt, 0, 25)})::INT) || {_int(salt + 1, 0, 99)}::VARCHAR, {width}, ' ')"
        # about 2 % of the numeric fields are blank (missing), as census extracts have
        if typ != "$":
            expr = f"CASE WHEN {_u(salt + 104729)} < 0.02 THEN repeat(' ', {width}) ELSE {expr} END"
        out.append((f"{prefix}{j + 1:03d}", width, typ, expr))
    return out


def _fixed_layout(key: list[tuple[str, int, str, str]], fields: list[tuple[str, int, str, str]]) -> list[tuple]:
    pos, cols = 1, []
    for name, width, typ, _ in key + fields:
        cols.append((name, pos, pos + width - 1, typ))
        pos += width
    return cols


_HH_KEY = [("hh_id", 10, "int", "lpad(i::VARCHAR, 10, '0')")]
_HH = _fixed_fields("h", 114, 1000)
_PERSON_KEY = [("person_id", 12, "int", "lpad(i::VARCHAR, 12, '0')"),
               ("hh_id", 10, "int", "lpad((i // 3)::VARCHAR, 10, '0')")]
_PERSON = _fixed_fields("p", 126, 2000)
_DIM_KEY = [("cust_id", 10, "int", "lpad(i::VARCHAR, 10, '0')"),
            ("name", 40, "$", "rpad('Customer ' || i::VARCHAR, 40, ' ')"),
            ("region", 2, "int", f"lpad({_int(3001, 1, 9)}::VARCHAR, 2, '0')"),
            ("segment", 1, "$", f"chr(65 + {_int(3002, 0, 4)}::INT)"),
            ("score", 8, "num", f"lpad(printf('%.3f', {_u(3003)} * 1000), 8, ' ')")]


def layout(name: str) -> list[tuple[str, int, int, str]]:
    """Field layout of a text data set: (name, start, end, type) as import_fixed takes it."""
    if name == "household":
        return _fixed_layout(_HH_KEY, _HH)
    if name == "person":
        return _fixed_layout(_PERSON_KEY, _PERSON)
    if name == "customer_dim":
        return _fixed_layout(_DIM_KEY, [])
    raise KeyError(name)


def _text_select(key, fields, record_bytes: int | None = None) -> Callable[[int], str]:
    parts = [expr for _, _, _, expr in key + fields]
    line = f"concat({', '.join(parts)})"         # one concat, not a chain of || (every prefix built): ~35 % faster
    if record_bytes:
        line = f"rpad({line}, {record_bytes - 1}, '.')"       # fixed records: newline makes up the rest
    return lambda rows: f"SELECT {line} AS line FROM range({rows}) t(i)"


# ---------------------------------------------------------------------------- tables
def _model297(rows: int) -> str:
    cols = ["i AS id"]
    k = 292
    # x1..x292: x1..x20 drive the targets; x21..x60 are noisy copies of them (collinear-ish)
    for j in range(1, k + 1):
        if 21 <= j <= 60:
            cols.append(f"x{j - 20} * 0.8 + {_normal(10_000 + j)} * 0.6 AS x{j}")
        else:
            cols.append(f"{_normal(10_000 + j)} AS x{j}")
    cols.append(f"['N','S','E','W','C'][1 + {_int(11_001, 0, 4)}] AS region")
    cols.append(f"{_int(11_002, 1, 4)} AS segment")
    inner = f"SELECT i, {', '.join(cols)} FROM range({rows}) t(i)"
    eta = "0.3 * x1 - 0.5 * x2 + 0.25 * x3 + 0.4 * x5 - 0.2 * x8 + 0.15 * x13 + (segment = 2)::INT * 0.5"
    return (f"SELECT * EXCLUDE (i), (sg_u(i, 11003) < 1 / (1 + exp(-({eta}))))::INT AS target, "
            f"round(50 + 3 * x1 + 2 * x2 - x4 + 0.5 * x7 + 4 * (region = 'N')::INT + 5 * {_normal(11_004)}, 4) "
            f"AS amount FROM ({inner})")


def _messy55(rows: int) -> str:
    cols = [f"{_int(12_000, 0, max(rows // 2, 1))} AS cust_key",         # about two rows per key: duplicates
            f"'  ' || ['alpha','Beta','GAMMA','delta ',' Epsilon'][1 + {_int(12_001, 0, 4)}] AS label",
            f"DATE '2000-01-01' + {_int(12_002, 0, 9000)}::INT AS event_date"]
    for j in range(52):
        salt = 12_100 + j
        kind = j % 4
        if kind == 0:
            v = f"round({_normal(salt)} * 100, 2)"
        elif kind == 1:
            v = f"{_int(salt, -1000, 1000000)}"
        elif kind == 2:
            v = f"upper(substr(md5((i % 997)::VARCHAR || '{j}'), 1, {4 + j % 9}))"
        else:
            v = f"({_u(salt)} < 0.5)"
        cols.append(f"CASE WHEN {_u(salt + 104729)} < 0.05 THEN NULL ELSE {v} END AS c{j + 1:02d}")
    return f"SELECT {', '.join(cols)} FROM range({rows}) t(i)"


def _sales_fact(rows: int, dim_rows: int) -> str:
    return (f"SELECT i AS sale_id, {_int(13_001, 0, max(dim_rows - 1, 0))} AS cust_id, "
            f"{_int(13_002, 1, 500)} AS product_id, DATE '2020-01-01' + {_int(13_003, 0, 1460)}::INT AS sale_date, "
            f"{_int(13_004, 1, 20)} AS qty, round({_u(13_005)} * 500, 2) AS amount FROM range({rows}) t(i)")


def _payload(rows: int, row_bytes: int) -> str:
    """Rows of about `row_bytes`: two integers and a payload of distinct MD5 hex digests (no repeats
    for the compressor to find; hex still compresses about 2:1 under zstd)."""
    n = max(1, (row_bytes - 16) // 32)
    # one concat of n digests: a chain of n `||` builds every prefix of the row (n² bytes a row: 3.4 GB and 3 s
    # for 2,000 rows of 10 KB, against 0.25 GB and 0.4 s this way, the same text)
    chunks = ", ".join(f"md5((i * {n} + {k})::VARCHAR || getvariable('sg_seed')::VARCHAR)" for k in range(n))
    return f"SELECT i AS id, {_int(14_001, 0, 1 << 30)} AS k, concat({chunks}) AS payload FROM range({rows}) t(i)"


def _customer120(rows: int) -> str:
    cols = ["i AS cust_id"]
    for j in range(1, 120):
        salt = 15_000 + j
        if j % 5 == 0:
            cols.append(f"['A','B','C','D'][1 + {_int(salt, 0, 3)}] AS v{j:03d}")
        elif j % 5 == 1:
            cols.append(f"{_int(salt, 0, 100)} AS v{j:03d}")
        else:
            cols.append(f"round({_normal(salt)} * 10 + 50, 3) AS v{j:03d}")
    return f"SELECT {', '.join(cols)} FROM range({rows}) t(i)"


def _design(rows: int) -> str:
    # subjects of 8 visits; factors a(4) × b(3) × c(2) crossed; a random subject effect and slope
    return (f"SELECT i // 8 AS subject, i % 8 AS visit, ['a1','a2','a3','a4'][1 + ((i // 8) % 4)] AS a, "
            f"['b1','b2','b3'][1 + ((i // 32) % 3)] AS b, ['c1','c2'][1 + (i % 2)] AS c, x, "
            f"round(10 + (a = 'a2')::INT * 1.5 - (b = 'b3')::INT + 0.8 * x + 0.3 * visit + u0 + u1 * visit "
            f"+ {_normal(16_010)}, 5) AS y, "
            f"(sg_u(i, 16011) < 1 / (1 + exp(-(-0.5 + 0.6 * x + u0))))::INT AS event, "
            f"floor(exp(0.5 + 0.3 * x + (c = 'c2')::INT * 0.4 + 0.6 * {_normal(16_012)}))::INT AS count "
            f"FROM (SELECT i, {_normal(16_001)} AS x, "
            f"sqrt(-2 * ln(sg_u(i // 8, 16002))) * cos(2 * pi() * sg_u(i // 8, 16003)) AS u0, "
            f"0.2 * sqrt(-2 * ln(sg_u(i // 8, 16004))) * cos(2 * pi() * sg_u(i // 8, 16005)) AS u1 "
            f"FROM range({rows}) t(i))")


SPECS: dict[str, Spec] = {s.name: s for s in [
    Spec("household", "text", 30_000_000, 500, 549.0, "census-like household records, fixed-width, 115 fields",
         _text_select(_HH_KEY, _HH)),
    Spec("person", "text", 90_000_000, 1_500, 622.0, "census-like person records, fixed-width, 128 fields",
         _text_select(_PERSON_KEY, _PERSON)),
    Spec("model297", "parquet", 10_000_000, 2_000, 2244.9, "wide modelling table, 297 columns", _model297),
    Spec("messy55", "parquet", 90_000_000, 2_000, 96.4, "55 messy columns for the big sort", _messy55),
    Spec("customer_dim", "text", 10_000_000, 500, 2000.0, "customer dimension, fixed 2000-byte records",
         _text_select(_DIM_KEY, [], record_bytes=2000)),
    Spec("sales_fact", "parquet", 90_000_000, 5_000, 10.4, "sales facts keyed to customer_dim",
         None),                    # select_sql builds it: its keys need customer_dim's row count
    Spec("rows128", "parquet", 80_000_000, 2_000, 57.9, "128-byte rows for random read/write",
         lambda rows: _payload(rows, 128)),
    Spec("rows1k", "parquet", 10_000_000, 1_000, 530.2, "1 KB rows for random read/write",
         lambda rows: _payload(rows, 1024)),
    Spec("rows10k", "parquet", 1_000_000, 200, 5382.6, "10 KB rows for random read/write",
         lambda rows: _payload(rows, 10240)),
    Spec("customer120", "parquet", 5_000_000, 1_000, 268.6, "customer table, 120 variables", _customer120),
    Spec("design", "parquet", 1_000_000, 960, 14.7, "designed data for GLM and mixed models", _design),
]}


def rows_for(spec: Spec, scale: float) -> int:
    return max(spec.min_rows, int(round(spec.rows_at_1 * scale)))


def plan(scale: float) -> dict[str, int]:
    """Rows of every data set at `scale`."""
    if not scale > 0 or not math.isfinite(scale):
        raise ValueError(f"scale {scale!r} must be a positive number (1.0 ≈ the papers' sizes; the demo uses 0.0002)")
    return {name: rows_for(spec, scale) for name, spec in SPECS.items()}


def estimated_bytes(scale: float) -> dict[str, int]:
    """Bytes of every data set's file at `scale`, from the measured bytes per row as written."""
    return {name: int(rows * SPECS[name].written_bytes_per_row) for name, rows in plan(scale).items()}


def select_sql(name: str, rows: int, scale: float) -> str:
    if name == "sales_fact":
        return _sales_fact(rows, rows_for(SPECS["customer_dim"], scale))
    return SPECS[name].build(rows)


# ---------------------------------------------------------------------------- manifest
def read_manifest(library_dir: Path) -> dict:
    p = Path(library_dir) / MANIFEST
    try:
        return json.loads(p.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def _update_manifest(library_dir: Path, name: str, entry: dict) -> None:
    """Read-modify-write under an exclusive lock: several nodes finish data sets at once."""
    import fcntl
    lock = Path(library_dir) / (MANIFEST + ".lock")
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        m = read_manifest(library_dir)
        m[name] = entry
        tmp = Path(library_dir) / f".{MANIFEST}.{os.getpid()}"
        tmp.write_text(json.dumps(m, indent=1, sort_keys=True))
        os.replace(tmp, Path(library_dir) / MANIFEST)


def file_of(library_dir: Path, name: str) -> Path:
    return Path(library_dir) / (f"{name}.txt" if SPECS[name].kind == "text" else f"{name}.parquet")


def is_done(library_dir: Path, name: str, scale: float, seed: int, io=None) -> bool:
    """Whether data set `name` is made for (scale, seed) — and, for a Parquet one when `io` (a
    config.DatasetIO) is given, written with its BUFSIZE and COMPRESS: `bench mixed -o bufsize=8k` reads
    data of 8 KiB requests, as SAS reads a data set in the page size it was created with. An entry from
    before these were recorded counts as the defaults it was written with (zstd)."""
    from statgrid.config.dataset_io import DEFAULT_BUFSIZE_BYTES, DEFAULT_COMPRESS

    e = read_manifest(library_dir).get(name)
    done = bool(e and e.get("seed") == seed and e.get("rows") == rows_for(SPECS[name], scale)
                and e.get("version") == VERSION and file_of(library_dir, name).exists())
    if done and io is not None and SPECS[name].kind == "parquet":
        done = (e.get("bufsize_bytes", DEFAULT_BUFSIZE_BYTES), e.get("compress", DEFAULT_COMPRESS)) == (
            io.bufsize_bytes, io.compress)
    return done


def missing(library_dir: Path, scale: float, seed: int, io=None) -> list[str]:
    return [n for n in SPECS if not is_done(library_dir, n, scale, seed, io)]


# ---------------------------------------------------------------------------- data larger than memory
def evict(path: str | os.PathLike) -> bool:
    """Drop `path`'s pages from the page cache (fsync, then posix_fadvise DONTNEED), so the next read of
    it goes to storage — how the seeds' data, far larger than memory, were read. This file only: no root,
    other files' cache untouched (unlike writing /proc/sys/vm/drop_caches); a cgroup memory.max would need
    the launcher's cgroup v2 memory controller, which hybrid v1/v2 hosts do not give. False if the file is
    gone or the file system ignores the advice call's failure cases (it never raises)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def evict_inputs(s, library: str, names: list[str]) -> None:
    """evict() the generated files `names` of `library` before a job's read phase (the I/O templates)."""
    lib_dir = Path(s.libraries.get(library).path)
    for name in names:
        evict(file_of(lib_dir, name))


# ---------------------------------------------------------------------------- making one data set
def generate(s, name: str, scale: float, seed: int, library: str = "data") -> dict:
    """Make data set `name` in library `library` of session `s` (one step, with its STIMER)."""
    from statgrid.libraries import sql_literal

    if name not in SPECS:
        raise ValueError(f"data set {name!r} is not one of {', '.join(SPECS)}")
    spec = SPECS[name]
    rows = rows_for(spec, scale)
    lib_dir = Path(s.libraries.get(library).path)
    t0 = time.perf_counter()
    with s.step(f"DATAGEN {name}"):
        macros(s.con, seed)
        sql = select_sql(name, rows, scale)
        if spec.kind == "parquet":
            s.write(f"{library}.{name}", sql)
        else:
            target = file_of(lib_dir, name)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            try:
                s.execute(f"COPY ({sql}) TO {sql_literal(str(tmp))} "
                          "(FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER '\x1f')")
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
            s.log.note(f"{target} has {rows} records.")
    size = file_of(lib_dir, name).stat().st_size
    evict(file_of(lib_dir, name))          # on storage, not in memory, when the workload reads it
    entry = {"seed": seed, "scale": scale, "rows": rows, "bytes": size, "version": VERSION,
             "seconds": round(time.perf_counter() - t0, 3)}
    if spec.kind == "parquet":
        entry.update(bufsize_bytes=s.options.bufsize_bytes, compress=s.options.compress)
    _update_manifest(lib_dir, name, entry)
    return entry


# ---------------------------------------------------------------------------- all of them: statgrid datagen
def run_all(cfg, scale: float, seed: int = 1, library: str = "data", local: bool = False,
            names: list[str] | None = None, echo=print) -> dict[str, dict]:
    """Make every data set not already made (per the manifest): one grid job per data set when a
    grid master answers (the biggest first, so they spread over the hosts), else one after the
    other in this process. Shows a progress bar; returns the manifest entries."""
    import sys

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from statgrid.errors import StatgridError
    from statgrid.grid.interface.server import running_master

    rows = plan(scale)
    lib_dir = _library_dir(cfg, library)
    lib_dir.mkdir(parents=True, exist_ok=True)
    todo = [n for n in (names or list(SPECS)) if not is_done(lib_dir, n, scale, seed, cfg.session.dataset_io)]
    todo.sort(key=lambda n: -rows[n] * SPECS[n].written_bytes_per_row)
    skipped = len(names or SPECS) - len(todo)
    if skipped:
        echo(f"{skipped} data set(s) already made with seed {seed} at scale {scale:g} (bufsize "
             f"{cfg.session.bufsize_bytes // 1024}K, compress {cfg.session.compress}); skipped.")
    cols = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*cols, transient=False, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task(f"datagen scale {scale:g}", total=len(todo))
        if todo and not local and running_master(cfg):
            from statgrid.grid.interface.batch import Batch
            from statgrid.grid.interface.client import GridClient
            grid = GridClient(cfg)
            argv = [sys.executable, "-m", "statgrid.bench.datagen", "--scale", repr(scale), "--seed", str(seed),
                    "--library", library] + (["--config", str(cfg.source)] if cfg.source else [])
            batch = Batch(grid)

            def ended(j: dict) -> None:         # the first that failed stops it all: the rest are killed
                bar.advance(task)
                if j["state"] != "DONE":
                    tail = grid.peek(j["id"], 1500)["text"]
                    raise StatgridError(f"datagen job {j['id']} ({ids[j['id']]}) ended {j['state']} "
                                        f"({j.get('exit_reason')}); its output ends with:\n{tail}")

            with batch.guard():
                ids = {batch.submit(argv + [n], name=f"datagen-{n}")["id"]: n for n in todo}
                echo(f"datagen: {len(ids)} grid jobs ({min(ids)}–{max(ids)}) for {', '.join(todo)}")
                batch.wait_all(on_end=ended)
        else:
            from statgrid.session import Session, SessionLog
            with Session(cfg, log=SessionLog(text=None, listing=None)) as s:
                for n in todo:
                    bar.update(task, description=f"datagen {n} ({rows[n]:,} rows)")
                    generate(s, n, scale, seed, library)
                    bar.advance(task)
    return {n: e for n, e in read_manifest(lib_dir).items() if n in SPECS}


def _library_dir(cfg, library: str) -> Path:
    """The directory of a permanent library: 'data' or a [libname.X] of grid.toml."""
    from statgrid.errors import UsageError
    if library.lower() == "data":
        return Path(cfg.libraries.data)
    if library.lower() in cfg.libnames:
        return Path(cfg.libnames[library.lower()].path)
    raise UsageError(f"--library {library!r} is not 'data' nor a [libname.*] of grid.toml "
                     f"({', '.join(['data', *cfg.libnames]) }); generated data must outlive the jobs.")


# ---------------------------------------------------------------------------- one grid job: python -m statgrid.bench.datagen
def main(argv: list[str] | None = None) -> int:
    """`python -m statgrid.bench.datagen NAME... --scale S --seed N --library LIB`: make the named
    data sets in one session (what each datagen grid job runs)."""
    import argparse

    from statgrid.config import load_config
    from statgrid.session import Session

    ap = argparse.ArgumentParser(prog="python -m statgrid.bench.datagen")
    ap.add_argument("names", nargs="+", choices=list(SPECS))
    ap.add_argument("--scale", type=float, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--library", default="data")
    ap.add_argument("--config")
    a = ap.parse_args(argv)
    with Session(load_config(a.config)) as s:
        for name in a.names:
            generate(s, name, a.scale, a.seed, a.library)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
