"""Macro execution: resolving text (`&x`, `&&x&i`, macro functions, macro calls) and running compiled
macro nodes, lazily — everything is a generator of text pieces, so a step a macro generates runs
before the macro goes on (SAS: "the macro processor ... resumes after the step executes"; a CALL
SYMPUT in that step is seen by the `&x` after it).

Rules (Macro Language Reference, "Macro Variables", "Macro Processing", "Scopes"):
- `&name` resolves to its value, `&name.` too (the period ends the name); `&&` becomes `&` and the
  result is scanned again, so `&&v&i` → `&v1` → its value. A value is scanned again for triggers unless
  quoted (that is what %SUPERQ and %NRSTR are for). An undefined name: "WARNING: Apparent symbolic
  reference X not resolved." (under SERROR), the text stays.
- `%name` runs a defined macro (with `(…)` arguments when it has parameters), a macro function, or
  warns "WARNING: Apparent invocation of macro X not resolved." (under MERROR), the text staying.
- Single-quoted strings are not resolved; double-quoted ones are.

statgrid's limits (SAS has none documented; a runaway program must not hang the node): macro calls
nest at most MAX_MACRO_DEPTH (50) deep; one %DO loop runs at most MAX_DO_ITERATIONS (1,000,000)
times; a value is rescanned at most MAX_RESCANS (64) times. Past a limit the macro stops with an
ERROR naming the limit. Standard library only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from statgrid.sas.macro import parser as P
from statgrid.sas.macro.evaluate import EvalError, eval_condition, eval_int
from statgrid.sas.macro.quoting import has_masked, mask_char, strip_blanks, unquote
from statgrid.sas.macro.scanner import (NAME_RE, comment_end, is_name_start, name_at, paren_end, skip_space,
                                         skip_space_comments, split_args, string_end)
from statgrid.sas.macro.symbols import ReadOnlyError, SymbolTables

MAX_MACRO_DEPTH = 50
MAX_DO_ITERATIONS = 1_000_000
MAX_RESCANS = 64
_VARNAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Piece:
    """Resolved text: `pos` the offset in open-code text it comes from, `literal` when it is that text
    copied (offsets inside it map one to one), `macro` the macro that generated it (None: open code)."""
    text: str
    pos: int
    macro: str | None
    literal: bool = False


class MacroStop(Exception):
    """The executing macro stops after an ERROR ('ERROR: The macro X will stop executing.')."""


class ReturnSignal(Exception):
    pass


class GotoSignal(Exception):
    def __init__(self, label: str):
        super().__init__(label)
        self.label = label


class AbortProgram(Exception):
    """%ABORT: the program ends (code: ABEND/RETURN n, else 1)."""

    def __init__(self, code: int = 1):
        super().__init__(code)
        self.code = code


def _echoed(kind: str):
    """Engine.put, .note, .warning, .error: the log's method `kind`, after the echo of the source line
    the text is about."""
    def write(self, text: str) -> None:
        self.echo()
        getattr(self.log, kind)(text)
    write.__name__ = kind
    return write


class Engine:
    def __init__(self, program: Any, lookup_function: Callable | None = None):
        self.program = program
        if getattr(program, "symbols", None) is None:
            program.symbols = SymbolTables()
        self.symbols: SymbolTables = program.symbols
        self.log = program.log
        self.macros: dict[str, P.MacroDef] = {}
        self.active: list[P.MacroDef] = []
        self.lookup_function = lookup_function
        self.sysfunc_state: dict[str, Any] = {}      # FunctionRuntime.state shared by %SYSFUNC calls
        self.max_depth, self.max_iterations, self.max_rescans = MAX_MACRO_DEPTH, MAX_DO_ITERATIONS, MAX_RESCANS
        self.cur_line = 0                             # the open-code line being processed
        self.call_line = 0                            # the line of the outermost macro call running
        self.line_at: Callable[[int], int] = lambda pos: self.cur_line
        self.echo_to: Callable[[int], None] = lambda line: None

    # ------------------------------------------------------------------ log
    def opt(self, name: str, default: Any = False) -> Any:
        try:
            return self.program.options.get(name)
        except Exception:
            return default

    def echo(self) -> None:
        self.echo_to(self.call_line if self.active else self.cur_line)

    put = _echoed("put")
    note = _echoed("note")
    warning = _echoed("warning")
    error = _echoed("error")

    def fault(self, msg: str) -> None:
        """An ERROR: logged; inside a macro the macro stops (SAS: 'The macro X will stop executing')."""
        self.error(msg)
        if self.active:
            raise MacroStop(msg)

    def mlogic(self, text: str) -> None:
        if self.active and self.opt("MLOGIC"):
            self.echo()
            self.log.mlogic(self.active[-1].name, text)

    def symbolgen(self, text: str) -> None:
        if self.opt("SYMBOLGEN"):
            self.echo()
            self.log.symbolgen(text)

    @property
    def macro_name(self) -> str | None:
        return self.active[-1].name if self.active else None

    # ------------------------------------------------------------------ resolution
    def resolve_str(self, text: str, depth: int = 0) -> str:
        return "".join(p.text for p in self.resolve(text, depth=depth))

    def resolve(self, text: str, offset: int = 0, base: int | None = None, depth: int = 0) -> Iterator[Piece]:
        """Pieces of `text` resolved, in order, produced lazily (`offset`: where text starts in its
        open-code file; `base`: one position for every piece, for rescanned values)."""
        from statgrid.sas.macro.functions import FUNCTIONS, NO_ARGUMENT_FUNCTIONS, call_function
        mac = self.macro_name
        n, i, lit, in_dq = len(text), 0, 0, False

        def at(k: int) -> int:
            return offset + k if base is None else base

        while i < n:
            c = text[i]
            if c == "'" and not in_dq:
                e = string_end(text, i)
                i = i + 1 if e < 0 else e
                continue
            if c == '"':
                in_dq = not in_dq
                i += 1
                continue
            if c == "/" and not in_dq and text.startswith("/*", i):
                i = comment_end(text, i)
                continue
            if c == "&" and i + 1 < n and (is_name_start(text[i + 1]) or text[i + 1] == "&"):
                e = _ref_end(text, i)
                if e <= i:
                    i += 1
                    continue
                if lit < i:
                    yield Piece(text[lit:i], at(lit), mac, base is None)
                yield Piece(self.expand_ref(text[i:e], depth), at(i), mac)
                i = lit = e
                continue
            if c == "%" and i + 1 < n and is_name_start(text[i + 1]):
                name = name_at(text, i + 1)
                up, j = name.upper(), i + 1 + len(name)
                if up in FUNCTIONS:
                    k = skip_space(text, j)
                    if (k >= n or text[k] != "(") and up in NO_ARGUMENT_FUNCTIONS:
                        if lit < i:
                            yield Piece(text[lit:i], at(lit), mac, base is None)
                        result, _ = call_function(self, up, "", depth)
                        yield Piece(result, at(i), mac)
                        i = lit = j
                        continue
                    if k >= n or text[k] != "(":
                        self.fault(f"Expected open parenthesis after macro function name not found: %{up}.")
                        i = j
                        continue
                    e = paren_end(text, k)
                    if e < 0:
                        self.fault(f"Expected close parenthesis after macro function invocation not found: %{up}.")
                        i = lit = n
                        continue
                    if lit < i:
                        yield Piece(text[lit:i], at(lit), mac, base is None)
                    result, rescan = call_function(self, up, text[k + 1:e - 1], depth)
                    if rescan and ("&" in result or "%" in result):
                        yield from self.resolve(result, base=at(i), depth=depth + 1)
                    elif result:
                        yield Piece(result, at(i), mac)
                    i = lit = e
                    continue
                mdef = self.lookup_macro(up)
                if mdef is not None:
                    args, e = None, j
                    if mdef.params or mdef.parmbuff:
                        k = skip_space_comments(text, j)
                        if k < n and text[k] == "(":
                            e2 = paren_end(text, k)
                            if e2 > 0:
                                args, e = text[k + 1:e2 - 1], e2
                    if lit < i:
                        yield Piece(text[lit:i], at(lit), mac, base is None)
                    yield from self.invoke(mdef, args, at(i))
                    i = lit = e
                    continue
                if up not in ("INCLUDE", "INC") and up not in P.STATEMENTS and self.opt("MERROR", True):
                    self.warning(f"Apparent invocation of macro {up} not resolved.")
                i = j
                continue
            i += 1
        if lit < n:
            yield Piece(text[lit:n], at(lit), mac, base is None)

    def expand_ref(self, token: str, depth: int = 0) -> str:
        """One reference token (`&x`, `&x.`, `&&v&i`, `&a.&b`) → its text, rescanned as SAS does."""
        out: list[str] = []
        i, n, again = 0, len(token), False
        while i < n:
            if token.startswith("&&", i):
                out.append("&")
                again = True
                self.symbolgen("&& resolves to &.")
                i += 2
                continue
            if token[i] == "&" and i + 1 < n and is_name_start(token[i + 1]):
                name = name_at(token, i + 1)
                j = i + 1 + len(name)
                dot = j < n and token[j] == "."
                value = self.symbols.lookup(name)
                if value is None:
                    if self.opt("SERROR", True):
                        self.warning(f"Apparent symbolic reference {name.upper()} not resolved.")
                    # left as written; its '&' masked so later scans do not warn again
                    out.append(mask_char("&") + token[i + 1:j + (1 if dot else 0)])
                else:
                    self.symbolgen(f"Macro variable {name.upper()} resolves to {unquote(value)}")
                    if has_masked(value):
                        self.symbolgen("Some characters in the above value which were subject to macro quoting "
                                       "have been unquoted for printing.")
                    out.append(value)
                    again = again or "&" in value or "%" in value
                i = j + (1 if dot else 0)
                continue
            out.append(token[i])
            i += 1
        text = "".join(out)
        if not again:
            return text
        if depth >= self.max_rescans:
            self.fault(f"Macro variable reference {token} is still resolving after {self.max_rescans} rescans "
                       "(statgrid's limit); the text is left as it is.")
            return text
        return self.resolve_str(text, depth + 1)

    # ------------------------------------------------------------------ macro calls
    def lookup_macro(self, name: str):
        """The macro `name` (upper case): defined in the program, else compiled from an autocall library."""
        mdef = self.macros.get(name)
        if mdef is None and name not in P.STATEMENTS and name not in ("INCLUDE", "INC"):
            from statgrid.sas.macro.autocall import find
            mdef = find(self, name)
        return mdef

    def define(self, node: P.MacroDef) -> None:
        from statgrid.sas.macro.functions import FUNCTIONS
        if node.name in FUNCTIONS or node.name in P.STATEMENTS:
            self.error(f"Macro {node.name} has been given a reserved name.")
            return
        self.macros[node.name] = node

    def invoke(self, mdef: P.MacroDef, argtext: str | None, pos: int) -> Iterator[Piece]:
        if len(self.active) >= self.max_depth:
            self.fault(f"Macro {mdef.name} not run: macro calls are nested {self.max_depth} deep (statgrid's "
                       "limit; a macro that calls itself without end?).")
            return
        bound = self._bind(mdef, argtext)
        if bound is None:
            return
        if not self.active:
            self.call_line = self.line_at(pos)
        scope = self.symbols.push(mdef.name)
        scope.values.update(bound)
        self.active.append(mdef)
        try:
            self.mlogic("Beginning execution.")
            for pname, _ in mdef.params:
                self.mlogic(f"Parameter {pname} has value {unquote(bound.get(pname, ''))}")
            try:
                yield from self.run(mdef.body)
            except ReturnSignal:
                pass
            except GotoSignal as g:
                self.error(f"%GOTO label {g.label} was not found in macro {mdef.name}.")
                self.error(f"The macro {mdef.name} will stop executing.")
            except MacroStop:
                self.error(f"The macro {mdef.name} will stop executing.")
            else:
                self.mlogic("Ending execution.")
        finally:
            self.active.pop()
            self.symbols.pop()

    def _bind(self, mdef: P.MacroDef, argtext: str | None) -> dict[str, str] | None:
        """Parameter values of one call (None after an ERROR: the macro is not run)."""
        params = dict(mdef.params)
        positional = [p for p, d in mdef.params if d is None]
        given: dict[str, str] = {}
        raw_args = [] if argtext is None else split_args(argtext)
        if argtext is not None and len(raw_args) == 1 and not raw_args[0].strip() and not positional:
            raw_args = []
        k = 0
        for raw in raw_args:
            m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=", raw)
            if m and (m.group(1).upper() in params or not mdef.parmbuff):
                pname = m.group(1).upper()
                if pname not in params:
                    self.error(f"The keyword parameter {pname} was not defined with the macro.")
                    return None
                given[pname] = strip_blanks(self.resolve_str(raw[m.end():]))
                continue
            if k >= len(positional):
                if mdef.parmbuff:
                    continue
                self.error("More positional parameters found than defined.")
                return None
            given[positional[k]] = strip_blanks(self.resolve_str(raw))
            k += 1
        out: dict[str, str] = {}
        for pname, default in mdef.params:
            out[pname] = given[pname] if pname in given else (
                strip_blanks(self.resolve_str(default)) if default else "")
        if mdef.parmbuff:
            out["SYSPBUFF"] = "" if argtext is None else "(" + self.resolve_str(argtext) + ")"
        return out

    # ------------------------------------------------------------------ statements
    def run(self, nodes: list) -> Iterator[Piece]:
        i = 0
        while i < len(nodes):
            try:
                yield from self.exec(nodes[i])
            except GotoSignal as g:
                target = next((k for k, nd in enumerate(nodes) if isinstance(nd, P.Label) and nd.name == g.label),
                              None)
                if target is None:
                    raise
                i = target + 1
                continue
            i += 1

    def exec(self, node: Any) -> Iterator[Piece]:
        if isinstance(node, P.Text):
            yield from self.resolve(node.text, offset=node.pos)
        elif isinstance(node, P.Let):
            self.let(node)
        elif isinstance(node, P.Put):
            self.put_statement(node.text)
        elif isinstance(node, P.If):
            yield from self.if_(node)
        elif isinstance(node, P.Do):
            yield from self.do(node)
        elif isinstance(node, P.MacroDef):
            self.define(node)
        elif isinstance(node, P.Simple):
            self.simple(node)
        # P.Label: nothing to do

    def let(self, node: P.Let) -> None:
        name = unquote(self.resolve_str(node.name)).strip()
        if not name:
            self.fault("Expecting a variable name after %LET.")
            return
        if not _VARNAME_RE.match(name):
            self.fault(f"Symbolic variable name {name} must contain only letters, digits, and underscores.")
            return
        if len(name) > 32:
            self.fault(f"Symbolic variable name {name} must be 32 or fewer characters long.")
            return
        value = strip_blanks(self.resolve_str(node.value))
        self.mlogic(f"%LET (variable name is {name.upper()})")
        try:
            self.symbols.let(name, value)
        except ReadOnlyError:
            self.fault(f"Attempt to %LET automatic macro variable {name.upper()} which is read only.")
            return
        if name.upper() == "SYSCC" and value.strip().lstrip("-").isdigit():
            self.program.syscc = int(value)

    def put_statement(self, raw: str) -> None:
        self.mlogic(f"%PUT {raw}")
        key = raw.strip().upper()
        if key in ("_USER_", "_ALL_", "_AUTOMATIC_", "_GLOBAL_", "_LOCAL_"):
            for scope, name, value in self.symbols.listing(key):
                self.put(f"{scope} {name} {unquote(value)}")
            return
        raw = re.sub(r"&=([A-Za-z_][A-Za-z0-9_]*)", lambda m: f"{m.group(1).upper()}=&{m.group(1)}", raw)
        text = unquote(self.resolve_str(raw)).lstrip(" ").rstrip()
        m = re.match(r"(ERROR|WARNING|NOTE)-", text)
        if m:
            text = " " * len(m.group()) + text[len(m.group()):]
        self.put(text)

    def condition(self, text: str) -> bool:
        resolved = self.resolve_str(text)
        try:
            return eval_condition(resolved, *self._min())
        except EvalError as exc:
            self.fault(str(exc))
            return False

    def eval_int(self, text: str, what: str) -> int | None:
        resolved = self.resolve_str(text)
        try:
            v = eval_int(resolved, *self._min())
        except EvalError as exc:
            self.fault(str(exc))
            return None
        try:
            return int(v)
        except ValueError:
            self.fault(f"{what}")
            return None

    def _min(self) -> tuple[bool, str]:
        m = self.active[-1] if self.active else None
        on = m.minoperator if m is not None and m.minoperator is not None else bool(self.opt("MINOPERATOR"))
        d = (m.mindelimiter if m is not None and m.mindelimiter else None) or str(self.opt("MINDELIMITER", " ") or " ")
        return on, d

    def if_(self, node: P.If) -> Iterator[Piece]:
        ok = self.condition(node.cond)
        self.mlogic(f"%IF condition {node.cond.strip()} is {'TRUE' if ok else 'FALSE'}")
        branch = node.then if ok else node.else_
        if branch:
            yield from self.run(branch)

    def do(self, node: P.Do) -> Iterator[Piece]:
        if not node.kind:
            yield from self.run(node.body)
            return
        cap = self.max_iterations
        if node.kind in ("WHILE", "UNTIL"):
            count = 0
            while True:
                if node.kind == "WHILE":
                    ok = self.condition(node.cond)
                    self.mlogic(f"%DO %WHILE({node.cond.strip()}) condition is {'TRUE' if ok else 'FALSE'}; loop will "
                                f"{'' if ok else 'not '}iterate again.")
                    if not ok:
                        return
                count += 1
                if count > cap:
                    self._runaway()
                yield from self.run(node.body)
                if node.kind == "UNTIL":
                    ok = self.condition(node.cond)
                    self.mlogic(f"%DO %UNTIL({node.cond.strip()}) condition is {'TRUE' if ok else 'FALSE'}; loop will "
                                f"{'not ' if ok else ''}iterate again.")
                    if ok:
                        return
        var = unquote(self.resolve_str(node.var)).strip()
        if not _VARNAME_RE.match(var):
            self.fault(f"The %DO index variable name {var} is not valid.")
            return
        start = self.eval_int(node.start, f"The %FROM value of the %DO {var.upper()} loop is invalid.")
        stop = self.eval_int(node.stop, f"The %TO value of the %DO {var.upper()} loop is invalid.")
        by = (self.eval_int(node.by, f"The %BY value of the %DO {var.upper()} loop is invalid.")
              if node.by.strip() else 1)
        if start is None or stop is None or by is None:
            return
        if by == 0:
            self.fault(f"The %BY value of the %DO {var.upper()} loop is zero.")
            return
        self.mlogic(f"%DO loop beginning; index variable {var.upper()}; start value is {start}; stop value is "
                    f"{stop}; by value is {by}.")
        self.symbols.let(var, str(start))
        count = 0
        while True:
            cur_text = self.symbols.get(var) or ""
            try:
                cur = int(cur_text.strip())
            except ValueError:
                self.fault(f"The index variable {var.upper()} of the %DO loop has the value {cur_text}, which is not "
                           "an integer.")
                return
            if (by > 0 and cur > stop) or (by < 0 and cur < stop):
                return
            count += 1
            if count > cap:
                self._runaway()
            yield from self.run(node.body)
            try:
                nxt = int((self.symbols.get(var) or "").strip()) + by
            except ValueError:
                self.fault(f"The index variable {var.upper()} of the %DO loop is not an integer.")
                return
            self.symbols.let(var, str(nxt))
            will = (by > 0 and nxt <= stop) or (by < 0 and nxt >= stop)
            self.mlogic(f"%DO loop index variable {var.upper()} is now {nxt}; loop will "
                        f"{'' if will else 'not '}iterate again.")

    def _runaway(self) -> None:
        name = self.macro_name or "open code"
        self.fault(f"A %DO loop in {name} has run {self.max_iterations} times (statgrid's limit for one %DO loop); "
                   "the macro stops.")
        raise MacroStop("runaway %DO")

    def simple(self, node: P.Simple) -> None:
        kind = node.kind
        if kind in ("GLOBAL", "LOCAL", "SYMDEL"):
            body = unquote(self.resolve_str(node.text))
            body, _, opts = body.partition("/")
            names = body.split()
            self.mlogic(f"%{kind}  {' '.join(n.upper() for n in names)}")
            for name in names:
                if not _VARNAME_RE.match(name):
                    self.fault(f"Invalid symbolic variable name {name}.")
                    return
                if kind == "GLOBAL":
                    if any(name.upper() in s.values for s in self.symbols.locals):
                        self.fault(f"Attempt to %GLOBAL a name ({name.upper()}) which exists in a local environment.")
                        return
                    self.symbols.declare_global(name)
                elif kind == "LOCAL":
                    if not self.active:
                        self.fault("The %LOCAL statement is not valid in open code.")
                        return
                    self.symbols.declare_local(name)
                elif not self.symbols.delete(name) and "NOWARN" not in opts.upper():
                    self.warning(f"Attempt to delete macro variable {name.upper()} failed. Variable not found.")
        elif kind == "SYSMACDELETE":
            body, _, opts = unquote(self.resolve_str(node.text)).partition("/")
            for name in body.split():
                if self.macros.pop(name.upper(), None) is None and "NOWARN" not in opts.upper():
                    self.warning(f"Attempt to delete macro definition for {name.upper()} failed. Object not found.")
        elif kind == "GOTO":
            if not self.active:
                self.fault("The %GOTO statement is not valid in open code.")
                return
            label = unquote(self.resolve_str(node.text)).strip().lstrip("%").upper()
            self.mlogic(f"%GOTO {node.text.strip()} (label resolves to {label}).")
            raise GotoSignal(label)
        elif kind == "RETURN":
            if not self.active:
                self.fault("The %RETURN statement is not valid in open code.")
                return
            raise ReturnSignal()
        elif kind == "ABORT":
            words = unquote(self.resolve_str(node.text)).upper().split()
            code = int(words[1]) if len(words) > 1 and words[1].isdigit() else 1
            self.error(f"Execution terminated by an %ABORT statement{' ' + words[0] if words else ''}.")
            raise AbortProgram(code)
        elif kind == "SYSEXEC":
            try:
                from statgrid.sas.errors import SHELL_ESCAPE_REFUSED
                msg = SHELL_ESCAPE_REFUSED.format(what="%SYSEXEC")
            except (ImportError, AttributeError, KeyError):
                msg = "%SYSEXEC is not allowed: a statgrid job does not get a shell through a statement."
            self.fault(msg)
        elif kind == "SYSCALL":
            from statgrid.sas.macro.syscall import syscall
            syscall(self, node.text)
        elif kind in ("WINDOW", "DISPLAY"):
            from statgrid.sas.macro.syscall import no_window
            no_window(self, kind)
        else:
            self.fault(f"The %{kind} statement is not supported by statgrid.")


def _ref_end(text: str, i: int) -> int:
    """text[i] == '&': the end of the reference token starting there (`&x`, `&x.`, `&&v&i`); i when the
    ampersands are not followed by a name. After `&&`, the text the second scan reads with the name goes
    too: `&&&pre.1` → `&n` and `1` → `&n1`; `&&v&i.._x` → `&v1._x` (its period ends the name V1)."""
    n, j, end, rescanned = len(text), i, i, False
    while j < n and text[j] == "&":
        k = j
        while k < n and text[k] == "&":
            k += 1
        m = NAME_RE.match(text, k)
        if not m:
            break
        rescanned = rescanned or k - j > 1
        end = m.end()
        if end < n and text[end] == ".":
            end += 1
        if rescanned:
            end += 1 if end < n and text[end] == "." else 0
            while end < n and (text[end].isalnum() or text[end] == "_"):
                end += 1
        j = end
    return end
