"""Corpus programs through the real command line: `python -m statgrid run prog.sas --log-dir D` with SAS's
invocation options (-autoexec, -set NAME VALUE, -sysparm) after the program, as a user runs them. The same
expectation files as test_sas_corpus.py, read from D/session.log and D/session.lst; plus what only the CLI
shows: the exit code of the process, WORK removed at the end, a bad invocation option refused before
anything runs. A few programs only (each is a new process)."""
from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli, scratch_dirs
from tests.unit.sas.test_sas_corpus import PROGRAMS, autoexec_text, check_run, invocation_args, params, setup_dirs

CLI_PROGRAMS = ["global_only", "macro_sysfunc", "data_by_first_last", "err_syntax_check_mode", "proc_means_summary",
                "proc_sql", "proc_freq", "proc_sql_view"]


def cli_cases():
    cases = []
    for name in CLI_PROGRAMS:
        prog = PROGRAMS / f"{name}.sas"
        cases.append((name, prog, json.loads(prog.with_suffix(".expect.json").read_text())))
    return cases


def run_sas(prog, spec, tmp_path, extra=()):
    dirs = setup_dirs(tmp_path)
    auto = tmp_path / "autoexec.sas"
    auto.write_text(autoexec_text(spec, dirs))
    logs = tmp_path / "logs"
    r = run_cli("run", str(prog), "--log-dir", str(logs), *invocation_args(spec, dirs, auto), *extra, cwd=tmp_path)
    return r, dirs, logs


@pytest.mark.parametrize("prog, spec", params(cli_cases()))
def test_program_through_the_cli(prog, spec, home, tmp_path):
    r, dirs, logs = run_sas(prog, spec, tmp_path)
    log = (logs / "session.log").read_text()
    listing = (logs / "session.lst").read_text()
    assert log.strip(), f"no log written; stderr:\n{r.stderr}"
    check_run(spec, dirs, r.returncode, log, listing)
    assert scratch_dirs(home) == [], "WORK/UTIL left behind after the run"


def test_a_bad_invocation_option_is_refused_before_the_program_runs(home, tmp_path):
    prog = tmp_path / "p.sas"
    prog.write_text("libname out list;\n")
    r = run_cli("run", str(prog), "-memsize", "lots", cwd=tmp_path)
    assert r.returncode != 0
    assert "MEMSIZE" in (r.stderr + r.stdout).upper()
    assert "Libref=" not in r.stderr + r.stdout


def test_the_log_echoes_the_program_with_line_numbers(home, tmp_path):
    prog = PROGRAMS / "global_only.sas"
    spec = json.loads(prog.with_suffix(".expect.json").read_text())
    r, _, logs = run_sas(prog, spec, tmp_path)
    log = (logs / "session.log").read_text()
    lines = prog.read_text().splitlines()
    # every line up to ENDSAS (line 7) is echoed with its number; nothing after it
    for number, text in enumerate(lines[:7], start=1):
        assert f"{number:<11}{text}".rstrip() in log, f"line {number} not echoed:\n{log}"
    assert lines[7] not in log
