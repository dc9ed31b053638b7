"""What a job file is, read without running it: the kinds statgrid runs (Python jobs, SQL scripts, SAS
programs), the checks a job file must pass before it is submitted or run, and the memsize its session
declares.

Both the grid (checking a submission) and the session (running one) need these, so they live below
both; only the standard library and statgrid.errors (itself standard library only) are used.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path

from statgrid.errors import UsageError

JOB_KINDS = (".py", ".sql", ".sas")
# Interactive sessions: a notebook kernel the grid places (statgrid/kernels/), by its language.
KERNEL_LANGUAGES = ("sas", "python")
KERNEL_QUEUE = "interactive"          # where kernels go when grid.toml has that queue (else the default queue)


def check_job_file(path: str | os.PathLike) -> Path:
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"job file {str(p)!r} is a directory; give the path of a .py, .sql or .sas job in it.")
    if not p.exists():
        raise UsageError(f"job file {str(p)!r} does not exist; give the path of a .py, .sql or .sas job.")
    if not p.is_file():
        raise UsageError(f"job file {str(p)!r} is not a regular file (a FIFO, a device or a socket); give the path "
                         "of a .py, .sql or .sas job.")
    if p.suffix.lower() not in JOB_KINDS:
        raise UsageError(f"job file {str(p)!r} is not .py, .sql or .sas; statgrid runs Python jobs that use "
                         "statgrid.session(), SQL scripts and SAS programs.")
    if not os.access(p, os.R_OK):
        raise UsageError(f"job file {str(p)!r} is not readable by this user; check its permissions.")
    return p


# Calls through which a Python job sets session options (statgrid.session(memsize=...),
# open_session(...), Session(options={...}), s.set_options({...})), by their last name; the first
# three open (or, under the runner, borrow) a session: one without a memsize runs at the default.
_OPTION_CALLS = frozenset({"session", "open_session", "Session", "set_options"})
_OPENING_CALLS = frozenset({"session", "open_session", "Session"})
# A job file larger than this is not parsed for memsize (the reservation is then the default's):
# parsing costs ~50 bytes of memory per byte of source, and a job is code, not data.
PARSE_MAX_BYTES = 4 * 2**20


@dataclass(frozen=True)
class DeclaredMemsize:
    """What a job file says of its session's memsize, read without running it. sizes: (line, value
    as written) of each literal memsize; unsized: lines of session-opening calls without a literal
    memsize (they run at the default memsize, or at one computed at run time); skipped: why the
    file was not read ('' if it was)."""
    sizes: list[tuple[int, str]]
    unsized: list[int]
    skipped: str = ""


def declared_memsize(path: str | os.PathLike) -> DeclaredMemsize:
    """The memsize values a job file sets for its session: each literal `memsize=` keyword, or
    "memsize" key of a literal dict, in a call of statgrid.session / open_session / Session /
    set_options; and the session-opening calls that set none. A value computed at run time is not
    seen (its call counts as unsized); nor are .sql scripts' (SQL cannot set memsize: sqlproc
    refuses SET memory_limit), nor a file Python cannot parse (it fails when it runs), nor one over
    PARSE_MAX_BYTES or nested too deep for the parser (skipped says so). Reads the file as the
    calling process."""
    p = Path(path)
    if p.suffix.lower() != ".py":
        return DeclaredMemsize([], [])
    try:
        size = p.stat().st_size
        if size > PARSE_MAX_BYTES:
            return DeclaredMemsize([], [], f"{size:,} bytes, over the {PARSE_MAX_BYTES // 2**20} MiB statgrid reads "
                                           "for memsize")
        tree = ast.parse(p.read_bytes(), filename=str(p))
    except (SyntaxError, ValueError, OSError):
        return DeclaredMemsize([], [])
    except (RecursionError, MemoryError) as exc:      # e.g. a 200,000-term expression
        return DeclaredMemsize([], [], f"too deeply nested for Python's parser ({type(exc).__name__})")
    found: list[tuple[int, str]] = []
    unsized: list[int] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in _OPTION_CALLS:
            continue
        pairs = [(kw.arg, kw.value) for kw in node.keywords if kw.arg is not None]
        for value in [*node.args[:1], *(v for k, v in pairs if k == "options")]:
            if isinstance(value, ast.Dict):
                pairs += [(k.value, v) for k, v in zip(value.keys, value.values)
                          if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        sized = False
        for key, value in pairs:
            if key.lower() == "memsize" and isinstance(value, ast.Constant) and \
                    isinstance(value.value, (str, int)) and not isinstance(value.value, bool):
                found.append((value.lineno, str(value.value)))
                sized = True
        if name in _OPENING_CALLS and not sized:
            unsized.append(node.lineno)
    return DeclaredMemsize(sorted(found), sorted(unsized))


def declared_memsizes(path: str | os.PathLike) -> list[tuple[int, str]]:
    """(line, value as written) of each literal memsize the job file sets (declared_memsize)."""
    return declared_memsize(path).sizes
