"""The skeleton a SAS PROC step's run() repeats, written once: the PROC statement's options, the input data set
and its columns, the statements that follow (each with its cursor after the keyword; BY, VAR, WHERE and the
statements passed over read alike; a statement's `/ options`; OUTPUT OUT= with the PROC's keywords), the input
read once with SAS's NOTE on the observations read (or staged as a WORK member), the BY groups of a PROC fitted
per group (the BY variables resolved and checked sorted, each group's BY line), a procedure's StatgridError shown
as the step's SasError, and a whole-number option (QPOINTS=, MAXTREES=).
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from statgrid.errors import StatgridError
from statgrid.sas.cursor import TokenCursor
from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError, skip_if_syntax_check
from statgrid.sas.lexer import NAME
from statgrid.sas.parse.dsname import DatasetSpec, next_data_name, parse_dataset
from statgrid.sas.procs.byruns import by_columns, runs_on, with_runs
from statgrid.sas.procs.common import (ProcOptions, by_group_members, by_list, by_rule, by_text, check_by_sorted,
                                       cursor, input_dataset, observations_read, open_input, parse_options,
                                       proc_statement, resolve_names, var_names, where_statement, without_notes,
                                       write_select)
from statgrid.sas.statement import Statement


def stmt_error(stmt: Statement, message: str, text: str, expected: str = "") -> SasError:
    """An ERROR at the statement's first word."""
    t = stmt.tokens[0]
    return SasError(message, t.line, t.col, text, expected, stmt.source)


def begin(statements: list, program: Any, table: dict[str, str], proc: str,
          aliases: dict[str, str] | None = None) -> tuple[Statement, list[Statement], ProcOptions]:
    """(the PROC statement, the statements after it, its options read against `table`)."""
    first, *rest = list(statements)
    return first, rest, parse_options(proc_statement(first), table, program, f"PROC {proc}", aliases)


def data_input(program: Any, opts: ProcOptions, first: Statement) -> tuple[DatasetSpec, list[ColumnInfo]]:
    """DATA= (or _LAST_) and its columns."""
    src = input_dataset(program, opts, "DATA", first)
    cols, _ = open_input(program, src)
    return src, cols


def each_statement(rest: list[Statement]) -> Iterator[tuple[Statement, str, TokenCursor]]:
    """(statement, its keyword, a cursor after the keyword) for each statement of the step."""
    for stmt in rest:
        c = cursor(stmt)
        c.next()
        yield stmt, stmt.keyword, c


def statement_option(c: TokenCursor, valid, what: str):
    """The next option of a statement's `/ options` (its token); SAS's ERROR when it is not one of `valid`."""
    t = c.expect_kind(NAME, f"a {what} option")
    if t.upper not in valid:
        raise SasError(f"The option {t.text} is not recognized in the {what} statement", t.line, t.col, t.text,
                       "one of " + ", ".join(sorted(valid)))
    return t


class Statements:
    """The statements PROCs read alike, those of `takes`: BY (by_list's pairs in .by), VAR (variable lists,
    added up in .var; None when absent), WHERE (onto the input); and `passed`, taken as written (FORMAT, LABEL,
    ATTRIB: the listing shows the data set's)."""

    def __init__(self, src: DatasetSpec, cols: list[ColumnInfo], takes: tuple[str, ...] = ("BY", "VAR", "WHERE"),
                 passed: tuple[str, ...] = ("FORMAT", "LABEL", "ATTRIB")):
        self.src, self.cols, self.takes, self.passed = src, cols, takes, passed
        self.program = None                 # set by a PROC that wants FORMAT's formats checked as it reads them
        self.by: list[tuple[str, bool]] = []
        self.var: list[str] | None = None

    def read(self, kw: str, c: TokenCursor) -> bool:
        """The statement read (True), or not one of these (False: the PROC's own, or an ERROR). FORMAT puts
        its formats on (copies of) the columns: the listing shows them and grouping PROCs group by them."""
        if kw == "FORMAT" and kw in self.passed:
            from statgrid.sas.procs.fmtgroup import format_statement
            format_statement(c, self.cols, self.program)
            return True
        if kw in self.passed:
            return True
        if kw not in self.takes:
            return False
        if kw == "BY":
            self.by = by_list(c)
        elif kw == "VAR":
            self.var = (self.var or []) + var_names(c, self.cols)
        else:
            where_statement(c, self.src)
        return True

    def analysis_vars(self, line: int, used: set[str]) -> list[ColumnInfo]:
        """VAR's columns, or (SAS's default) every numeric column whose upper-case name is not in `used`."""
        if self.var is not None:
            return resolve_names(self.var, self.cols, self.src, line)
        return [c for c in self.cols if c.type == "num" and c.name.upper() not in used]


