"""The harness the macro tests share (imported by the other test_sas_macro_* files) and its own checks:
a program run through MacroProcessor with the real SasLog/SasOptions writing to a string, the log's
lines and the statements returned. Expected values come from SAS 9.4 Macro Language Reference examples."""
from __future__ import annotations

import io
from types import SimpleNamespace

from statgrid.sas.context import ProgramState
from statgrid.sas.macro.processor import MacroProcessor
from statgrid.sas.options import SasOptions
from statgrid.sas.saslog import SasLog


class Run:
    """One program's run: .stmts (Statement list), .texts (their texts), .log (log lines), .program."""

    def __init__(self, text: str, options: tuple[str, ...] = (), echo: bool = False, lookup=None,
                 on_statement=None, filerefs=None):
        self.out = SimpleNamespace(text=io.StringIO())
        opts = SasOptions()
        opts.set("LINESIZE", "256")           # no wrapping: one message, one line
        for o in options:
            name, _, value = o.partition("=")
            opts.set(name, value or None)
        self.log_obj = SasLog(self.out, opts)
        if echo:
            self.log_obj.set_source(text)
        self.program = ProgramState(session=None, log=self.log_obj, options=opts, symbols=None, formats=None)
        if filerefs:
            self.program.filerefs.update(filerefs)
        self.mp = MacroProcessor(self.program, lookup_function=lookup)
        self.stmts = []
        for st in self.mp.statements(text):
            self.stmts.append(st)
            if on_statement is not None:
                on_statement(st, self.program)
        if echo:
            self.log_obj.echo_rest()

    @property
    def texts(self) -> list[str]:
        return [s.text for s in self.stmts]

    @property
    def log(self) -> list[str]:
        text = self.out.text.getvalue()
        return text[:-1].split("\n") if text else []

    def sym(self, name: str) -> str | None:
        return self.program.symbols.get(name)


def run(text: str, *options: str, **kw) -> Run:
    return Run(text, options, **kw)


def test_plain_program_passes_through_with_lines():
    r = run("data a;\n  x = 1;\nrun;\nproc print data=a;\nrun;\n")
    assert r.texts == ["data a;", "x = 1;", "run;", "proc print data=a;", "run;"]
    assert [s.line for s in r.stmts] == [1, 2, 3, 4, 5]
    assert [s.tokens[0].col for s in r.stmts] == [1, 3, 1, 1, 1]
    assert all(not s.generated for s in r.stmts)
    assert r.log == []


def test_tokens_are_the_lexers_and_end_with_the_semicolon():
    r = run("%let ds = work.a;\nproc print data=&ds;\n")
    (st,) = r.stmts
    assert [t.text for t in st.tokens] == ["proc", "print", "data", "=", "work", ".", "a", ";"]
    assert st.tokens[-1].kind == "SEMI" and st.line == 2 and st.keyword == "PROC"
