"""The SAS program driver: `run_program(text, session, log, invocation) -> exit code`.

It makes the program's state (ProgramState: the session, the SAS log, system options, macro symbol
tables, user formats), runs the autoexec, then pulls statements one at a time from the macro processor
(lazily, so a step's CALL SYMPUT is seen by the `&x` after it) and
- runs global statements at once, also inside steps (globals.py);
- collects a DATA step to its boundary (RUN;, the next DATA/PROC, a DATALINES statement, the end) and a
  PROC step to RUN;/QUIT; or the next step — PROC SQL and DATASETS get their statements one by one as
  they come, until QUIT; — and runs each inside `session.step('DATA')` / `session.step('PROC NAME')`,
  so each has its STIMER record and SAS's step note in the log;
- after a step's ERROR goes on in syntax-check mode (OBS=0, no data set replaced), as SAS does in batch
  (SAS 9.4 Language Reference: Concepts, "Processing in Syntax Check Mode"), setting SYSERR and SYSCC;
- stops at ENDSAS, or at an ABORT ABEND/RETURN.
The exit code is statgrid's rule: 0 when the log has no ERROR (warnings allowed), 1 when it has one; an
ABORT RETURN n / ABEND n ends with n.
"""
from __future__ import annotations

import os
import re
import stat
from typing import Any, Callable, Iterator

from statgrid.errors import SessionTerminated, StatgridError, StepError
from statgrid.sas.context import ProgramState
from statgrid.sas.errors import ProgramAbort, SasError, SasRuntimeError, SyntaxCheckSkip
from statgrid.sas.globals import EndSas, is_global, run_global
from statgrid.sas.invocation import Invocation
from statgrid.sas.options import SasOptions
from statgrid.sas.saslog import SasLog
from statgrid.sas.statement import Statement, statements_of

DATALINES_KEYWORDS = frozenset({"DATALINES", "CARDS", "LINES", "DATALINES4", "CARDS4", "LINES4"})
# Procedures whose statements run as they come (SAS: "interactive" procedures, ended by QUIT; SQL
# executes each statement at once and ignores RUN).
STATEMENT_BY_STATEMENT = frozenset({"SQL", "DATASETS"})
SYSERR_ERROR = 1012          # SYSERR/SYSCC after an ERROR in a step (SAS 9.4 Macro Language Reference, SYSERR)
SYSERR_WARNING = 4
# The largest SAS program or autoexec read (whole, into memory): far past any real program, short of a
# machine's memory. `-autoexec /dev/zero` was read until the run was OOM-killed.
SAS_FILE_MAX_BYTES = 16 * 2**20

StepRunner = Callable[[list[Statement], ProgramState], None]


class _StepFailed(StepError):
    """A step whose ERROR the driver has logged already (session.step records the failure)."""


class _Feed:
    """Statements pulled one at a time from the macro processor, with push-back of a step boundary."""

    def __init__(self, source: Iterator[Statement], log: SasLog, echo: bool,
                 on_error: Callable[[], None] | None = None):
        self.source, self.log, self.echo, self.back = source, log, echo, []
        self.on_error = on_error           # an ERROR outside a step: SYSCC (the driver's)
        self.done = False

    def next(self) -> Statement | None:
        if self.back:
            return self.back.pop()
        if self.done:
            return None
        errors = self.log.errors
        try:
            stmt = next(self.source)
        except StopIteration:
            self.done = True
            self._errors_since(errors)
            return None
        except SasError as exc:            # the macro processor (or the tokenizer) could not go on
            self.done = True
            self.log.sas_error(exc)
            if self.on_error is not None:
                self.on_error()
            return None
        self._errors_since(errors)
        if self.echo and not stmt.source and not stmt.generated and stmt.tokens:
            last = stmt.tokens[-1].line + (len(stmt.datalines) + 1 if stmt.datalines is not None else 0)
            self.log.echo_through(last)
        return stmt

    def _errors_since(self, errors: int) -> None:
        """An ERROR the macro processor logged while making the statement (a literal the tokenizer refused,
        a macro fault): SYSCC as for any ERROR outside a step."""
        if self.on_error is not None and self.log.errors > errors:
            self.on_error()

    def push(self, stmt: Statement) -> None:
        self.back.append(stmt)


