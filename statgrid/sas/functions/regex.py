"""Perl regular expressions (SAS 9.4 Functions and CALL Routines, "Pattern Matching Using Perl Regular
Expressions"): PRXPARSE PRXMATCH PRXCHANGE PRXPOSN PRXPAREN; CALL PRXSUBSTR PRXNEXT PRXPOSN PRXCHANGE
PRXFREE.

A regular expression is written /pattern/flags or m/pattern/flags (flags i x s m o), a substitution
s/pattern/replacement/flags (g accepted; how many changes is PRXCHANGE's `times`: -1 for all). Any
punctuation character may delimit, as in Perl. PRXPARSE returns a regular-expression id (1, 2, … per
DATA step); the same text gives the same id, so a PRXPARSE of a constant (or /o) compiles once per step,
as SAS does. PRXMATCH and PRXCHANGE also take the text itself in place of an id (compiled once).
PRXPOSN/PRXPAREN/CALL PRXPOSN read the capture buffers of the last PRXMATCH, PRXSUBSTR, PRXNEXT or
PRXCHANGE run with that id. The source is searched as the DATA step holds it: trailing blanks of a
variable are part of it (use TRIM, as in SAS).

Perl syntax that Python's `re` lacks is translated: \\z and \\Z, \\Q…\\E, \\h, POSIX classes
([[:alpha:]] …), named groups (?<name>…) and \\k<name>; replacements take $1 ${1} \\1 $& and the case
escapes \\U \\L \\E. Not supported (a clear ERROR when used): recursion (?R), \\K, \\G, (?{code}),
possessive/atomic forms are Python 3.11's own. \\w, \\d, \\s are ASCII, as Perl's default in SAS.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.functions.character import to_char
from statgrid.sas.functions.numeric import to_num
from statgrid.sas.functions.registry import CALL_SETS, call_routine, function, invalid_argument
from statgrid.sas.values import MISSING

_POSIX = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
          "space": r" \t\n\r\f\v", "blank": r" \t", "punct": r"!-/:-@\[-`{-~", "xdigit": "0-9A-Fa-f",
          "word": "a-zA-Z0-9_", "cntrl": r"\x00-\x1f\x7f", "print": r"\x20-\x7e", "graph": r"\x21-\x7e"}
_UNSUPPORTED = (r"\K", r"\G", "(?R)", "(?{", "(?&")
_FLAGS = {"i": re.I, "x": re.X, "s": re.S, "m": re.M}


@dataclass
class Regex:
    """One parsed regular expression: the compiled pattern, the replacement (s///), the last match."""
    text: str
    pattern: re.Pattern
    replacement: list | None = None          # tokens: str | int (a group) | ('case', 'U'/'L'/'E')
    last: Any = None                          # the last re.Match run with this id
    extra: dict = field(default_factory=dict)


def _error(rt, text: str, why: str) -> SasError:
    return SasError(f"The regular expression {text!r} is not valid: {why}", getattr(rt, "line", 0),
                    getattr(rt, "col", 0), text,
                    "a Perl regular expression such as '/ab+c/i' or 's/(\\w+) (\\w+)/$2 $1/'")


def _split(rt, text: str, delim: str, start: int) -> tuple[str, int]:
    """The part of `text` from `start` to the next unescaped `delim`, and the index after it."""
    i, out = start, []
    close = {"(": ")", "[": "]", "{": "}", "<": ">"}.get(delim, delim)
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            if text[i + 1] == close and close != "\\":
                out.append(close)           # an escaped delimiter stands for itself
            else:
                out.append(text[i:i + 2])
            i += 2
            continue
        if c == close:
            return "".join(out), i + 1
        out.append(c)
        i += 1
    raise _error(rt, text, f'the closing delimiter "{close}" is missing')


def translate(rt, text: str, pattern: str) -> str:
    """Perl pattern syntax → Python's."""
    for bad in _UNSUPPORTED:
        if bad in pattern:
            raise _error(rt, text, f"{bad} is not supported by statgrid's regular expressions")
    out, i, n, in_class = [], 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if e == "Q":
                j = pattern.find("\\E", i + 2)
                j = n if j < 0 else j
                out.append(re.escape(pattern[i + 2:j]))
                i = j + 2
                continue
            if e == "z":
                out.append(r"\Z")
            elif e == "Z" and not in_class:
                out.append(r"(?=\n?\Z)")
            elif e == "h":
                out.append(r" \t" if in_class else r"[ \t]")
            elif e == "k" and i + 2 < n and pattern[i + 2] in "<{'":
                close = {"<": ">", "{": "}", "'": "'"}[pattern[i + 2]]
                j = pattern.index(close, i + 3)
                out.append(f"(?P={pattern[i + 3:j]})")
                i = j + 1
                continue
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "[" and pattern.startswith("[:", i):
                j = pattern.find(":]", i + 2)
                name = pattern[i + 2:j] if j > 0 else ""
                neg = name.startswith("^")
                cls = _POSIX.get(name.lstrip("^"))
                if cls is None or neg:
                    raise _error(rt, text, f"the POSIX class [:{name}:] is not known")
                out.append(cls)
                i = j + 2
                continue
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":        # a ] first in a class is a literal
                out.append(r"\]")
                i += 1
            continue
        if c == "(" and pattern.startswith("(?<", i) and i + 3 < n and pattern[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _replacement(text: str) -> list:
    """A Perl replacement as tokens: literal text, group numbers, case escapes."""
    toks: list = []
    buf: list[str] = []

    def flush():
        if buf:
            toks.append("".join(buf))
            buf.clear()
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            e = text[i + 1]
            if e.isdigit():
                flush()
                toks.append(int(e))
            elif e in "ULE":
                flush()
                toks.append(("case", e))
            else:
                buf.append({"n": "\n", "t": "\t"}.get(e, e))
            i += 2
            continue
        if c == "$" and i + 1 < n:
            m = re.match(r"\{(\d+)\}|(\d+)|(&)", text[i + 1:])
            if m:
                flush()
                toks.append(0 if m.group(3) else int(m.group(1) or m.group(2)))
                i += 1 + m.end()
                continue
        buf.append(c)
        i += 1
    flush()
    return toks


def _expand(toks: list, m: re.Match) -> str:
    out, case = [], ""
    for t in toks:
        if isinstance(t, tuple):
            case = "" if t[1] == "E" else t[1]
            continue
        s = t if isinstance(t, str) else (m.group(t) or "") if t <= (m.re.groups or 0) else ""
        out.append(s.upper() if case == "U" else s.lower() if case == "L" else s)
    return "".join(out)


def parse(rt, text: str) -> Regex:
    """The Regex for /…/flags, m/…/flags or s/…/…/flags (SasError naming the text when it is not one)."""
    t = text.strip(" ")
    subst = False
    i = 0
    if t[:1] in ("m", "s") and len(t) > 1 and not t[1].isalnum() and not t[1].isspace():
        subst = t[0] == "s"
        i = 1
    if i >= len(t) or t[i].isalnum() or t[i].isspace() or t[i] == "\\":
        raise _error(rt, t, 'it must be written /pattern/ (or m/…/, s/…/…/), the opening delimiter "/" is missing')
    delim = t[i]
    pat, j = _split(rt, t, delim, i + 1)
    repl = None
    if subst:
        if delim in "([{<":                      # s{…}{…}
            while j < len(t) and t[j] == " ":
                j += 1
            delim = t[j] if j < len(t) else delim
            j += 1
        repl, j = _split(rt, t, delim, j)
    flags = re.ASCII
    for f in t[j:]:
        if f in _FLAGS:
            flags |= _FLAGS[f]
        elif f not in "ogec":
            raise _error(rt, t, f"{f!r} is not a regular-expression option (i x s m o)")
    try:
        compiled = re.compile(translate(rt, t, pat), flags)
    except re.error as e:
        raise _error(rt, t, str(e)) from None
    return Regex(t, compiled, _replacement(repl) if repl is not None else None)


def _table(rt) -> dict:
    st = rt.state
    if "prx" not in st:
        st["prx"] = {"ids": {}, "by_text": {}}
    return st["prx"]


def _parse_id(rt, text: str) -> int:
    tab = _table(rt)
    key = text.strip(" ")
    rid = tab["by_text"].get(key)
    if rid is None or rid not in tab["ids"]:
        rx = parse(rt, key)
        rid = len(tab["ids"]) + 1
        while rid in tab["ids"]:
            rid += 1
        tab["ids"][rid] = rx
        tab["by_text"][key] = rid
    return rid


def _regex(rt, ref: Any, name: str) -> Regex | None:
    """The Regex given by an id (number) or the regular expression's text; None (with the NOTE) for an
    id PRXPARSE did not return."""
    if isinstance(ref, str):
        return _table(rt)["ids"][_parse_id(rt, ref)]
    v = to_num(ref)
    rx = _table(rt)["ids"].get(int(v)) if v == v and v == int(v) else None
    if rx is None:
        invalid_argument(rt, name, 1, None)
    return rx


# -- a budget per match -------------------------------------------------------------------------------------
# Python's re backtracks without bound where Perl's engine (SAS's) answers at once ('/(a+)+$/' on 40 a's then
# 'b'): one value must not hold a grid slot for hours. A match runs under an interval timer; past the budget
# it stops with an ERROR naming the expression (re checks for signals while it matches). Only in the main
# thread, and only when no other ITIMER_REAL is running.
MATCH_BUDGET_S = 10.0


class _MatchTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _MatchTimeout()


def _timed(rx, call, *args, **kwargs):
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or signal.getitimer(signal.ITIMER_REAL)[0]:
        return call(*args, **kwargs)
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, MATCH_BUDGET_S)
    try:
        return call(*args, **kwargs)
    except _MatchTimeout:
        raise SasError(f"The regular expression {rx.text!r} ran longer than {MATCH_BUDGET_S:g} seconds on one value "
                       "(catastrophic backtracking: a nested quantifier such as (a+)+ that Python's engine cannot "
                       "resolve)", 0, 0, rx.text, "an expression without nested repetition, e.g. /a+$/") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@function("PRXPARSE", 1, 1, args="c")
def f_prxparse(rt, text):
    """The id of the compiled regular expression (the same text gives the same id within a step)."""
    return float(_parse_id(rt, to_char(text)))


@function("PRXMATCH", 2, 2, args="ac")
def f_prxmatch(rt, ref, source):
    """The 1-based position of the first match in source, 0 if none."""
    rx = _regex(rt, ref, "PRXMATCH")
    if rx is None:
        return MISSING
    m = _timed(rx, rx.pattern.search, to_char(source))
    rx.last = m
    return float(m.start() + 1) if m else 0.0


def _change(rx: Regex, times: int, source: str) -> tuple[str, int]:
    count = [0]
    last = [None]

    def repl(m):
        count[0] += 1
        last[0] = m
        return _expand(rx.replacement, m)
    out = _timed(rx, rx.pattern.sub, repl, source, count=0 if times < 0 else times)
    rx.last = last[0]
    return out, count[0]


@function("PRXCHANGE", 3, 3, returns="char", char_length=200, args="anc")
def f_prxchange(rt, ref, times, source):
    """Source with the first `times` matches (-1: all) replaced by the s/// replacement."""
    rx = _regex(rt, ref, "PRXCHANGE")
    if rx is None:
        return ""
    t = to_num(times)
    if rx.replacement is None or t != t or t < -1:
        return invalid_argument(rt, "PRXCHANGE", 1 if rx.replacement is None else 2, "")
    if t == 0:
        return to_char(source)
    return _change(rx, int(t), to_char(source))[0]


def _buffer(rt, ref, n, name) -> tuple[Regex | None, int | None]:
    rx = _regex(rt, ref, name)
    if rx is None:
        return None, None
    k = to_num(n)
    if k != k or k < 0 or int(k) > rx.pattern.groups:
        invalid_argument(rt, name, 2, None)
        return rx, None
    return rx, int(k)


@function("PRXPOSN", 3, 3, returns="char", char_length=200, args="nnc")
def f_prxposn(rt, ref, n, source):
    """The text of capture buffer n (0: the whole match) of the last match with this id, taken from
    source at the matched positions; blank when the buffer did not take part."""
    rx, k = _buffer(rt, ref, n, "PRXPOSN")
    if rx is None or k is None or rx.last is None or rx.last.start(k) < 0:
        return ""
    s = to_char(source)
    return s[rx.last.start(k):rx.last.end(k)]


@function("PRXPAREN", 1, 1)
def f_prxparen(rt, ref):
    """The number of the last capture buffer that matched (the largest when alternatives each have one)."""
    rx = _regex(rt, ref, "PRXPAREN")
    if rx is None or rx.last is None:
        return MISSING
    return float(rx.last.lastindex) if rx.last.lastindex else MISSING


CALL_SETS.update({"PRXPOSN": (2, 3), "PRXSUBSTR": (2, 3), "PRXNEXT": (1, 4, 5), "PRXFREE": (0,),
                  "PRXCHANGE": (3, 4, 5, 6)})


@call_routine("PRXSUBSTR", 3, 4, args="ncnn")
def call_prxsubstr(rt, args):
    rx = _regex(rt, args[0], "PRXSUBSTR")
    if rx is None:
        return None
    m = _timed(rx, rx.pattern.search, to_char(args[1]))
    rx.last = m
    pos, ln = (float(m.start() + 1), float(m.end() - m.start())) if m else (0.0, 0.0)
    return [None, None, pos, ln][:len(args)]


@call_routine("PRXNEXT", 6, 6, args="nnncnn")
def call_prxnext(rt, args):
    """The next match in source[start..stop]: position and length (0, 0 if none); start moves to
    position + MAX(1, length) after a match and is unchanged otherwise."""
    rx = _regex(rt, args[0], "PRXNEXT")
    if rx is None:
        return None
    s = to_char(args[3])
    start, stop = to_num(args[1]), to_num(args[2])
    if start != start or stop != stop:
        invalid_argument(rt, "PRXNEXT", None, None)
        return [None, None, None, None, 0.0, 0.0]
    end = len(s.rstrip(" ")) if stop == -1 else min(int(stop), len(s))
    b = max(int(start), 1) - 1
    m = _timed(rx, rx.pattern.search, s, b, max(end, b)) if b <= end else None
    rx.last = m
    if m is None:
        return [None, None, None, None, 0.0, 0.0]
    pos, ln = m.start() + 1, m.end() - m.start()
    return [None, float(pos + max(1, ln)), None, None, float(pos), float(ln)]


@call_routine("PRXPOSN", 3, 4, args="nnnn")
def call_prxposn(rt, args):
    """The start (0 if the buffer did not match) and length of capture buffer n of the last match."""
    rx, k = _buffer(rt, args[0], args[1], "PRXPOSN")
    if rx is None or k is None or rx.last is None or rx.last.start(k) < 0:
        return [None, None, 0.0, 0.0][:len(args)]
    m = rx.last
    return [None, None, float(m.start(k) + 1), float(m.end(k) - m.start(k))][:len(args)]


@call_routine("PRXCHANGE", 3, 7, args="nncc")
def call_prxchange(rt, args):
    """CALL PRXCHANGE(id, times, old <, new <, result-length <, truncated <, changes>>>>): the changed
    text into new (or old when new is not given); the result's length without trailing blanks, 1 if
    it was cut to new's length, how many changes were made."""
    rx = _regex(rt, args[0], "PRXCHANGE")
    if rx is None:
        return None
    t = to_num(args[1])
    if rx.replacement is None or t != t or t < -1:
        invalid_argument(rt, "PRXCHANGE", 1 if rx.replacement is None else 2, None)
        return None
    old = to_char(args[2])
    new, count = (old, 0) if t == 0 else _change(rx, int(t), old)
    target = 3 if len(args) > 3 else 2
    room = len(args[target]) if isinstance(args[target], str) and args[target] else len(new)
    cut = len(new.rstrip(" ")) > room
    new = new[:room]
    out: list = [None] * len(args)
    out[target] = new
    if len(args) > 4:
        out[4] = float(len(new.rstrip(" ")))
    if len(args) > 5:
        out[5] = 1.0 if cut else 0.0
    if len(args) > 6:
        out[6] = float(count)
    return out


@call_routine("PRXFREE", 1, 1, args="n")
def call_prxfree(rt, args):
    """Frees the regular expression; the id variable is set to missing."""
    v = to_num(args[0])
    if v == v:
        tab = _table(rt)
        rx = tab["ids"].pop(int(v), None)
        if rx is not None:
            tab["by_text"].pop(rx.text, None)
    return [MISSING]
