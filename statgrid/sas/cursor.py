"""A cursor over tokens for the statement parsers (DATA step, PROCs, global statements): look ahead,
take what is expected or raise SasSyntaxError naming the line, column, the text found and what was
expected. Also the pieces every parser needs: dotted names (`work.a`, `first.id`), format names
(`date9.`, `$char10.`, `comma10.2`, `best.`), variable lists are the parsers' own. Standard library only.
"""
from __future__ import annotations

from statgrid.sas.errors import SasSyntaxError
from statgrid.sas.lexer import EOF, NAME, NUM, OP, SEMI, STR, Token


class TokenCursor:
    def __init__(self, tokens: list[Token], source: str = ""):
        if not tokens or tokens[-1].kind != EOF:
            last = tokens[-1] if tokens else None
            tokens = [*tokens, Token(EOF, "", last.line if last else 0, (last.col + len(last.text)) if last else 0,
                                     last.end if last else 0, last.end if last else 0)]
        self.tokens, self.i, self.source = tokens, 0, source

    # -- looking -----------------------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def at(self, *texts: str) -> bool:
        """The next token is a NAME/OP/SEMI with one of these texts (names case-blind)."""
        return self.peek().is_(*texts)

    def at_kind(self, kind: str) -> bool:
        return self.peek().kind == kind

    def at_end(self) -> bool:
        """At the statement's end (its SEMI) or past the last token."""
        return self.peek().kind in (SEMI, EOF)

    # -- taking ------------------------------------------------------------------------------------------
    def next(self) -> Token:
        t = self.peek()
        if t.kind != EOF:
            self.i += 1
        return t

    def accept(self, *texts: str) -> Token | None:
        if self.at(*texts):
            return self.next()
        return None

    def expect(self, *texts: str, expected: str = "") -> Token:
        if self.at(*texts):
            return self.next()
        raise self.error("Syntax error", expected or " or ".join(texts))

    def expect_kind(self, kind: str, expected: str) -> Token:
        if self.peek().kind == kind:
            return self.next()
        raise self.error("Syntax error", expected)

    def expect_name(self, expected: str = "a name") -> str:
        return self.expect_kind(NAME, expected).text

    def expect_end(self, statement: str = "") -> None:
        """The statement must end here (a SEMI or the end)."""
        if not self.at_end():
            what = f"the {statement} statement" if statement else "the statement"
            raise self.error(f"Syntax error in {what}", ";")
        if self.peek().kind == SEMI:
            self.next()

    def error(self, message: str, expected: str = "", token: Token | None = None) -> SasSyntaxError:
        t = token or self.peek()
        found = t.text if t.kind != EOF else "end of statement"
        return SasSyntaxError(message, t.line, t.col, found, expected, self.source)

    # -- shared pieces -----------------------------------------------------------------------------------
    def dotted_name(self, expected: str = "a name") -> str:
        """`a`, `work.a`, `first.id`: NAME ('.' NAME)* with no space between."""
        t = self.expect_kind(NAME, expected)
        parts = [t.text]
        while (self.peek().is_(".") and t.touches(self.peek()) and self.peek(1).kind == NAME
               and self.peek().touches(self.peek(1))):
            self.next()
            t = self.next()
            parts.append(t.text)
        return ".".join(parts)

    def at_format(self) -> bool:
        """The next tokens spell a format or informat name: `$`? NAME? digits? '.' digits?, ending in a dot
        (`date9.`, `$10.`, `$char20.`, `best.`, `comma10.2`, `8.2`)."""
        return self._format_end() is not None

    def format_name(self, expected: str = "a format such as 8.2 or date9.") -> str:
        """Take a format/informat name and return it as written, upper-cased (`$CHAR10.`, `COMMA10.2`)."""
        end = self._format_end()
        if end is None:
            raise self.error("Syntax error", expected)
        text = "".join(t.text for t in self.tokens[self.i:end])
        self.i = end
        return text.upper()

    def _format_end(self) -> int | None:
        i, toks = self.i, self.tokens
        start = i
        if toks[i].is_("$"):
            i += 1
        # NAME or NUM pieces, all touching, with a dot among them: `date9` `.`, `comma10` `.2`, `8.2`, `10.`
        seen_dot = False
        while i < len(toks) and toks[i].kind in (NAME, NUM, OP) and (i == start or toks[i - 1].touches(toks[i])):
            t = toks[i]
            if t.kind == OP and t.text != ".":
                break
            if t.kind == OP or (t.kind == NUM and "." in t.text):
                if seen_dot:
                    break
                seen_dot = True
                # a NUM like `.2` after the dot is the decimals; a NUM `10.` carries its dot
                if t.kind == OP and i + 1 < len(toks) and toks[i + 1].kind == NUM and t.touches(toks[i + 1]) \
                        and "." not in toks[i + 1].text and "e" not in toks[i + 1].text.lower():
                    i += 1
                i += 1
                break
            i += 1
        if not seen_dot or i == start:
            return None
        first = toks[start + 1] if toks[start].is_("$") else toks[start]
        if first.kind == OP and first.text != ".":
            return None
        return i

    def rest_text(self) -> str:
        """The text of the tokens left in this statement, as written (for messages and pass-through)."""
        j = self.i
        while self.tokens[j].kind not in (SEMI, EOF):
            j += 1
        return " ".join(t.text for t in self.tokens[self.i:j])


__all__ = ["TokenCursor", "NAME", "NUM", "STR", "OP", "SEMI", "EOF"]
