"""The SAS tests' shared pieces: a stand-in program for calling DATA step functions directly (unit tests of
the function registry: the attributes FunctionRuntime reads, and a log that keeps the NOTEs a function
writes); run_sas, a program run in a session with its log and listing captured (run_under_engine: with
DSENGINE= and the engines each DATA step chose); the rows of a data set; and the ERRORs a list of bad
programs must each give."""
from __future__ import annotations

import io

import pyarrow.parquet as pq

from statgrid.sas.datastep import run_data_step
from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


class Log:
    def __init__(self):
        self.notes = []

    def note(self, msg):
        self.notes.append(msg)


class Program:
    def __init__(self):
        self.log, self.extras, self.symbols, self.options, self.formats, self.session = Log(), {}, None, None, None, None
        self.filerefs = {}


def run_sas(session, text: str, invocation=None, **options) -> tuple[int, str, str]:
    """(exit code, log, listing) of SAS program `text` run in `session`; `options` go to run_program
    (source=, procs={}, header=False, data_step=…)."""
    out, lst = io.StringIO(), io.StringIO()
    log = SasLog(SessionLog(text=out, jsonl=io.StringIO(), listing=lst))
    code = run_program(text, session, log, invocation, **options)
    return code, out.getvalue(), lst.getvalue()


def run_under_engine(session, text: str, engine: str) -> tuple[int, str, list[str]]:
    """(exit code, log, engines used per DATA step) of `text` under DSENGINE=engine."""
    programs = []

    def data_step(stmts, program):
        programs.append(program)
        return run_data_step(stmts, program)
    code, log, _ = run_sas(session, f"options dsengine={engine};\n{text}", data_step=data_step, procs={},
                           header=False)
    engines = [e for p in programs[:1] for _, e in p.extras.get("datastep_engines", [])]
    return code, log, engines


def engines_agree(session, text: str, engine: str, want: str, out: str, planner, log_lines):
    """Run `text` under PYTHON, then under `engine`; assert the output data sets agree (schema with its
    metadata, and rows), that `engine`'s run used `want` (planner.reason says why not) and that
    log_lines(log) of the two runs agree; return the output table (pyarrow) and the second run's log."""
    code_p, log_p, eng_p = run_under_engine(session, text, "PYTHON")
    assert code_p == 0, log_p
    path = session.ref(out).path
    table_p, schema_p = pq.read_table(path), pq.read_schema(path)
    path.unlink()
    code_s, log_s, eng_s = run_under_engine(session, text, engine)
    assert code_s == 0, log_s
    assert eng_p == ["PYTHON"] and eng_s == [want], (eng_s, planner.reason)
    table_s, schema_s = pq.read_table(path), pq.read_schema(path)
    assert schema_s.equals(schema_p, check_metadata=True), (schema_s, schema_p)
    assert table_s.equals(table_p), (table_s.to_pylist(), table_p.to_pylist())
    assert log_lines(log_s) == log_lines(log_p)
    return table_s, log_s


def rows(session, name: str) -> list[dict]:
    """The rows of data set `name` (libref.member) as dicts."""
    return session.fetch_arrow("SELECT * FROM " + session.ref(name).scan_sql()).to_pylist()


def work_frame(session, member: str):
    """WORK.member as a pandas data frame."""
    return session.execute(f"SELECT * FROM read_parquet('{session.dataset('work.' + member).path}')").df()


def assert_errors(run, session, cases) -> None:
    """Each (program, message) of `cases`, run by run(session, program), ends with exit code 1 and the
    message in its log."""
    for text, message in cases:
        code, log, *_ = run(session, text)
        assert code == 1 and message in log, log
