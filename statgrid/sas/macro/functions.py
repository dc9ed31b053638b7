"""Macro functions (Macro Language Reference, "Macro Functions"): each takes its argument text as
written and returns (text, rescan) — `rescan` True when the result is unquoted text the macro
processor scans again for `&` and `%` (SAS: %SUBSTR(%NRSTR(&a),1,2) resolves &a, %QSUBSTR does not).

Quoting: %STR %NRSTR (at compile time in SAS: the written text is quoted, `%'` `%"` `%(` `%)` `%%`
mark single characters); %QUOTE %NRQUOTE %BQUOTE %NRBQUOTE (the resolved value is quoted); %SUPERQ
(a variable's value, never resolved); %UNQUOTE. Character: %SCAN %QSCAN %SUBSTR %QSUBSTR %UPCASE
%QUPCASE %LOWCASE %QLOWCASE %LENGTH %INDEX %CMPRES %QCMPRES %LEFT %QLEFT %TRIM %QTRIM %DATATYP.
Evaluation: %EVAL %SYSEVALF. Others: %SYSFUNC %QSYSFUNC (DATA step functions), %SYSGET,
%SYMEXIST %SYMGLOBL %SYMLOCAL %SYSMACEXIST %SYSMEXECDEPTH %SYSMEXECNAME.
Standard library only (the DATA step function registry and formats are imported when called).
"""
from __future__ import annotations

import math
import os
import re
from typing import Any

from statgrid.sas.macro.evaluate import EvalError, eval_float, eval_int
from statgrid.sas.macro.quoting import mask, mask_char, strip_blanks, unquote
from statgrid.sas.macro.scanner import NAME_RE, paren_end, skip_space, split_args, string_end

# %SCAN's default delimiters for ASCII hosts (Macro Language Reference, %SCAN)
SCAN_DELIMITERS = " .<(+&!$*);^-/,%|"
_NUMBER_RE = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


_QUOTED_BLANKS = "".join(chr(0xE000 + ord(c)) for c in " \t\r\n")   # quoting.mask_char of the blanks

def _fault(engine: Any, msg: str) -> tuple[str, bool]:
    engine.fault(msg)
    return "", False


def _args(engine: Any, text: str, depth: int) -> list[str]:
    """Arguments split as written, then each resolved (a comma from a resolved value is text)."""
    return [strip_blanks(engine.resolve_str(a, depth)) for a in split_args(text)]


