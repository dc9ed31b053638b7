"""Job dependency expressions, as LSF's `bsub -w`: parse, resolve names, evaluate.

    done(12) && (ended(13) || exit(14))

A term is `done(REF)`, `ended(REF)`, `exit(REF)` or `started(REF)`; REF is a job id (a positive
integer) or, in a flow, a job name (letters, digits, '_', '-', '.'; not digits only). Terms join
with `&&` and `||` and group with parentheses; `&&` binds tighter than `||`, as in LSF ("Job
dependency scheduling", IBM Spectrum LSF docs: "bsub -w 'done(312) && (started(313) || exit(314))'").
LSF's `!` (not), its exit-code form `exit(ID, op code)`, `numdone()` and friends are not taken.

Evaluation is three-valued, so the scheduler can tell a job that must wait from one that never can
run (LSF's "dependency condition invalid or never satisfied"; bjdepinfo, bjobs -l): MET, WAIT,
NEVER, each with a one-line reason that `statgrid jobs -l` can show as the pending reason.

Pure: no I/O, no clock. Positions in messages count characters from 0 (position 7 of 'done(12' is
just past its end).
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Mapping, Union

from statgrid.errors import UsageError
from statgrid.job.lifecycle import FINISHED_NAMES, SHOWN_NAMES, JobState

MAX_CHARS = 4096
MAX_TERMS = 256
# Parentheses nest at most this deep: the parser and the evaluator recurse once per level, and
# 4096 characters of '(' would otherwise overflow Python's stack (RecursionError, not a message).
MAX_DEPTH = 64
REF_MAX_CHARS = 128                   # jobspec.NAME_MAX_CHARS: a job name is at most that long
JOB_ID_MAX = 2**63 - 1                # SQLite's INTEGER, where job ids live
KINDS = ("done", "ended", "exit", "started")
STATES, FINISHED = SHOWN_NAMES, FINISHED_NAMES       # the lifecycle's (statgrid.job.lifecycle)
FAILED = tuple(s for s in FINISHED_NAMES if s != JobState.DONE.value)   # EXIT and KILLED

_EXAMPLE = "done(12) && ended(13)"
_QUOTE_CHARS = 60
_TOKEN_RE = re.compile(r"\s*(?:(?P<op>&&|\|\|)|(?P<paren>[()])|(?P<word>[A-Za-z0-9_.\-]+)|(?P<other>\S))")
# A job name in a term, and so a flow's job name: letters, digits, "_", "-", ".".
NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+")


@dataclass(frozen=True)
class Term:
    """One condition on one job. kind: done | ended | exit | started; ref: a job id (int) or a job
    name (str, before `resolve`)."""
    kind: str
    ref: Union[int, str]

    def __str__(self) -> str:
        return f"{self.kind}({self.ref})"


@dataclass(frozen=True)
class And:
    """All items must hold. Two or more items, none of them an And (the parser flattens)."""
    items: tuple["Expr", ...]

    def __str__(self) -> str:
        # Only an Or inside an And needs parentheses: && binds tighter than ||.
        return " && ".join(f"({item})" if isinstance(item, Or) else str(item) for item in self.items)


@dataclass(frozen=True)
class Or:
    """One item must hold. Two or more items, none of them an Or (the parser flattens)."""
    items: tuple["Expr", ...]

    def __str__(self) -> str:
        return " || ".join(str(item) for item in self.items)


Expr = Union[Term, And, Or]


class Outcome(str, enum.Enum):
    MET = "MET"                       # the job may start
    WAIT = "WAIT"                     # not yet: a job it waits for has not reached the state
    NEVER = "NEVER"                   # can never be met: a job ended the other way, or does not exist


MET, WAIT, NEVER = Outcome.MET, Outcome.WAIT, Outcome.NEVER


@dataclass(frozen=True)
class Verdict:
    """outcome: MET, WAIT or NEVER; reason: one line naming the deciding term, e.g.
    "done(12): job 12 is RUN"."""
    outcome: Outcome
    reason: str


@dataclass(frozen=True)
class JobView:
    """What evaluation needs of a job. state: PEND RUN USUSP DONE EXIT KILLED (a JobState works
    too: it is a str); started: the job has started at least once (been dispatched to a node)."""
    state: str
    started: bool = False

    def __post_init__(self) -> None:
        state = str(getattr(self.state, "value", self.state))
        if state not in STATES:
            raise ValueError(f"job state {state!r} is not one of {', '.join(STATES)}")
        object.__setattr__(self, "state", state)


# --- parsing -------------------------------------------------------------------------------------

def _quoted(text: str, pos: int) -> str:
    """The expression for a message: whole if short, else the characters around `pos`."""
    if len(text) <= _QUOTE_CHARS:
        return repr(text)
    start = max(0, min(pos - _QUOTE_CHARS // 2, len(text) - _QUOTE_CHARS))
    part = repr(text[start:start + _QUOTE_CHARS])
    return f"{'…' if start else ''}{part}{'…' if start + _QUOTE_CHARS < len(text) else ''}"


class _Parser:
    """Recursive descent over tokens: or := and ('||' and)*; and := primary ('&&' primary)*;
    primary := '(' or ')' | KIND '(' REF ')'."""

    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []     # (type, text, position)
        pos = 0
        while True:
            m = _TOKEN_RE.match(text, pos)
            if m is None:                               # only whitespace is left
                break
            kind = m.lastgroup or "other"
            self.tokens.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.tokens.append(("end", "", len(text)))
        self.i = 0
        self.terms = 0
        self.depth = 0

    def fail(self, problem: str, pos: int, fix: str = "") -> UsageError:
        return UsageError(f"dependency {_quoted(self.text, pos)} is not valid: {problem} at position {pos}; "
                          f"write e.g. {fix or _EXAMPLE}")

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i]

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def unexpected(self, expected: str) -> UsageError:
        kind, tok, pos = self.peek()
        if kind == "end":
            return self.fail(f"{expected} is missing", pos)
        if tok == "!":
            return self.fail("'!' (not) is not supported", pos,
                             "exit(12) (job 12 failed) or done(12) (it succeeded) instead of a negation")
        if tok in ("&", "|"):
            return self.fail(f"{tok!r} stands alone", pos, f"{tok * 2} (two characters), as in {_EXAMPLE}")
        if tok in ('"', "'"):
            return self.fail("quote marks are not taken", pos, "done(extract), a job name without quotes")
        if tok == ",":
            return self.fail("',' is not taken (exit codes and lists are not supported)", pos,
                             "exit(12) && exit(13)")
        return self.fail(f"{tok!r} where {expected} should be", pos)

    def parse(self) -> Expr:
        expr = self.parse_or()
        if self.peek()[0] != "end":
            kind, tok, pos = self.peek()
            if tok == ")":
                raise self.fail("')' has no matching '('", pos)
            raise self.unexpected("'&&' or '||'")
        return expr

    def parse_or(self) -> Expr:
        return self._chain("||", self.parse_and, Or)

    def parse_and(self) -> Expr:
        return self._chain("&&", self.parse_primary, And)

    def _chain(self, op: str, operand, node) -> Expr:
        """operand (op operand)*, joined into one `node` (Or / And) when there is more than one."""
        items = [operand()]
        while self.peek()[1] == op:
            self.take()
            items.append(operand())
        return _join(node, items)

    def parse_primary(self) -> Expr:
        kind, tok, pos = self.peek()
        if tok == "(":
            self.take()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.fail(f"parentheses nest over {MAX_DEPTH} deep, the limit,", pos,
                                "fewer parentheses, as in done(12) && (ended(13) || exit(14))")
            expr = self.parse_or()
            if self.peek()[1] != ")":
                if self.peek()[0] == "end":
                    raise self.fail(f"missing ')' (the '(' at position {pos} is not closed)", self.peek()[2])
                raise self.unexpected("')'")
            self.take()
            self.depth -= 1
            return expr
        if kind != "word":
            raise self.unexpected("a condition such as done(12)")
        return self.parse_term()

    def parse_term(self) -> Term:
        _, word, pos = self.take()
        kind = word.lower()
        if kind not in KINDS:
            if word.isdigit():
                raise self.fail(f"a bare job id {word!r}", pos, f"done({word}) (or ended, exit, started)")
            # 'extract' alone is probably a job: done(extract); 'finish(3)' a misspelt kind: done(3).
            following = self.tokens[self.i:self.i + 2]
            ref = following[1][1] if [t[0] for t in following] == ["paren", "word"] and following[0][1] == "(" else None
            raise self.fail(f"{word!r} is not a condition (done, ended, exit, started)", pos,
                            f"done({ref})" if ref else f"done({word})" if self.peek()[1] != "(" else _EXAMPLE)
        if self.peek()[1] != "(":
            raise self.fail(f"missing '(' after {kind!r}", self.peek()[2], f"{kind}(12)")
        self.take()
        rkind, ref, rpos = self.peek()
        if rkind != "word":
            if rkind == "end" or ref == ")":
                raise self.fail(f"{kind}() names no job", rpos, f"{kind}(12) or {kind}(extract)")
            raise self.unexpected("a job id or name")
        self.take()
        if self.peek()[1] != ")":
            if self.peek()[0] == "end":
                raise self.fail("missing ')'", self.peek()[2], f"{kind}({ref})")
            raise self.unexpected("')'")
        self.take()
        self.terms += 1
        if self.terms > MAX_TERMS:
            raise self.fail(f"over {MAX_TERMS} conditions, the limit,", pos,
                            "a dependency on fewer jobs (chain them, or wait for one job that waits for the rest)")
        return Term(kind, self.ref(ref, rpos))

    def ref(self, ref: str, pos: int) -> Union[int, str]:
        if len(ref) > REF_MAX_CHARS:
            raise self.fail(f"the job name is {len(ref):,} characters long, over the limit of {REF_MAX_CHARS},", pos,
                            "done(extract)")
        if not ref.isdigit():
            return ref
        job_id = int(ref)
        if not 1 <= job_id <= JOB_ID_MAX:
            raise self.fail(f"job id {ref} is out of range (1 to {JOB_ID_MAX})", pos)
        return job_id


def _join(cls, items: list[Expr]) -> Expr:
    """One item stands as itself; nested items of the same operator are flattened (a && (b && c)
    is a && b && c), so the canonical text has no redundant parentheses."""
    if len(items) == 1:
        return items[0]
    flat: list[Expr] = []
    for item in items:
        flat.extend(item.items if isinstance(item, cls) else (item,))
    return cls(tuple(flat))


def parse(text: str) -> Expr:
    """The expression in `text`. Raises UsageError quoting the text, the position (characters
    from 0) and an example of a valid one."""
    if not isinstance(text, str):
        raise UsageError(f"dependency {text!r} is not text; write e.g. {_EXAMPLE}")
    if len(text) > MAX_CHARS:
        raise UsageError(f"dependency {_quoted(text, 0)} is {len(text):,} characters long, over the limit of "
                         f"{MAX_CHARS:,}; depend on fewer jobs, e.g. {_EXAMPLE}")
    if not text.strip():
        raise UsageError(f"dependency {text!r} is empty; write e.g. {_EXAMPLE}")
    return _Parser(text).parse()


def format_expr(expr: Expr) -> str:
    """The canonical text of `expr`: lower-case kinds, single spaces around operators, only the
    parentheses that change the meaning. str(expr) and format(expr) give the same."""
    return str(expr)


# --- names and ids -------------------------------------------------------------------------------

def _terms(expr: Expr):
    if isinstance(expr, Term):
        yield expr
    else:
        for item in expr.items:
            yield from _terms(item)


def refs(expr: Expr) -> list[Union[int, str]]:
    """The jobs `expr` refers to (ids and names), in order of first mention, each once."""
    return list(dict.fromkeys(term.ref for term in _terms(expr)))


def resolve(expr: Expr, ids: Mapping[str, int]) -> Expr:
    """`expr` with each job name replaced by its id from `ids` (a flow's name → job id); ids stay.
    Raises UsageError naming an unknown name and listing the known ones."""
    def walk(node: Expr) -> Expr:
        if isinstance(node, Term):
            if isinstance(node.ref, int):
                return node
            if node.ref not in ids:
                known = list(ids)
                listed = ", ".join(known[:20]) + (f", … ({len(known) - 20} more)" if len(known) > 20 else "")
                raise UsageError(f"dependency {_quoted(str(expr), 0)} names job {node.ref!r}, which is not known; "
                                 f"known names: {listed or '(none)'}")
            return Term(node.kind, ids[node.ref])
        return type(node)(tuple(walk(item) for item in node.items))
    return walk(expr)


# --- evaluation ----------------------------------------------------------------------------------

def _job(ref: Union[int, str]) -> str:
    return f"job {ref}" if isinstance(ref, int) else f"job {ref!r}"


def _evaluate_term(term: Term, states: Mapping) -> Verdict:
    """The rules of LSF's conditions (bsub -w): done = ended DONE; ended = DONE, EXIT or KILLED;
    exit = ended EXIT or KILLED (statgrid's KILLED is LSF's EXIT after bkill); started = RUN, USUSP
    or finished after starting. A job requeued to PEND waits again, as in LSF."""
    job = states.get(term.ref)
    head = f"{term}: {_job(term.ref)}"
    if job is None:
        return Verdict(NEVER, f"{head} does not exist")
    state = job.state
    if term.kind == "done":
        if state == "DONE":
            return Verdict(MET, f"{head} is DONE")
        if state in FAILED:
            return Verdict(NEVER, f"{head} ended {state}, so it can never be DONE")
    elif term.kind == "ended":
        if state in FINISHED:
            return Verdict(MET, f"{head} ended {state}")
    elif term.kind == "exit":
        if state in FAILED:
            return Verdict(MET, f"{head} ended {state}")
        if state == "DONE":
            return Verdict(NEVER, f"{head} ended DONE, so it can never be EXIT")
    else:                                                  # started
        if state in ("RUN", "USUSP"):
            return Verdict(MET, f"{head} is {state}")
        if state in FINISHED and job.started:
            return Verdict(MET, f"{head} started and ended {state}")
        if state in FINISHED:
            return Verdict(NEVER, f"{head} ended {state} without starting, so it can never start")
    return Verdict(WAIT, f"{head} is {state}")


def evaluate(expr: Expr, states: Mapping[Union[int, str], JobView]) -> Verdict:
    """MET, WAIT or NEVER for `expr` given each job's state (keyed by the refs of `expr`: ids after
    `resolve`). A job missing from `states` does not exist: NEVER. And: any NEVER → NEVER, all MET →
    MET, else WAIT; Or: any MET → MET, all NEVER → NEVER, else WAIT. The reason is that of the
    deciding item (the first NEVER, MET or WAIT one)."""
    if isinstance(expr, Term):
        return _evaluate_term(expr, states)
    verdicts = [evaluate(item, states) for item in expr.items]
    first = {outcome: next((v for v in verdicts if v.outcome is outcome), None) for outcome in Outcome}
    if isinstance(expr, And):
        if first[NEVER]:
            return first[NEVER]
        if first[WAIT]:
            return first[WAIT]
        return Verdict(MET, f"all {len(verdicts)} conditions are met")
    if first[MET]:
        return first[MET]
    if first[WAIT]:
        return first[WAIT]
    return Verdict(NEVER, f"{first[NEVER].reason}; nor can the other {len(verdicts) - 1} alternatives be met"
                   if len(verdicts) > 2 else f"{first[NEVER].reason}; nor can the other alternative be met")