def _starts_step(stmt: Statement) -> bool:
    toks = stmt.tokens
    return stmt.keyword in ("DATA", "PROC") and not (len(toks) > 1 and toks[1].is_("=", "+", "(", "{", "["))


def _default_runners() -> tuple[StepRunner | None, dict[str, StepRunner]]:
    try:
        from statgrid.sas.datastep import run_data_step
    except ImportError:
        run_data_step = None
    try:
        from statgrid.sas.procs import PROCS
    except ImportError:
        PROCS = {}
    return run_data_step, PROCS


_DATALINES_RE = re.compile(r"^[ \t]*(datalines4|cards4|lines4|datalines|cards|lines)[ \t]*;[ \t]*\n", re.I | re.M)


def plain_statements(text: str, source: str = "") -> Iterator[Statement]:
    """Statements of macro-free text, DATALINES/CARDS lines attached to their statement (up to the line
    with a semicolon, or ';;;;' for the 4 forms): what the macro processor yields, without macros. The
    driver's fallback while no macro processor is installed, and the tests' plain path."""
    pos, line = 0, 1
    while True:
        m = _DATALINES_RE.search(text, pos)
        code = text[pos:m.end() if m else len(text)]
        stmts = statements_of(code, line, source)
        if not m:
            yield from stmts
            return
        line += code.count("\n")
        four = m.group(1).endswith("4")
        data: list[str] = []
        for raw in text[m.end():].split("\n"):
            if (raw.strip() == ";;;;") if four else (";" in raw):
                break
            data.append(raw)
        if stmts:
            stmts[-1].datalines = data
        yield from stmts
        pos = m.end() + sum(len(r) + 1 for r in data)
        ended = text.find("\n", pos)
        pos = len(text) if ended < 0 else ended + 1
        line += len(data) + 1


def _statement_source(program: ProgramState) -> Callable[[str, str], Iterator[Statement]]:
    """The macro processor's statements(text, source), or macro-free statements while it does not exist."""
    try:
        from statgrid.sas.macro.processor import MacroProcessor
    except ImportError:
        return plain_statements
    mp = MacroProcessor(program)
    return lambda text, source="": iter(mp.statements(text, source=source))


def _make_symbols() -> Any:
    try:
        from statgrid.sas.macro.symbols import SymbolTables
    except ImportError:
        return None
    return SymbolTables()


def _make_formats(session: Any, options: Any) -> Any:
    from statgrid.sas.formats.catalog import FormatCatalog

    return FormatCatalog(session=session, options=options)     # saved in and found in libraries (FMTSEARCH=)


# CALL EXECUTE code that generates CALL EXECUTE code runs nested: at most this deep (SAS puts it on its input
# stack without a limit; a chain this long is a runaway generator)
CALL_EXECUTE_DEPTH = 100


