"""The macro compiler: macro text (a %MACRO's body, or a macro statement in open code) → nodes.

Text stays text (resolved when executed: `&x`, `%f(…)`, `%m(…)` inside it are seen then); macro
statements become nodes: %LET %PUT %GLOBAL %LOCAL %SYMDEL %SYSMACDELETE %IF/%THEN/%ELSE, %DO (plain,
iterative %TO/%BY, %WHILE, %UNTIL) … %END, %GOTO and %label:, %RETURN, %ABORT, nested %MACRO … %MEND.
Comments `/* */` and `%* …;` are dropped from compiled macro text, as SAS stores none of them
(Macro Language Reference, "Macro Comment Statement", "How the Macro Processor Compiles a Macro
Definition"); `* …;` comments are text. Errors (MacroSyntaxError) carry the offset at fault.
Standard library only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from statgrid.sas.macro.scanner import (comment_end, is_name_start, name_at, paren_end, past_quoted, semicolon_end,
                                         top_level, skip_space, skip_space_comments, split_args, string_end)

STATEMENTS = frozenset({"LET", "PUT", "GLOBAL", "LOCAL", "IF", "DO", "GOTO", "GO", "RETURN", "ABORT", "MACRO",
                        "SYMDEL", "SYSMACDELETE", "SYSEXEC", "SYSCALL", "SYSLPUT", "SYSRPUT", "WINDOW",
                        "DISPLAY", "INPUT", "COPY", "MEND", "END", "ELSE", "THEN", "TO", "BY", "WHILE", "UNTIL"})
ENDERS = frozenset({"MEND", "END", "ELSE", "THEN", "TO", "BY", "WHILE", "UNTIL"})


class MacroSyntaxError(Exception):
    def __init__(self, message: str, pos: int, text: str = "", expected: str = ""):
        super().__init__(message)
        self.message, self.pos, self.text, self.expected = message, pos, text, expected


@dataclass
class Node:
    pos: int


@dataclass
class Text(Node):
    text: str


@dataclass
class Let(Node):
    name: str
    value: str


@dataclass
class Put(Node):
    text: str


@dataclass
class Simple(Node):
    """%GLOBAL, %LOCAL, %SYMDEL, %SYSMACDELETE, %GOTO, %RETURN, %ABORT, %SYSEXEC … (kind) with its text."""
    kind: str
    text: str


@dataclass
class Label(Node):
    name: str


@dataclass
class If(Node):
    cond: str
    then: list
    else_: list | None


@dataclass
class Do(Node):
    body: list
    var: str = ""                # iterative: %DO var = start %TO stop %BY by
    start: str = ""
    stop: str = ""
    by: str = ""
    cond: str = ""               # %DO %WHILE / %UNTIL
    kind: str = ""               # '', 'ITER', 'WHILE', 'UNTIL'


@dataclass
class MacroDef(Node):
    name: str
    params: list[tuple[str, str | None]]          # (NAME, default text or None for a positional one)
    options: str
    body: list = field(default_factory=list)
    source: str = ""
    line: int = 0

    @property
    def parmbuff(self) -> bool:
        return any(o in ("PARMBUFF", "PBUFF") for o in self.options.upper().replace("=", " ").split())

    @property
    def minoperator(self) -> bool | None:
        words = self.options.upper().split()
        return True if "MINOPERATOR" in words else False if "NOMINOPERATOR" in words else None

    @property
    def mindelimiter(self) -> str | None:
        up = self.options.upper()
        k = up.find("MINDELIMITER")
        if k < 0:
            return None
        rest = self.options[k + len("MINDELIMITER"):].lstrip(" =")
        return rest[1] if len(rest) >= 3 and rest[0] in "'\"" else None


class Parser:
    """Parses `text` (the whole program or file, so offsets are the file's)."""

    def __init__(self, text: str, source: str = ""):
        self.text, self.source = text, source

    # ---------------------------------------------------------------- helpers
    def keyword_at(self, i: int) -> str:
        """text[i] == '%': the upper-case statement keyword there ('' if not a statement)."""
        t = self.text
        if i + 1 < len(t) and t[i + 1] == "*":
            return "*"
        name = name_at(t, i + 1).upper()
        if name in STATEMENTS:
            return name
        if name:
            j = skip_space(t, i + 1 + len(name))
            if j < len(t) and t[j] == ":":
                return ":"                       # %label:
        return ""

    def expect_semi(self, i: int, what: str) -> int:
        j = skip_space_comments(self.text, i)
        if j < len(self.text) and self.text[j] == ";":
            return j + 1
        raise MacroSyntaxError(f"Expecting a semicolon after {what}.", j, self.text[j:j + 10], ";")

    # ---------------------------------------------------------------- blocks
    def block(self, i: int, enders: frozenset[str]) -> tuple[list, int, str]:
        """Nodes from i up to one of `enders` (whose offset is returned with it; '' at the end of text)."""
        nodes: list = []
        n = len(self.text)
        while True:
            j, kw = self.text_end(i)
            if j > i:
                chunk = self._clean(i, j)
                if chunk:
                    nodes.append(Text(i, chunk))
            if j >= n:
                return nodes, n, ""
            if kw in enders:
                return nodes, j, kw
            if kw in ENDERS:
                what = {"MEND": "%MEND statement", "END": "%END statement", "ELSE": "%ELSE statement"}.get(
                    kw, f"%{kw} clause")
                msg = {"END": "There is no matching %DO statement for the %END. This statement will be ignored.",
                       "ELSE": "There is no matching %IF statement for the %ELSE.",
                       "MEND": "There is no matching %MACRO statement for the %MEND."}.get(
                    kw, f"The {what} is not valid here.")
                raise MacroSyntaxError(msg, j, "%" + kw)
            node, i = self.statement(j)
            if node is not None:
                nodes.append(node)

    def text_end(self, i: int) -> tuple[int, str]:
        """From i, where the text before the next macro statement ends, and that statement's keyword."""
        t, n, j = self.text, len(self.text), i
        while j < n:
            c = t[j]
            k = past_quoted(t, j)
            if k != j:
                j = k
            elif c == "%" and j + 1 < n and (is_name_start(t[j + 1]) or t[j + 1] == "*"):
                kw = self.keyword_at(j)
                if kw:
                    return j, kw
                name = name_at(t, j + 1)
                k = skip_space(t, j + 1 + len(name))
                if k < n and t[k] == "(" and name.upper() not in ("INCLUDE", "INC"):
                    e = paren_end(t, k)
                    j = e if e > 0 else k + 1
                else:
                    j += 1 + len(name)
            else:
                j += 1
        return n, ""

    def _clean(self, i: int, j: int) -> str:
        """Text i..j with /* */ comments dropped (each leaves one blank)."""
        t, out, k = self.text, [], i
        while k < j:
            c = t[k]
            if c in "'\"":
                e = string_end(t, k)
                e = k + 1 if e < 0 or e > j else e
                out.append(t[k:e])
                k = e
            elif c == "/" and t.startswith("/*", k):
                out.append(" ")
                k = min(comment_end(t, k), j)
            else:
                out.append(c)
                k += 1
        return "".join(out)

    # ---------------------------------------------------------------- statements
    def statement(self, i: int) -> tuple[object, int]:
        """The macro statement at text[i] == '%' → (node or None for a comment, offset after it)."""
        t = self.text
        kw = self.keyword_at(i)
        if kw == "*":
            return None, semicolon_end(t, i)              # %* comment;
        if kw == ":":
            name = name_at(t, i + 1)
            return Label(i, name.upper()), t.index(":", i) + 1
        k = i + 1 + len(kw)
        if kw == "LET":
            end = semicolon_end(t, k)
            body = t[k:end - 1] if t[end - 1:end] == ";" else t[k:end]
            eq = _top_equal(body)
            if eq < 0:
                raise MacroSyntaxError("Expecting an equal sign in the %LET statement.", k, body.strip()[:20], "=")
            return Let(i, body[:eq], body[eq + 1:]), end
        if kw == "PUT":
            end = semicolon_end(t, k)
            body = t[k:end - 1] if t[end - 1:end] == ";" else t[k:end]
            if body[:1] in " \t":
                body = body[1:]                      # the blank after %PUT separates, it is not text
            return Put(i, body), end
        if kw in ("GLOBAL", "LOCAL", "SYMDEL", "SYSMACDELETE", "RETURN", "ABORT", "SYSEXEC", "SYSCALL",
                  "SYSLPUT", "SYSRPUT", "WINDOW", "DISPLAY", "INPUT", "COPY", "GOTO", "GO"):
            end = semicolon_end(t, k)
            body = t[k:end - 1] if t[end - 1:end] == ";" else t[k:end]
            if kw == "GO":
                b = body.lstrip()
                if not b.upper().startswith("TO"):
                    raise MacroSyntaxError("Expecting TO after %GO.", k, b[:10], "%GO TO label")
                kw, body = "GOTO", b[2:]
            return Simple(i, kw, body), end
        if kw == "IF":
            return self.if_(i, k)
        if kw == "DO":
            return self.do(i, k)
        if kw == "MACRO":
            return self.macro(i, k)
        raise MacroSyntaxError(f"The %{kw} statement is not valid here.", i, "%" + kw)

    def action(self, i: int) -> tuple[list, int]:
        """What follows %THEN or %ELSE: a %DO block, one macro statement, or text up to its ';'."""
        t = self.text
        j = skip_space_comments(t, i)
        if t.startswith("%", j) and self.keyword_at(j) == "DO":
            k = skip_space_comments(t, j + 3)
            if k < len(t) and t[k] == ";":
                nodes, e, kw = self.block(k + 1, frozenset({"END"}))
                if kw != "END":
                    raise MacroSyntaxError("There were unclosed %DO statements. The macro will not be compiled.",
                                           j, "%DO", "%END")
                return nodes, self.after_end(e)
            node, e = self.statement(j)
            return [node], e
        if t.startswith("%", j) and self.keyword_at(j) not in ("", ":", "*"):
            kw = self.keyword_at(j)
            if kw in ENDERS:
                return [], j
            node, e = self.statement(j)
            return [node] if node is not None else [], e
        # text: to its ';' (included), or to a %ELSE first
        k, n = i, len(t)
        while k < n:
            e, kw = self.text_end(k)
            semi = _semicolon_in(t, k, e)
            if semi >= 0:
                return [Text(i, self._clean(i, semi + 1))], semi + 1
            if e >= n or kw in ENDERS or kw:
                if kw and kw not in ENDERS:
                    node, e2 = self.statement(e)          # text then a statement: both conditional
                    return [Text(i, self._clean(i, e)), *([node] if node is not None else [])], e2
                return [Text(i, self._clean(i, e))], e
            k = e
        return [Text(i, self._clean(i, n))], n

    def after_end(self, i: int) -> int:
        """i at '%END': the offset after it and its ';'."""
        j = skip_space_comments(self.text, i + 4)
        return j + 1 if self.text[j:j + 1] == ";" else i + 4

    def if_(self, i: int, k: int) -> tuple[If, int]:
        t, n, j = self.text, len(self.text), k
        while True:
            e, kw = self.text_end(j)
            if e >= n:
                raise MacroSyntaxError("Expected %THEN statement not found. A dummy macro will be compiled.",
                                       i, "%IF", "%THEN")
            if kw == "THEN":
                break
            j = e + 1
        cond = self._clean(k, e)
        then, after = self.action(e + 5)
        j = skip_space_comments(t, after)
        else_ = None
        if t.startswith("%", j) and self.keyword_at(j) == "ELSE":
            else_, after = self.action(j + 5)
        return If(i, cond, then, else_), after

    def do(self, i: int, k: int) -> tuple[Do, int]:
        t = self.text
        j = skip_space_comments(t, k)
        node = Do(i, [])
        if t[j:j + 1] == ";":
            head_end = j + 1
        elif t.startswith("%", j) and self.keyword_at(j) in ("WHILE", "UNTIL"):
            node.kind = self.keyword_at(j)
            p = skip_space(t, j + 1 + len(node.kind))
            e = paren_end(t, p) if t[p:p + 1] == "(" else -1
            if e < 0:
                raise MacroSyntaxError(f"Expecting ( after %{node.kind}.", p, t[p:p + 10], "(condition)")
            node.cond = t[p + 1:e - 1]
            head_end = self.expect_semi(e, f"%DO %{node.kind}(…)")
        else:
            node.kind = "ITER"
            end = semicolon_end(t, j)
            head = t[j:end - 1]
            var = name_at(head, skip_space(head, 0))
            rest = head[skip_space(head, 0) + len(var):].lstrip()
            if not var and "&" in head.split("=")[0]:
                var, rest = head.split("=", 1)[0].strip(), "=" + head.split("=", 1)[1]
            if not var or not rest.startswith("="):
                raise MacroSyntaxError("An equal sign or %WHILE or %UNTIL was expected in the %DO statement.",
                                       j, head.strip()[:20], "%DO var = start %TO stop;")
            up = rest.upper()
            to = _find_kw(up, "%TO")
            if to < 0:
                raise MacroSyntaxError("The %TO keyword was not found in the iterative %DO statement.", j,
                                       head.strip()[:20], "%TO")
            by = _find_kw(up, "%BY")
            node.var, node.start = var, rest[1:to]
            node.stop = rest[to + 3: by if by > to else len(rest)]
            node.by = rest[by + 3:] if by > to else ""
            head_end = end
        body, e, kw = self.block(head_end, frozenset({"END"}))
        if kw != "END":
            raise MacroSyntaxError("There were unclosed %DO statements. The macro will not be compiled.", i,
                                   "%DO", "%END")
        node.body = body
        return node, self.after_end(e)

    def macro(self, i: int, k: int) -> tuple[MacroDef, int]:
        t = self.text
        j = skip_space(t, k)
        name = name_at(t, j)
        if not name:
            raise MacroSyntaxError("Invalid macro name. It should be a valid SAS identifier no longer than 32 "
                                   "characters.", j, t[j:j + 10], "a macro name")
        if len(name) > 32:
            raise MacroSyntaxError(f"Invalid macro name {name}. It should be a valid SAS identifier no longer "
                                   "than 32 characters.", j, name)
        j = skip_space_comments(t, j + len(name))
        params: list[tuple[str, str | None]] = []
        if t[j:j + 1] == "(":
            e = paren_end(t, j)
            if e < 0:
                raise MacroSyntaxError("Expecting a ) to close the parameter list.", j, t[j:j + 10], ")")
            for raw in split_args(t[j + 1:e - 1]):
                if not raw.strip():
                    continue
                pname, eq, default = raw.partition("=")
                pname = pname.strip()
                if not name_at(pname, 0) or name_at(pname, 0) != pname:
                    raise MacroSyntaxError(f"Invalid macro parameter name {pname}. It should be a valid SAS "
                                           "identifier no longer than 32 characters.", j, pname)
                params.append((pname.upper(), default.strip() if eq else None))
            j = skip_space_comments(t, e)
        options = ""
        if t[j:j + 1] == "/":
            end = semicolon_end(t, j + 1)
            options, j = t[j + 1:end - 1], end
        else:
            j = self.expect_semi(j, f"%MACRO {name}")
        body, e, kw = self.block(j, frozenset({"MEND"}))
        if kw != "MEND":
            raise MacroSyntaxError(f"Macro {name.upper()} has no %MEND statement; the macro is not defined.",
                                   i, "%MACRO", "%MEND")
        end = semicolon_end(t, e + 5)
        return MacroDef(i, name.upper(), params, options, body, self.source), end


def _top_equal(text: str) -> int:
    """The first '=' outside parentheses and quotes (the %LET's), -1 if none."""
    return next((j for j, c, depth in top_level(text) if c == "=" and depth <= 0), -1)


def _semicolon_in(text: str, i: int, j: int) -> int:
    """The first ';' in text[i:j] outside quotes, comments and %call(...) arguments; -1 if none."""
    e = semicolon_end(text[:j], i)
    return e - 1 if e <= j and text[e - 1:e] == ";" else -1


def _find_kw(up: str, kw: str) -> int:
    """The offset of %TO / %BY (a whole word) in upper-case text, -1 if none."""
    k = 0
    while (k := up.find(kw, k)) >= 0:
        after = up[k + len(kw):k + len(kw) + 1]
        if not (after.isalnum() or after == "_"):
            return k
        k += 1
    return -1
