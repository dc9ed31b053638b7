"""One statement as the macro processor hands it to the parsers: its tokens (the SEMI last), the
resolved text, where it came from. Standard library only."""
from __future__ import annotations

from dataclasses import dataclass, field

from statgrid.sas.lexer import Token, tokenize, split_statements


@dataclass
class Statement:
    tokens: list[Token]                # ends with the SEMI (absent only for a last statement without one)
    text: str                          # the text after macro resolution, as the parsers see it
    line: int                          # line of the program (or %INCLUDEd file) where it starts
    source: str = ""                   # '' for the program itself, else the %INCLUDEd file's path
    generated: bool = False            # made by a macro (the log shows it as an MPRINT line)
    datalines: list[str] | None = field(default=None)   # DATALINES/CARDS: the raw lines that followed

    @property
    def keyword(self) -> str:
        """The first word, upper case ('' for an empty statement or one starting with a symbol)."""
        return self.tokens[0].upper if self.tokens and self.tokens[0].kind == "NAME" else ""


def statements_of(text: str, line: int = 1, source: str = "") -> list[Statement]:
    """Statements of macro-free text (tests, and parts that need no macro processor)."""
    out = []
    for toks in split_statements(tokenize(text, line, 1, source)):
        start, end = toks[0].pos, toks[-1].end
        out.append(Statement(toks, text[start:end], toks[0].line, source))
    return out