class Driver:
    """One program's run: the state and the step loop (run_program is its front)."""

    def __init__(self, program: ProgramState, data_step: StepRunner | None, procs: dict[str, StepRunner]):
        self.program, self.data_step, self.procs = program, data_step, procs
        self.log: SasLog = program.log
        # statements(text, source) of the program's one macro processor (set by SasSession): CALL EXECUTE's
        self.statements: Callable[[str, str], Iterator[Statement]] = plain_statements

    # ------------------------------------------------------------------ automatic macro variables
    def _automatic(self, name: str, value: Any) -> None:
        sym = self.program.symbols
        if sym is not None and hasattr(sym, "set_automatic"):
            sym.set_automatic(name, str(value))

    def _status(self) -> None:
        p = self.program
        self._automatic("SYSERR", p.syserr)
        self._automatic("SYSCC", p.syscc)
        self._automatic("SYSLAST", p.last.upper() if p.last else "_NULL_")

    # ------------------------------------------------------------------ the loop
    def run(self, feed: _Feed) -> None:
        while (stmt := feed.next()) is not None:
            kw = stmt.keyword
            if not kw and len(stmt.tokens) <= 1:
                continue                              # an empty statement
            if _starts_step(stmt):
                if kw == "DATA":
                    self._data_step(stmt, feed)
                    self._call_execute()
                else:
                    self._proc_step(stmt, feed)
            elif kw in ("RUN", "QUIT"):
                continue                              # outside a step: nothing to end
            elif is_global(stmt):
                self._global(stmt)
            else:
                t = stmt.tokens[0]
                self.log.sas_error(SasError("Statement is not valid or it is used out of proper order", t.line,
                                            t.col, t.text, "a DATA or PROC step, or a global statement",
                                            stmt.source))
                self._error_outside_step()

    def _call_execute(self) -> None:
        """What CALL EXECUTE stacked in the DATA step just ended: its lines in the log (SAS's "NOTE: CALL
        EXECUTE generated line." and "n + text"), then run as the program's next statements."""
        queued = self.program.extras.pop("call_execute", None)
        if not queued:
            return
        depth = self.program.extras.get("call_execute_depth", 0)
        if depth >= CALL_EXECUTE_DEPTH:
            self.log.error(f"CALL EXECUTE code generated CALL EXECUTE code {CALL_EXECUTE_DEPTH} times in a row "
                           "(statgrid's limit); the rest was not run. Generate the steps in one DATA step, or with "
                           "a macro %DO loop.")
            self._error_outside_step()
            return
        self.log.note("CALL EXECUTE generated line.")
        for n, (text, _) in enumerate(queued, 1):
            self.log.put(f"{n:<10}+ {text}")
        if all(made is not None for _, made in queued):        # macro parts already ran (CALL EXECUTE's time)
            source: Iterator[Statement] = iter([st for _, made in queued for st in made])
        else:
            source = self.statements("\n".join(text for text, _ in queued), "CALL EXECUTE")
        self.program.extras["call_execute_depth"] = depth + 1
        try:
            self.run(_Feed(source, self.log, echo=False, on_error=self._error_outside_step))
        finally:
            self.program.extras["call_execute_depth"] = depth

    def _global(self, stmt: Statement) -> None:
        before = self.log.errors
        try:
            run_global(stmt, self.program)
        except SasError as exc:
            self.log.sas_error(exc)
        if self.log.errors > before:
            self._error_outside_step()

    def _error_outside_step(self) -> None:
        self.program.syscc = max(self.program.syscc, SYSERR_ERROR)
        self._status()

    def _body(self, feed: _Feed, step: str, stop_at_run: bool) -> Iterator[Statement]:
        """The statements of the step being collected, up to its boundary; global ones run on the way."""
        while (stmt := feed.next()) is not None:
            kw = stmt.keyword
            if kw == "RUN":
                if len(stmt.tokens) > 1 and stmt.tokens[1].is_("CANCEL"):
                    self.program.extras.setdefault("driver", {})["cancel"] = True
                if stop_at_run:
                    return
                if step == "PROC SQL":
                    self.log.note("PROC SQL statements are executed immediately; The RUN statement has no effect.")
                continue
            if kw == "QUIT":
                return
            if _starts_step(stmt):
                feed.push(stmt)
                return
            if is_global(stmt, "DATA" if step == "DATA" else "PROC"):
                self._global(stmt)
                continue
            yield stmt
            if step == "DATA" and kw in DATALINES_KEYWORDS:
                return

    def _data_step(self, first: Statement, feed: _Feed) -> None:
        statements = [first, *self._body(feed, "DATA", True)]
        if self.data_step is None:
            self._failed_without_step(SasError("The DATA step is not available in this statgrid build",
                                               first.line, first.tokens[0].col, "DATA"))
            return
        self._run_step("DATA", self.data_step, statements)

    def _proc_step(self, first: Statement, feed: _Feed) -> None:
        toks = first.tokens
        name = toks[1].upper if len(toks) > 1 and toks[1].kind == "NAME" else ""
        step = f"PROC {name}"
        interactive = name in STATEMENT_BY_STATEMENT
        body = self._body(feed, step, not interactive)
        runner = self.procs.get(name)
        if runner is None:
            for _ in body:                          # the rest of the step is not run
                pass
            t = toks[1] if len(toks) > 1 else toks[0]
            self._failed_without_step(SasError(f"Procedure {name or '(none)'} not found", t.line, t.col, t.text,
                                               "the name of a procedure", first.source))
            return
        if interactive:
            def stream() -> Iterator[Statement]:
                yield first
                yield from body
            statements: Any = stream()
        else:
            statements = [first, *body]
        try:
            self._run_step(step, runner, statements)
        finally:
            for _ in body:                          # statements a procedure left unread, up to QUIT
                pass

    def _failed_without_step(self, exc: SasError) -> None:
        self.log.sas_error(exc)
        self.log.note("The SAS System stopped processing this step because of errors.")
        self._after_error()

    def _run_step(self, step: str, runner: StepRunner, statements: Any) -> None:
        p, log, session = self.program, self.log, self.program.session
        if p.extras.get("driver", {}).pop("cancel", False):
            log.note(f"The {('DATA step' if step == 'DATA' else 'procedure')} was not run because of RUN CANCEL.")
            return
        warnings0, failed, abort, runtime, forced_check = log.warnings, False, None, False, False
        try:
            with session.step(step):
                try:
                    try:
                        runner(statements, p)
                    except SyntaxCheckSkip:
                        pass                             # syntax-check mode: statements read, nothing run
                    if step.startswith("PROC "):
                        from statgrid.sas import ods
                        ods.end_step(p)              # every PROC ends its ODS selections (harmless if done)
                except (SasError, StatgridError, ProgramAbort) as exc:
                    if step.startswith("PROC "):
                        from statgrid.sas import ods
                        ods.end_step(p, failed=True)
                    if isinstance(exc, ProgramAbort):
                        abort = exc
                        if exc.message:
                            log.error(exc.message)
                    elif isinstance(exc, SasError):
                        runtime = isinstance(exc, SasRuntimeError) or getattr(exc, "runtime", False)
                        forced_check = getattr(exc, "syntax_check", False)     # ABORT (no argument)
                        if not getattr(exc, "logged", False):
                            log.sas_error(exc)
                    else:
                        runtime = True           # an engine's fault while the step ran (not the statements')
                        log.error(str(exc))
                    log.note("The SAS System stopped processing this step because of errors.")
                    for item in getattr(exc, "after", ()):     # the DATA step's reads and data sets (run-time ERROR)
                        level, text = item if isinstance(item, tuple) else ("WARNING", item)
                        (log.note if level == "NOTE" else log.warning)(text)
                    log.step_failure_reported()
                    raise _StepFailed(step, str(exc)) from None
        except StepError:
            failed = True
        except SessionTerminated:
            raise
        if abort is not None:
            raise abort
        if failed:
            # syntax-check mode only after a syntax or semantic (compile-time) ERROR, and only in a step that
            # creates a data set: never after an execution-time ERROR, never from DATA _NULL_ (SAS 9.4
            # Language Reference: Concepts, "Syntax Check Mode")
            first = statements[0] if isinstance(statements, list) and statements else None
            check = not runtime and not (step == "DATA" and first is not None and _data_null_only(first))
            self._after_error(check=check or forced_check)
        else:
            p.syserr = SYSERR_WARNING if log.warnings > warnings0 else 0
            p.syscc = max(p.syscc, p.syserr)
        self._status()

    def _after_error(self, check: bool = True) -> None:
        """SAS in batch after a step's ERROR: SYSERR/SYSCC set; OBS=0 and syntax-check mode on (unless
        NOSYNTAXCHECK, or `check` false: an execution-time ERROR, DATA _NULL_)."""
        p = self.program
        p.syserr = SYSERR_ERROR
        p.syscc = max(p.syscc, SYSERR_ERROR)
        if check and not p.syntax_check and p.options.get("DMSSYNCHK" if p.interactive else "SYNTAXCHECK"):
            p.syntax_check = True
            p.options.set("OBS", "0")
            self.log.note("SAS set option OBS=0 and will continue to check statements. This might cause NOTE: "
                          "No observations in data set.")
        self._status()