def output_statement(c: TokenCursor, program: Any, proc: str, asked: str, expected: str, read) -> DatasetSpec:
    """An OUTPUT statement (after OUTPUT): OUT= (the data set returned; WORK.DATAn when absent) and the PROC's own
    keyword=… pairs, each read by `read(keyword token, cursor after its =)`, which says False for one it does not
    take (SAS's ERROR naming it). `asked`: what a keyword may be; `expected`: what the ERROR offers instead."""
    spec = None
    while not c.at_end():
        t = c.expect_kind(NAME, asked)
        c.expect("=")
        if t.upper == "OUT":
            spec = parse_dataset(c, program)
        elif not read(t, c):
            raise SasError(f"The OUTPUT keyword {t.text} is not supported by statgrid's PROC {proc}", t.line, t.col,
                           t.text, expected)
    return spec if spec is not None else DatasetSpec("WORK", next_data_name(program, "WORK"))


def read_input(program: Any, src: DatasetSpec) -> tuple[list[ColumnInfo], str]:
    """The input's columns and SELECT (opened after the statements: a WHERE statement is in it), its
    observations counted for SAS's NOTE on the observations read."""
    cols, base = open_input(program, src)
    n = int(program.session.execute(f"SELECT count(*) FROM ({base})").fetchall()[0][0])
    observations_read(program, n, src)
    return cols, base


def stage_input(program: Any, src: DatasetSpec, temp: str) -> str:
    """The input as WORK.temp (procedures read members; no NOTE for it: the user never named it), after the
    NOTE on the observations read; nothing is read after an ERROR (syntax-check mode)."""
    skip_if_syntax_check(program)                    # after an ERROR: the statements were read; fit nothing
    cols, base = read_input(program, src)
    without_notes(program, lambda: write_select(program, DatasetSpec("WORK", temp.upper()), base, cols))
    return f"work.{temp}"


class ByInput:
    """The input of a PROC fitted per BY group: the BY variables (`by`: by_list's pairs) resolved among `cols`
    and the data checked sorted by them (with NOTSORTED: not checked, each run of equal values a group, `base`
    with byruns.RUN and `byc` a ByColumns saying so), the input read once with its NOTE. `groups` then yields
    each group; a key's identity across groups is byruns.group_id(key)."""

    def __init__(self, program: Any, first: Statement, src: DatasetSpec, cols: list[ColumnInfo],
                 by: list[tuple[str, bool]]):
        self.program = program
        self.byc = by_columns(resolve_names([n for n, _ in by], cols, src, first.line), by)
        if self.byc:
            check_by_sorted(program, src, cols, by)
        self.cols, self.base = read_input(program, src)
        if runs_on(self.byc):                # BY … NOTSORTED: groups are runs, numbered in base (byruns.py)
            self.base = with_runs(self.base, self.byc)

    def groups(self, temp: str, by_line: bool = False) -> Iterator[tuple[list, str]]:
        """(the group's BY values, its rows as 'work.temp') in BY order; `by_line`: SAS's BY line is written to
        the listing before each group (a PROC that writes its own listing text)."""
        for key, data in by_group_members(self.program, self.byc, self.cols, self.base, temp):
            if by_line and self.byc:
                self.program.log.listing(by_rule(by_text(self.program, zip(self.byc, key))))
            yield key, data

    def pairs(self, key: list) -> list:
        """[(BY column, value)] of one group, as listings and ODS tables take them."""
        return list(zip(self.byc, key))


@contextlib.contextmanager
def fit_errors(first: Statement, proc: str | None = None, keep_sas: bool = False) -> Iterator[None]:
    """A procedure's StatgridError as the step's SasError, at the PROC statement (`proc`: the text at fault,
    else the PROC keyword as written); `keep_sas`: a SasError, which has its own place, passes as it is."""
    try:
        yield
    except StatgridError as exc:
        if keep_sas and isinstance(exc, SasError):
            raise
        t = first.tokens[0]
        raise SasError(str(exc), t.line, t.col, t.text if proc is None else proc, "") from None


def whole_option(opts: ProcOptions, key: str, stmt: Statement, low: int = 1, shown=str) -> int | None:
    """KEY=n as a whole number >= low (None when absent); SAS's ERROR otherwise, the value shown by `shown`."""
    v = opts.get(key)
    if v is None:
        return None
    try:
        n = float(v)
    except (TypeError, ValueError):
        n = float("nan")
    if not (n == n and n == int(n) and n >= low):
        line, col = opts.value_at.get(key, (stmt.line, 0))
        text = shown(v)
        raise SasError(f"{key}={text} is not valid", line, col, text, f"a whole number >= {low}")
    return int(n)