def _quote_literal(engine: Any, text: str, nr: bool, depth: int) -> str:
    """%STR / %NRSTR: the written text quoted; %STR's `&`/`%` triggers still resolve (their values are
    not quoted, as at SAS's compile time)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "%" and i + 1 < n and text[i + 1] in "'\"()%":
            out.append(mask_char(text[i + 1]))
            i += 2
            continue
        if c == "'":
            e = string_end(text, i)
            e = n if e < 0 else e
            out.append(mask(text[i:e], True))
            i = e
            continue
        if not nr and c in "&%" and i + 1 < n and (text[i + 1].isalpha() or text[i + 1] in "_&"):
            j = i + 1
            while j < n and text[j] == "&":
                j += 1
            m = NAME_RE.match(text, j)
            end = m.end() if m else j
            if c == "%" and m:
                k = skip_space(text, end)
                if k < n and text[k] == "(":
                    e = paren_end(text, k)
                    end = e if e > 0 else end
            elif m and end < n and text[end] == ".":
                end += 1
            out.append(engine.resolve_str(text[i:end], depth + 1))
            i = end
            continue
        m = NAME_RE.match(text, i)
        if m:                                    # a whole word, so a mnemonic (OR, EQ …) is masked
            out.append(mask(m.group(), True))
            i = m.end()
            continue
        out.append(mask(c, True))
        i += 1
    return "".join(out)


def _int_arg(engine: Any, text: str, fn: str, k: int) -> int | None:
    try:
        v = eval_int(text)
        return int(v)
    except (EvalError, ValueError):
        engine.fault(f"Argument {k} to macro function %{fn} is not a number: {unquote(text).strip()}.")
        return None


def _text_and_int(engine: Any, args: list[str], fn: str) -> int | None:
    """%SCAN and %SUBSTR take (text, n[, a third]): the number of arguments checked and n, the second, as
    an integer (None once a fault is written)."""
    if len(args) < 2 or len(args) > 3:
        engine.fault(f"Macro function %{fn} has {'too few' if len(args) < 2 else 'too many'} arguments.")
        return None
    return _int_arg(engine, args[1], fn, 2)


def _scan(engine: Any, args: list[str], fn: str) -> str | None:
    n = _text_and_int(engine, args, fn)
    if n is None:
        return None
    text = args[0]
    delims = set(unquote(args[2])) if len(args) == 3 and args[2] != "" else set(SCAN_DELIMITERS)
    plain = unquote(text)
    words, k, L = [], 0, len(plain)
    while k < L:
        while k < L and plain[k] in delims:
            k += 1
        s = k
        while k < L and plain[k] not in delims:
            k += 1
        if k > s:
            words.append(text[s:k])
    if n == 0 or abs(n) > len(words):
        return ""
    return words[n - 1] if n > 0 else words[n]


def _substr(engine: Any, args: list[str], fn: str) -> str | None:
    pos = _text_and_int(engine, args, fn)
    if pos is None:
        return None
    text = args[0]
    if pos < 1 or pos > len(text):
        engine.warning(f"Argument 2 to macro function %{fn} is out of range.")
        return ""
    if len(args) == 3 and args[2].strip():
        ln = _int_arg(engine, args[2], fn, 3)
        if ln is None:
            return None
        if ln < 0 or pos + ln - 1 > len(text):
            engine.warning(f"Argument 3 to macro function %{fn} is out of range.")
            return text[pos - 1:]
        return text[pos - 1:pos - 1 + ln]
    return text[pos - 1:]


def _sysfunc(engine: Any, text: str, quoted: bool, depth: int) -> tuple[str, bool]:
    fname = "%QSYSFUNC" if quoted else "%SYSFUNC"
    s = text.lstrip()
    m = NAME_RE.match(s)
    if not m:
        return _fault(engine, f"Expected a function name in {fname}: {unquote(text).strip()}.")
    name = m.group().upper()
    k = skip_space(s, m.end())
    if k >= len(s) or s[k] != "(":
        return _fault(engine, f"Expected open parenthesis after the function {name} in {fname}.")
    e = paren_end(s, k)
    if e < 0:
        return _fault(engine, f"Expected close parenthesis after the function {name} in {fname}.")
    inner = s[k + 1:e - 1]
    raw_args = [] if not inner.strip() else split_args(inner)
    rest = s[e:].strip()
    fmt = ""
    if rest:
        if not rest.startswith(","):
            return _fault(engine, f"Extra text after the function {name} in {fname}: {unquote(rest)}.")
        fmt = unquote(engine.resolve_str(rest[1:], depth)).strip()
    lookup = engine.lookup_function
    if lookup is None:
        try:
            from statgrid.sas.functions import lookup_function as lookup
        except ImportError:
            return _fault(engine, f"The function {name} referenced by the %SYSFUNC or %QSYSFUNC macro function is "
                                  "not found (no DATA step function library in this statgrid build).")
    try:
        rec = lookup(name)
    except Exception:
        rec = None
    if rec is None:
        return _fault(engine, f"The function {name} referenced by the %SYSFUNC or %QSYSFUNC macro function is "
                              "not found.")
    arg_type = getattr(rec, "arg_type", None)
    out_args = tuple(getattr(rec, "out_args", ()) or ())
    values: list[Any] = []
    for idx, raw in enumerate(raw_args):
        t = unquote(strip_blanks(engine.resolve_str(raw, depth)))
        kind = arg_type(idx) if callable(arg_type) else "a"
        if idx in out_args:                      # names a macro variable the function assigns (FILENAME, FGET)
            values.append(engine.symbols.get(t.strip()) or "")
        elif kind in ("c", "f"):
            values.append(t)
        elif t.strip() in (".", ""):
            values.append(math.nan if kind == "n" or t.strip() == "." else t)
        elif _NUMBER_RE.match(t.strip()):
            values.append(float(t))
        elif kind == "n":
            return _fault(engine, f"Argument {idx + 1} to function {name} referenced by the %SYSFUNC or %QSYSFUNC "
                                  f"macro function is not a number.")
        else:
            values.append(t)
    lo, hi = getattr(rec, "min_args", None), getattr(rec, "max_args", None)
    if lo is not None and len(values) < lo:
        return _fault(engine, f"The function {name} referenced by the %SYSFUNC or %QSYSFUNC macro function has too "
                              "few arguments.")
    if hi is not None and hi >= 0 and len(values) > hi:
        return _fault(engine, f"The function {name} referenced by the %SYSFUNC or %QSYSFUNC macro function has too "
                              "many arguments.")
    from statgrid.sas.context import FunctionRuntime
    rt = FunctionRuntime(engine.program, engine.sysfunc_state, engine.cur_line, 0)
    fn = getattr(rec, "fn", rec)
    try:
        result = fn(rt, *values)
    except Exception as exc:                         # SasError and faults of the function itself
        msg = exc.describe() if hasattr(exc, "describe") else str(exc)
        return _fault(engine, f"{msg} (in %SYSFUNC({name}))")
    if name in ("FETCH", "FETCHOBS"):
        from statgrid.sas.macro.syscall import after_fetch
        after_fetch(engine, name, values, result)
    if out_args and isinstance(result, tuple) and len(result) == 2:
        result, new_values = result
        for pos, value in zip(out_args, new_values or []):
            if pos < len(raw_args) and value is not None:
                var = unquote(strip_blanks(engine.resolve_str(raw_args[pos], depth))).strip()
                if var:
                    engine.symbols.let(var, str(value).rstrip())
    if isinstance(result, (int, float)) and not isinstance(result, bool):
        out = _format_number(engine, float(result), fmt)
    else:
        out = str(result).rstrip() if not fmt else _format_char(engine, str(result), fmt)
    return (mask(out, True), False) if quoted else (out, True)


def _format_number(engine: Any, v: float, fmt: str) -> str:
    from statgrid.sas import formats
    if fmt:
        try:
            return formats.format_value(v, formats.parse_spec(fmt), getattr(engine.program, "formats", None))
        except Exception as exc:
            engine.fault(exc.describe() if hasattr(exc, "describe") else str(exc))
            return ""
    if math.isnan(v):
        return "."
    return formats.best(v, 12).strip()


def _format_char(engine: Any, v: str, fmt: str) -> str:
    from statgrid.sas import formats
    try:
        return formats.format_value(v, formats.parse_spec(fmt), getattr(engine.program, "formats", None))
    except Exception as exc:
        engine.fault(exc.describe() if hasattr(exc, "describe") else str(exc))
        return ""


def call_function(engine: Any, name: str, text: str, depth: int) -> tuple[str, bool]:
    """Run macro function %name on its written argument text → (result, rescan)."""
    if name in ("STR", "NRSTR"):
        return _quote_literal(engine, text, name == "NRSTR", depth), False
    if name == "SUPERQ":
        var = unquote(engine.resolve_str(text, depth)).strip()
        value = engine.symbols.lookup(var) if var else None
        if value is None:
            engine.warning(f"Apparent symbolic reference {var.upper()} not resolved.")
            return "", False
        return mask(value, True), False
    if name in ("QUOTE", "NRQUOTE", "BQUOTE", "NRBQUOTE"):
        if name in ("QUOTE", "NRQUOTE"):             # %' %" %( %) mark unmatched characters here
            text = re.sub(r"%(['\"()%])", lambda m: mask_char(m.group(1)), text)
        return mask(engine.resolve_str(text, depth), name.startswith("NR")), False
    if name == "UNQUOTE":
        return unquote(engine.resolve_str(text, depth)), True
    if name == "EVAL":
        try:
            return eval_int(engine.resolve_str(text, depth), *engine._min()), False
        except EvalError as exc:
            return _fault(engine, str(exc))
    if name == "SYSEVALF":
        args = _args(engine, text, depth)
        try:
            return eval_float(args[0], unquote(args[1]) if len(args) > 1 else "", *engine._min()), False
        except EvalError as exc:
            return _fault(engine, str(exc))
    if name in ("SYSFUNC", "QSYSFUNC"):
        return _sysfunc(engine, text, name == "QSYSFUNC", depth)
    if name == "SYSGET":
        var = unquote(engine.resolve_str(text, depth)).strip()
        if var not in os.environ:
            engine.warning("The argument to macro function %SYSGET is not defined as a system variable.")
            return "", False
        return os.environ[var], True
    quoted = name.startswith("Q") and name not in ("QUOTE",)
    base = name[1:] if quoted else name
    args = _args(engine, text, depth)
    if base == "SCAN":
        r = _scan(engine, args, name)
    elif base == "SUBSTR":
        r = _substr(engine, args, name)
    elif base in ("UPCASE", "LOWCASE", "CMPRES", "LEFT", "TRIM"):
        v = ",".join(args)                    # a comma in these one-argument functions is text
        if base == "UPCASE":
            r = "".join(ch.upper() if not ("\ue000" <= ch <= "\ue0ff") else ch for ch in v)
        elif base == "LOWCASE":
            r = "".join(ch.lower() if not ("\ue000" <= ch <= "\ue0ff") else ch for ch in v)
        elif base == "CMPRES":
            r = re.sub("[ \t\r\n" + _QUOTED_BLANKS + "]+", " ", v).strip(" ")
        elif base == "LEFT":            # a blank %STR or %NRSTR quoted is still a blank to %LEFT and %TRIM
            r = v.lstrip(" \t\r\n" + _QUOTED_BLANKS)
        else:
            r = v.rstrip(" \t\r\n" + _QUOTED_BLANKS)
    elif name == "LENGTH":
        return str(len(",".join(args))), False
    elif name == "INDEX":
        if len(args) != 2:
            few = "few" if len(args) < 2 else "many"
            return _fault(engine, f"Macro function %INDEX has too {few} arguments.")
        return str(unquote(args[0]).find(unquote(args[1])) + 1 if args[1] else 0), False
    elif name == "DATATYP":
        v = unquote(",".join(args)).strip()
        return ("NUMERIC" if _NUMBER_RE.match(v) else "CHAR"), False
    elif name == "SYMEXIST":
        return ("1" if engine.symbols.exists(unquote(args[0]).strip()) else "0"), False
    elif name == "SYMGLOBL":
        return ("1" if unquote(args[0]).strip().upper() in engine.symbols.globals.values else "0"), False
    elif name == "SYMLOCAL":
        up = unquote(args[0]).strip().upper()
        return ("1" if any(up in s.values for s in engine.symbols.locals) else "0"), False
    elif name == "SYSMACEXIST":
        return ("1" if unquote(args[0]).strip().upper() in engine.macros else "0"), False
    elif name == "SYSMEXECDEPTH":
        return str(len(engine.active)), False
    elif name == "SYSMEXECNAME":
        try:
            k = int(unquote(args[0]).strip())
        except ValueError:
            return _fault(engine, "Argument to %SYSMEXECNAME is not a number.")
        names = ["OPEN CODE"] + [m.name for m in engine.active]
        return (names[k] if 0 <= k < len(names) else ""), False
    else:
        return _fault(engine, f"Macro function %{name} is not supported by statgrid.")
    if r is None:
        return "", False
    return (mask(r, True), False) if quoted else (unquote(r), True)


FUNCTIONS = frozenset({
    "STR", "NRSTR", "QUOTE", "NRQUOTE", "BQUOTE", "NRBQUOTE", "SUPERQ", "UNQUOTE", "EVAL", "SYSEVALF",
    "SYSFUNC", "QSYSFUNC", "SYSGET", "SCAN", "QSCAN", "SUBSTR", "QSUBSTR", "UPCASE", "QUPCASE", "LOWCASE",
    "QLOWCASE", "CMPRES", "QCMPRES", "LEFT", "QLEFT", "TRIM", "QTRIM", "LENGTH", "INDEX", "DATATYP",
    "SYMEXIST", "SYMGLOBL", "SYMLOCAL", "SYSMACEXIST", "SYSMEXECDEPTH", "SYSMEXECNAME"})
NO_ARGUMENT_FUNCTIONS = frozenset({"SYSMEXECDEPTH"})