def _data_null_only(first: Statement) -> bool:
    """A DATA statement whose only data set is _NULL_ (SAS cannot enter syntax-check mode from it: no data
    set is created)."""
    names, depth, prev_dot = [], 0, False
    for t in first.tokens[1:]:
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif depth == 0:
            if t.text in ("/", ";"):
                break
            if t.text == ".":
                prev_dot = True
                continue
            if prev_dot and names:
                names[-1] += "." + t.text.upper()
            else:
                names.append(t.text.upper())
            prev_dot = False
    return bool(names) and all(n == "_NULL_" for n in names)


def read_sas_file(path: str | os.PathLike, what: str = "The SAS program file") -> str:
    """The text of a SAS program or autoexec file: a regular file of at most SAS_FILE_MAX_BYTES (never a
    FIFO, device or directory: it is read whole). Raises SasError naming the file."""
    name = str(path)
    try:
        # O_NONBLOCK: opening a FIFO without a writer would wait forever; a regular file ignores it
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SasError(f"{what} {name!r} cannot be read: {exc.strerror}", text=name) from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SasError(f"{what} {name!r} is not a regular file (a directory, device or pipe); give a "
                           "file of SAS statements", text=name)
        if st.st_size > SAS_FILE_MAX_BYTES:
            raise SasError(f"{what} {name!r} is {st.st_size:,} bytes, over the limit of {SAS_FILE_MAX_BYTES:,} "
                           f"bytes (16 MiB)", text=name)
        try:
            data = f.read(SAS_FILE_MAX_BYTES + 1)
        except OSError as exc:
            raise SasError(f"{what} {name!r} cannot be read: {exc.strerror}", text=name) from None
    if len(data) > SAS_FILE_MAX_BYTES:            # grew while read
        raise SasError(f"{what} {name!r} is over the limit of {SAS_FILE_MAX_BYTES:,} bytes (16 MiB)", text=name)
    return data.decode("utf-8", errors="replace")


