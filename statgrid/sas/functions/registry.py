"""The registry of the DATA step's functions and CALL routines (SAS 9.4 Functions and CALL Routines: Reference), by
name: `FUNCTIONS`, `CALL_ROUTINES`, `lookup_function(name)`, `lookup_call(name)`.

A `Function` is called `fn(rt, *args)`: `rt` is the FunctionRuntime (rt.program: the program's shared
state; rt.state: this step's own — random streams, …), args are SAS values (float, NaN for missing;
str, padded for a character variable). It returns a float or a str (unpadded: the DATA step pads it
to the target's length). Fields the DATA step uses to compile a call:
  - min_args/max_args (None: no maximum), returns 'num' or 'char';
  - char_length: the length of a character result when it creates a variable: a number, 0 for "the
    length of the first argument" (SUBSTR, UPCASE, TRIM …), -1 for "the width of the format" (PUT);
  - args: the type of each argument, one letter per position ('n' numeric, 'c' character, 'a' either,
    'f' a format or informat name as text); the last letter repeats. The DATA step converts a value of
    the other type with SAS's NOTE before calling;
  - out_args: positions (0-based) of arguments the function assigns (FGET's variable): such a function
    returns (result, [new values of those arguments in order]).
A `CallRoutine` is called `fn(rt, args: list)` and returns a list of new argument values (None where an
argument is unchanged) or None; the DATA step assigns them back.

Invalid arguments give SAS's NOTE ("NOTE: Invalid argument to function X at line N column M.") through
`invalid_argument`, set rt.state['_ERROR_'] = 1 and call rt.state['_on_invalid'] (the DATA step sets
_ERROR_ and counts the place for its "Mathematical operations could not be performed" NOTE); the result is
missing. Standard library only (numpy only where a stream is drawn in bulk).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from statgrid.sas.errors import SasError
from statgrid.sas.values import MISSING

ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}


@dataclass(frozen=True)
class _Callable:
    """What a function and a CALL routine both are: a name, the callable, how many arguments it takes."""
    name: str
    fn: Callable[..., Any]
    min_args: int
    max_args: int | None


@dataclass(frozen=True)
class Function(_Callable):
    returns: str = "num"              # 'num' | 'char'
    char_length: int = 200            # 0: first argument's length; -1: the format's width
    args: str = "n"                   # per-position types, last repeats: n c a f
    out_args: tuple[int, ...] = ()

    def arg_type(self, i: int) -> str:
        a = self.args or "a"
        return a[i] if i < len(a) else a[-1]


@dataclass(frozen=True)
class CallRoutine(_Callable):
    args: str = "a"


FUNCTIONS: dict[str, Function] = {}
CALL_ROUTINES: dict[str, CallRoutine] = {}


# SAS's longest character value: a character result is cut to this many characters
MAX_CHAR = 32767


# The guarded call running (name, arguments): SAS 9.4's NOTE shows the values, "Invalid argument to
# function LOG(-1) at line 3 column 7." Nested calls are finished before their caller starts.
_CALL: list = [None]
# Functions whose NOTE shows no values (a value read with an informat, a macro variable's name) and that
# are not "mathematical operations" in the step's summary NOTE.
_NOT_MATH = frozenset({"INPUT", "INPUTN", "INPUTC", "SYMGET"})


def _arg_text(a: Any) -> str:
    if isinstance(a, str):
        return "'" + a.rstrip(" ").replace("'", "''") + "'"
    try:
        x = float(a)
    except (TypeError, ValueError):
        return str(a)
    if x != x:
        return "."
    if abs(x) < 1e15 and x == int(x):
        return str(int(x))
    return f"{x:.12g}"


def _guarded(name: str, fn: Callable[..., Any], returns: str) -> Callable[..., Any]:
    """`fn` as the DATA step calls it: an arithmetic fault in its body (an overflow, a value no
    calculation can use, a division by zero) is SAS's "Invalid argument to function X" NOTE with a
    missing result, never a crash; a character result longer than SAS allows is cut to 32767."""
    empty = "" if returns == "char" else MISSING

    def call(rt, *args):
        _CALL[0] = (name, args)                 # for the NOTE's argument values (invalid_argument)
        try:
            r = fn(rt, *args)
        except (ArithmeticError, ValueError):       # OverflowError, ZeroDivisionError, math domain errors
            return invalid_argument(rt, name, None, empty)
        if r.__class__ is str and len(r) > MAX_CHAR:
            return r[:MAX_CHAR]
        return r
    call.__name__ = getattr(fn, "__name__", name)
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn
    return call


def function(name: str, min_args: int, max_args: int | None, returns: str = "num", char_length: int = 200,
             args: str = "n", out_args: tuple[int, ...] = (), aliases: tuple[str, ...] = ()):
    """Decorator registering a function under `name` (and `aliases`). The registered callable is
    guarded (see `_guarded`); functions that assign arguments (out_args) are registered as written."""
    def deco(fn):
        for n in (name, *aliases):
            body = fn if out_args else _guarded(n.upper(), fn, returns)
            FUNCTIONS[n.upper()] = Function(n.upper(), body, min_args, max_args, returns, char_length, args, out_args)
        return fn
    return deco


# The arguments a CALL routine assigns, by routine: "all", or 0-based positions (-1: the last). A variable
# given there is not "uninitialized" (SAS writes that NOTE only for variables nothing assigns).
CALL_SETS: dict[str, Any] = {"MISSING": "all", "SORTN": "all", "SORTC": "all"}


def call_sets(name: str, nargs: int) -> set[int]:
    """0-based positions of the arguments CALL `name` assigns (for a call with `nargs` arguments)."""
    sets = CALL_SETS.get(name.upper(), ())
    if sets == "all":
        return set(range(nargs))
    return {i if i >= 0 else nargs + i for i in sets}


def call_routine(name: str, min_args: int, max_args: int | None, args: str = "a"):
    def deco(fn):
        CALL_ROUTINES[name.upper()] = CallRoutine(name.upper(), fn, min_args, max_args, args)
        return fn
    return deco


def lookup_function(name: str, line: int = 0, col: int = 0) -> Function:
    """The function `name`, or SasError naming it (SAS: "ERROR 68-185: The function X is unknown, or
    cannot be accessed.")."""
    f = FUNCTIONS.get(name.upper())
    if f is None:
        raise SasError(f"The function {name.upper()} is unknown, or cannot be accessed", line, col, name,
                       "a SAS function (SAS 9.4 Functions and CALL Routines)")
    return f


def lookup_call(name: str, line: int = 0, col: int = 0) -> CallRoutine:
    """The CALL routine `name`, or SasError naming it (SAS: "ERROR 251-185: The subroutine X is unknown,
    or cannot be accessed.")."""
    r = CALL_ROUTINES.get(name.upper())
    if r is None:
        raise SasError(f"The subroutine {name.upper()} is unknown, or cannot be accessed", line, col, name,
                       "a SAS CALL routine such as MISSING, SYMPUT, SYMPUTX, STREAMINIT, RANUNI, SORTN")
    return r


def check_arity(name: str, n: int, line: int = 0, col: int = 0) -> None:
    """SAS's compile-time ERROR 71-185 for a wrong argument count."""
    f = lookup_function(name, line, col)
    if n < f.min_args:
        raise SasError(f"The {f.name} function call does not have enough arguments", line, col, name,
                       f"at least {f.min_args} argument{'s' if f.min_args != 1 else ''}")
    if f.max_args is not None and n > f.max_args:
        raise SasError(f"The {f.name} function call has too many arguments", line, col, name,
                       f"at most {f.max_args} argument{'s' if f.max_args != 1 else ''}")


def call_function(rt: Any, name: str, *args: Any) -> Any:
    """Look up and call (what %SYSFUNC and tests use); the arity is checked."""
    check_arity(name, len(args), getattr(rt, "line", 0), getattr(rt, "col", 0))
    return FUNCTIONS[name.upper()].fn(rt, *args)


def invalid_argument(rt: Any, name: str, which: int | None = None, result: Any = MISSING) -> Any:
    """SAS's NOTE for an invalid argument; sets _ERROR_ for the DATA step; returns `result` (missing).
    `which` (1-based) gives SAS's "Invalid second argument to function SUBSTR" form."""
    where = ""
    line, col = getattr(rt, "line", 0), getattr(rt, "col", 0)
    if line:
        where = f" at line {line} column {col}"
    arg = f"{ORDINALS.get(which, '')} " if which else ""
    uname = name.upper()
    shown, cur = "", _CALL[0]
    if not which and cur is not None and cur[0] == uname and uname not in _NOT_MATH:
        shown = "(" + ",".join(_arg_text(a) for a in cur[1]) + ")"
    msg = f"Invalid {arg}argument to function {uname}{shown}{where}."
    state = getattr(rt, "state", None)
    program = getattr(rt, "program", None)
    log = getattr(program, "log", None) if program is not None else None
    show = True
    if isinstance(state, dict):
        state["_ERROR_"] = 1
        hook = state.get("_on_invalid")        # the DATA step: _ERROR_ = 1, the step-end summary count,
        if hook is not None:                   # and whether ERRORS= still lets the NOTE through
            show = hook(line, col, isinstance(result, float) and uname not in _NOT_MATH) is not False
    if show and log is not None and hasattr(log, "note"):
        log.note(msg)
    return result
