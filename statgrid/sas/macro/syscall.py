"""%SYSCALL and the statements batch SAS cannot run (SAS 9.4 Macro Language: Reference, "%SYSCALL Statement",
"%WINDOW Statement", "%DISPLAY Statement").

%SYSCALL routine(name1, name2, ...) calls a DATA step CALL routine with the values of the macro variables named
(no ampersands; a text expression may build the names), then stores the values the routine assigns back into
those macro variables: `%let seed=5; %let x=0; %syscall ranuni(seed, x);` leaves the next seed in SEED and the
uniform variate in X. %SYSCALL SET(dsid) ties the data set OPEN opened to macro variables named as its
variables: each %SYSFUNC(FETCH(&dsid)) / FETCHOBS then copies the row read into them (after_fetch)."""
from __future__ import annotations

import math
import re
from typing import Any

from statgrid.sas.macro.quoting import strip_blanks, unquote
from statgrid.sas.macro.scanner import NAME_RE, paren_end, skip_space, split_args

_NUMBER_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
BOUND_KEY = "syscall.set"          # engine.sysfunc_state[...]: the data set ids %SYSCALL SET tied


def no_window(engine: Any, kind: str) -> None:
    """%WINDOW / %DISPLAY: a batch session has no display to open a window on."""
    engine.fault(f"The %{kind} statement needs SAS's windowing environment, which a statgrid batch session does "
                 f"not have: give the values the window would ask for through -sysparm, -set NAME VALUE or %LET.")


def _number_text(engine: Any, v: float) -> str:
    from statgrid.sas import formats
    return "." if math.isnan(v) else formats.best(v, 12).strip()


def syscall(engine: Any, text: str) -> None:
    """Run `%SYSCALL text;` (text: routine(arguments))."""
    s = unquote(engine.resolve_str(text)).strip()
    m = NAME_RE.match(s)
    if not m:
        engine.fault(f"Expected a CALL routine name in %SYSCALL: {s}.")
        return
    name = m.group().upper()
    k = skip_space(s, m.end())
    names: list[str] = []
    if k < len(s):
        e = paren_end(s, k) if s[k] == "(" else -1
        if e < 0 or s[e:].strip():
            engine.fault(f"Expected the arguments of CALL {name} in parentheses in %SYSCALL: {s}.")
            return
        inner = s[k + 1:e - 1]
        names = [strip_blanks(a).strip() for a in split_args(inner)] if inner.strip() else []
    if name == "SET":
        _set(engine, names)
        return
    from statgrid.sas.functions import CALL_ROUTINES
    rec = CALL_ROUTINES.get(name)
    if rec is None or name in ("SYMPUT", "SYMPUTX", "EXECUTE"):
        engine.fault(f"The CALL routine {name} referenced by the %SYSCALL macro statement is not valid "
                     f"there{'' if rec is None else ' (it works on the DATA step, not on macro variables)'}.")
        return
    values: list[Any] = []
    for n in names:
        if not NAME_RE.fullmatch(n):
            engine.fault(f"Argument {n!r} to %SYSCALL {name} is not a macro variable name (give the name, "
                         f"without an ampersand).")
            return
        got = engine.symbols.get(n)
        if got is None:
            engine.fault(f"Macro variable {n.upper()} named in %SYSCALL {name} does not exist: %LET it first.")
            return
        t = got.strip()
        values.append(float(t) if _NUMBER_RE.match(t) else math.nan if t == "." else got)
    if len(values) < rec.min_args or (rec.max_args is not None and len(values) > rec.max_args):
        engine.fault(f"%SYSCALL {name} has {len(values)} arguments; CALL {name} takes {rec.min_args}"
                     f"{'' if rec.max_args == rec.min_args else ' or more'}.")
        return
    from statgrid.sas.context import FunctionRuntime
    rt = FunctionRuntime(engine.program, engine.sysfunc_state, engine.cur_line, 0)
    try:
        out = rec.fn(rt, values)
    except Exception as exc:                 # SasError and faults of the routine itself
        engine.fault(f"{exc.describe() if hasattr(exc, 'describe') else exc} (in %SYSCALL {name})")
        return
    for n, v in zip(names, out or []):
        if v is None:
            continue
        engine.symbols.let(n, _number_text(engine, float(v)) if isinstance(v, (int, float)) else str(v).rstrip())


def _set(engine: Any, names: list[str]) -> None:
    if len(names) != 1:
        engine.fault("%SYSCALL SET takes one argument: the macro variable holding the data set id OPEN returned.")
        return
    got = engine.symbols.get(names[0])
    try:
        dsid = int(float((got or "").strip()))
    except ValueError:
        dsid = 0
    sets = (getattr(engine.program, "extras", {}) or {}).get("functions.io", {}).get("sets", {})
    if dsid not in sets:
        engine.fault(f"%SYSCALL SET: {names[0].upper()}={got!r} is not the id of an open data set (OPEN's result).")
        return
    engine.sysfunc_state.setdefault(BOUND_KEY, set()).add(dsid)


def after_fetch(engine: Any, name: str, args: list, result: Any) -> None:
    """After %SYSFUNC(FETCH(dsid)) / FETCHOBS read a row (result 0) of a data set %SYSCALL SET tied: each of
    its variables into the macro variable of the same name (numbers as BEST12., characters without trailing
    blanks)."""
    bound = engine.sysfunc_state.get(BOUND_KEY)
    if not bound or name not in ("FETCH", "FETCHOBS") or result != 0 or not args:
        return
    try:
        dsid = int(float(args[0]))
    except (TypeError, ValueError):
        return
    st = engine.program.extras.get("functions.io", {}).get("sets", {}).get(dsid)
    if dsid not in bound or st is None or st.current is None:
        return
    for col, typ in st.columns:
        v = st.current.get(col)
        if typ == "C":
            engine.symbols.let(col, "" if v is None else str(v).rstrip())
        else:
            try:
                engine.symbols.let(col, _number_text(engine, math.nan if v is None else float(v)))
            except (TypeError, ValueError):
                engine.symbols.let(col, str(v))