def read_autoexec(path: str) -> str:
    return read_sas_file(path, "The autoexec file")


def run_program(text: str, session: Any, log_writer: Any = None, invocation: Invocation | None = None, *,
                source: str = "", autoexec: str = "", data_step: StepRunner | None = None,
                procs: dict[str, StepRunner] | None = None, header: bool = True) -> int:
    """Run SAS program `text` in statgrid `session`; returns the exit code (0: no ERROR, 1: an ERROR, n:
    ABORT RETURN n). `log_writer`: a SasLog, or a SessionLog to wrap (default: the session's log).
    `invocation`: SAS invocation options. `autoexec`: a file run first (the invocation's -autoexec wins;
    else grid.toml's [session] autoexec). `data_step`/`procs`: the step runners (default: the DATA step's
    and statgrid.sas.procs.PROCS). Never raises for the program's own faults: they are in the log."""
    return SasSession(session, log_writer, invocation, data_step=data_step, procs=procs).submit(
        text, source=source, autoexec=autoexec, header=header)


class SasSession:
    """One SAS session's program state over several submits: a batch program is one submit (run_program);
    an interactive session (a notebook's statgrid-sas kernel, as Enterprise Guide submits to a workspace
    server) submits piece by piece, and macro variables, librefs, filerefs, options, titles, formats and
    WORK carry from one submit to the next. `interactive`: an ERROR turns syntax-check mode on only under
    DMSSYNCHK (SAS's rule for interactive sessions), not SYNTAXCHECK's batch rule. `ended`: after ENDSAS or
    ABORT the session takes no more submits."""

    def __init__(self, session: Any, log_writer: Any = None, invocation: Invocation | None = None, *,
                 data_step: StepRunner | None = None, procs: dict[str, StepRunner] | None = None,
                 interactive: bool = False):
        self.session = session
        self.invocation = inv = invocation or Invocation()
        self.log = log = log_writer if isinstance(log_writer, SasLog) else SasLog(log_writer or session.log)
        options = SasOptions(session=session, log=log)
        inv.apply(options)
        options.set("MEMSIZE", str(session.options.memsize_bytes))
        options.set("CPUCOUNT", str(session.options.effective_threads))
        if session.work is not None:
            options.set("WORK", str(session.work.path))
        if session.util is not None:
            options.set("UTILLOC", str(session.util.path))
        options.started = True
        log.options = options
        from statgrid.sas import sashelp
        sashelp.assign(session)                 # SASHELP.CLASS, read-only, as every SAS session has
        self.program = program = ProgramState(session=session, log=log, options=options, symbols=_make_symbols(),
                                              formats=_make_formats(session, options), interactive=interactive)
        program.titles[1] = "The SAS System"      # TITLE1 at startup (SAS 9.4, TITLE statement)
        log.titles, log.footnotes = program.titles, program.footnotes
        default_data, default_procs = _default_runners()
        program.data_step = data_step or default_data          # a DATA step view runs through it when read
        from statgrid.sas.procs.sql import materialize_view as run_sql_view
        program.sql_view = run_sql_view                        # a PROC SQL view runs through it when read
        from statgrid.sas.dataset import input_sql
        program.input_sql = input_sql                          # OPEN('ds(where=…)') reads through it
        self.driver = Driver(program, program.data_step, procs if procs is not None else default_procs)
        self._statements = _statement_source(program)          # one macro processor: %MACROs stay defined
        self.driver.statements = self._statements
        self.submits = 0
        self.ended = False

    def submit(self, text: str, *, source: str = "", autoexec: str = "", header: bool = True) -> int:
        """Run `text` (a program, or the next piece of one); the exit code as run_program's, counting the
        ERRORs of this submit only. The first submit writes the log's header and runs the autoexec."""
        if self.ended:
            raise StatgridError("this SAS session has ended (ENDSAS or ABORT); start a new one.")
        inv, log, driver, session, program = self.invocation, self.log, self.driver, self.session, self.program
        first = self.submits == 0
        self.submits += 1
        saved_log, saved_env = session.log, {k: os.environ.get(k) for k in inv.env}
        session.log = log
        os.environ.update(inv.env)               # -set NAME VALUE: an environment variable (%SYSGET)
        errors0, code = log.errors, 0
        try:
            if header and not log.header_done:
                log.header()
            if first:
                driver._automatic("SYSPARM", program.options.get("SYSPARM"))
                driver._status()
            statements = self._statements
            auto = (inv.autoexec or autoexec or getattr(session.options, "autoexec", "")) if first else ""
            try:
                if auto:
                    log.note(f"AUTOEXEC processing beginning; file is {auto}.")
                    try:
                        driver.run(_Feed(statements(read_autoexec(auto), auto), log, echo=False,
                                         on_error=driver._error_outside_step))
                    finally:
                        log.note("AUTOEXEC processing completed.")
                    log.put("")
                log.set_source(text)
                driver.run(_Feed(statements(text, source), log, echo=True, on_error=driver._error_outside_step))
                log.echo_rest()
            except EndSas:
                self.ended = True                # SAS reads no further: the rest is not echoed
            except ProgramAbort as exc:
                self.ended = True
                code = exc.code
            except SasError as exc:              # an autoexec that cannot be read, a program that cannot be read
                log.sas_error(exc)
                driver._error_outside_step()
        finally:
            session.log = saved_log
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        if code:
            return code
        if program.extras.get("abort_code"):
            # ABORT n in a DATA step (without ABEND/RETURN/CANCEL): the program goes on in syntax-check mode and
            # n is its exit code (SAS 9.4 Statements: ABORT, n)
            return int(program.extras["abort_code"])
        if log.errors > errors0:
            log.note(f"The program had {log.errors - errors0} ERROR line(s) in its log; SYSCC={program.syscc}.")
            return 1
        return 0
