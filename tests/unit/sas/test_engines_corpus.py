"""The SAS program corpus (test_sas_corpus.py) again with each DATA step engine forced: DSENGINE=NUMBA and
DSENGINE=SQL run every step that engine can take in it (whatever its size) and the rest in Python, and every
program must still meet its hand-written expectations. The option is set in the autoexec, on the line of
its LIBNAME, so that the program's own line numbers (in NOTEs the corpus checks) do not move.

The NUMBA run must take at least a few steps of the corpus (counted over the whole corpus; the count is
printed with -s). The SQL run covers only the programs that have a DATA step (the only steps an engine can
take), to keep the unit layer fast."""
from __future__ import annotations

import io
import re

import pytest

from tests.unit.sas.test_sas_corpus import (autoexec_text, check_run, corpus, invocation_args, params,
                                            setup_dirs)

_TAKEN: dict[str, dict[str, int]] = {"NUMBA": {}, "SQL": {}}


def run_engine(prog, spec, session, tmp_path, engine: str) -> list:
    from statgrid.sas.invocation import parse_invocation
    from statgrid.sas.program import _default_runners, run_program
    from statgrid.sas.saslog import SasLog
    from statgrid.session.log import SessionLog

    dirs = setup_dirs(tmp_path)
    auto = tmp_path / "autoexec.sas"
    lines = autoexec_text(spec, dirs).split("\n")
    lines[0] += f" options dsengine={engine};"
    auto.write_text("\n".join(lines))
    invocation = parse_invocation(invocation_args(spec, dirs, auto))
    data_step, _ = _default_runners()
    programs = []

    def runner(stmts, program):
        programs.append(program)
        return data_step(stmts, program)

    text_io, listing_io = io.StringIO(), io.StringIO()
    log = SasLog(SessionLog(text=text_io, jsonl=io.StringIO(), listing=listing_io))
    code = run_program(prog.read_text(), session, log, invocation, source="", data_step=runner)
    check_run(spec, dirs, code, text_io.getvalue(), listing_io.getvalue())
    return programs[0].extras.get("datastep_engines", []) if programs else []


@pytest.mark.parametrize("prog, spec", params())
def test_program_numba(prog, spec, session, tmp_path):
    engines = run_engine(prog, spec, session, tmp_path, "NUMBA")
    _TAKEN["NUMBA"][prog.stem] = [e for _, e in engines].count("NUMBA")


def test_numba_took_steps():
    """Runs after the NUMBA pass above (file order): the engine took a few steps of the corpus."""
    if len(_TAKEN["NUMBA"]) < len(corpus()):
        pytest.skip("only part of the corpus ran (a -k selection)")
    total = sum(_TAKEN["NUMBA"].values())
    print(f"\nDSENGINE=NUMBA took {total} DATA steps of the corpus, in "
          f"{sorted(k for k, n in _TAKEN['NUMBA'].items() if n)}")
    assert total >= 3


def _with_data_steps():
    return [c for c in corpus() if re.search(r"^\s*data\b", c[1].read_text(), re.I | re.M)]


@pytest.mark.parametrize("prog, spec", params(_with_data_steps()))
def test_program_sql(prog, spec, session, tmp_path):
    run_engine(prog, spec, session, tmp_path, "SQL")
