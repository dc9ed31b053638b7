"""Review faults of the SAS front end's edges: a grid job's SAS invocation options reach the node's `statgrid
run` as one opaque word read by parse_invocation alone (no argv smuggling into statgrid's own options); -log
and -print never erase the program or the autoexec; -work exists; the autoexec is a bounded regular file;
-set names; SYSCC after a tokenizer ERROR; literals too large for a SAS number."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from statgrid.errors import UsageError
from statgrid.sas.errors import SasError, SasSyntaxError
from statgrid.sas.invocation import check_invocation_files, parse_invocation
from statgrid.sas.lexer import tokenize
from statgrid.sas.program import SAS_FILE_MAX_BYTES, read_sas_file, run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


# ---------------------------------------------------------------- 1: submit → node: one parser
def _through_run(argv: list[str], monkeypatch) -> dict:
    """`statgrid run`'s own parser over launch_argv's words (after `python -m statgrid`), in process: what
    it would hand run_job, and the --log-dir it would write to."""
    import statgrid.cli.session as cli_session
    import statgrid.session.jobs as jobs
    from statgrid.cli.app import app
    from statgrid.session.jobs import JobOutcome

    seen: dict = {}

    def fake_run_job(job, cfg, overrides, log, invocation=None, sas_text=None):
        seen.update(job=str(job), overrides=dict(overrides), invocation=invocation, text=sas_text)
        return JobOutcome(0, None, [], None)

    real_open_log = cli_session._open_log

    def open_log(ctx, directory, stem, **kw):
        seen["log_dir"] = str(directory) if directory else None
        return real_open_log(ctx, None, stem, **kw)

    monkeypatch.setattr(jobs, "run_job", fake_run_job)
    monkeypatch.setattr(cli_session, "_open_log", open_log)
    result = CliRunner().invoke(app, argv)
    seen["exit_code"], seen["output"] = result.exit_code, result.output
    return seen


def _submit_and_launch(tmp_path: Path, words: list[str], options: dict | None = None):
    from statgrid.config import load_config
    from statgrid.grid.master.jobspec import JobRequest, launch_argv, validate

    cfg = load_config()
    prog = tmp_path / "a.sas"
    prog.write_text("%put hello;\n")
    job = validate(JobRequest([str(prog), *words], str(tmp_path), options=dict(options or {})), cfg, 0.0)
    argv = launch_argv(job, cfg, tmp_path / "jobdir")
    assert argv[1:3] == ["-m", "statgrid"]
    return job, argv[3:]


@pytest.mark.parametrize("words", [
    ["-sysparm", "3", "-set", "B", "--option=memsize=1T", "-fullstimer"],
    ["-set", "B", "--log-dir", "-sysparm", "x"],
    ["-set", "B", "-o", "-sysparm", "--json"],
    ["-sysparm", "--", "-set", "C", "--sas-invocation"],
    ["-SYSPARM", "lower", "-Memsize", "1G"],
    ["-dsengine", "python", "-sysparm", "1"],
])
def test_launch_argv_is_read_back_by_run_as_submit_read_it(home, tmp_path, monkeypatch, words):
    (tmp_path / "jobdir").mkdir()
    job, argv = _submit_and_launch(tmp_path, words, {"threads": "2"})
    seen = _through_run(argv, monkeypatch)
    assert seen["exit_code"] == 0, seen["output"]
    assert seen["invocation"] == parse_invocation(words)        # the same Invocation as validate read
    assert seen["overrides"] == {"threads": "2"}               # the same statgrid options: nothing smuggled
    assert seen["log_dir"] == str(tmp_path / "jobdir")          # the job log stays in the job directory
    assert seen["job"] == job.argv[0]
    assert job.argv[1:] == words                                # the job record keeps the words as given


def test_smuggled_option_values_are_inert_env_values(home, tmp_path, monkeypatch):
    (tmp_path / "jobdir").mkdir()
    _, argv = _submit_and_launch(tmp_path, ["-set", "B", "--option=memsize=1T"])
    seen = _through_run(argv, monkeypatch)
    assert seen["invocation"].env == {"B": "--option=memsize=1T"}
    assert "memsize" not in seen["overrides"] and seen["invocation"].session_options == {}


def test_run_takes_sas_words_after_double_dash_through_parse_invocation(home, tmp_path, monkeypatch):
    prog = tmp_path / "a.sas"
    prog.write_text("%put hi;\n")
    seen = _through_run(["run", str(prog), "-sysparm", "3", "--", "-set", "B", "--log-dir", "-fullstimer"],
                        monkeypatch)
    assert seen["exit_code"] == 0, seen["output"]
    assert seen["invocation"].env == {"B": "--log-dir"} and seen["log_dir"] is None
    assert seen["invocation"].system == {"SYSPARM": "3", "FULLSTIMER": None}
    assert seen["text"] == "%put hi;\n"
    # -set NAME VALUE as the command's own options still works, its VALUE after `--` when it starts with '-'
    seen = _through_run(["run", str(prog), "-set", "A", "--", "-1"], monkeypatch)
    assert seen["invocation"].env == {"A": "-1"}
    bad = _through_run(["run", str(prog), "--sas-invocation", "{}"], monkeypatch)
    assert bad["exit_code"] == 2 and "not a JSON list of strings" in bad["output"]


def test_dsengine_is_an_invocation_option_of_run(home, tmp_path):
    """`statgrid run prog.sas -dsengine ENGINE` sets the DSENGINE system option, as an OPTIONS statement
    would; a value that is no engine is refused before anything runs, naming it."""
    from statgrid.cli.app import app

    prog = tmp_path / "a.sas"
    prog.write_text("data _null_; e = getoption('dsengine'); put 'engine=' e; run;\n")
    for engine in ("python", "SQL"):
        result = CliRunner().invoke(app, ["run", str(prog), "-dsengine", engine])
        assert result.exit_code == 0, result.output
        assert f"engine={engine.upper()}" in result.output
    bad = CliRunner().invoke(app, ["run", str(prog), "-dsengine", "fast"])
    assert bad.exit_code != 0 and "fast" in bad.output and "DSENGINE" in bad.output
    assert "engine=" not in bad.output


# ---------------------------------------------------------------- 5, 8: -set names; statgrid's options
@pytest.mark.parametrize("name", ["A=B", "", "1X", "A B", "-x"])
def test_set_name_must_be_a_sas_name(home, tmp_path, name):
    with pytest.raises(SasError, match="the name of an environment variable is a letter or '_'"):
        parse_invocation(["-set", name, "x"])
    with pytest.raises(UsageError, match="-set"):
        _submit_and_launch(tmp_path, ["-set", name, "x"])


def test_statgrid_option_after_the_job_file_says_where_it_goes(home, tmp_path):
    with pytest.raises(UsageError) as exc:
        _submit_and_launch(tmp_path, ["-sysparm", "3", "-o", "memsize=1G"])
    assert "statgrid's own options (-o KEY=VALUE, -q, -J, --log-dir …) go before the job file" in str(exc.value)


# ---------------------------------------------------------------- 2: -log/-print, -work
def test_log_or_print_naming_the_program_or_autoexec_or_each_other_is_refused(tmp_path):
    prog, auto = tmp_path / "p.sas", tmp_path / "auto.sas"
    prog.write_text("x;")
    auto.write_text("y;")
    os.symlink(prog, tmp_path / "link.sas")
    cases = [(["-log", str(prog)], "is the program"), (["-print", str(tmp_path / "link.sas")], "is the program"),
             (["-autoexec", str(auto), "-print", str(auto)], "is the autoexec"),
             (["-log", str(tmp_path / "o.txt"), "-print", str(tmp_path / "sub" / ".." / "o.txt")],
              "-log and -print name the same file"),
             (["-work", str(tmp_path / "nowork")], "-work"), (["-utilloc", str(prog)], "-utilloc"),
             (["-autoexec", str(tmp_path / "none.sas")], "does not exist"),
             (["-autoexec", "/dev/zero"], "is not a regular file"),
             (["-log", str(tmp_path / "nodir" / "x.log")], "does not exist")]
    (tmp_path / "sub").mkdir()
    for words, text in cases:
        with pytest.raises(SasError, match=text):
            check_invocation_files(parse_invocation(words), prog)
    with pytest.raises(SasError, match="is the autoexec"):         # grid.toml's autoexec too
        check_invocation_files(parse_invocation(["-log", str(auto)]), prog, str(auto))
    check_invocation_files(parse_invocation(["-log", "/dev/null", "-print", "/dev/null", "-work", str(tmp_path)]),
                           prog)
    assert prog.read_text() == "x;" and auto.read_text() == "y;"


def test_submit_checks_the_invocation_files_as_the_user(home, tmp_path):
    with pytest.raises(UsageError, match="-work .* is not an existing directory"):
        _submit_and_launch(tmp_path, ["-work", "nosuchdir"])
    with pytest.raises(UsageError, match="is the program"):
        _submit_and_launch(tmp_path, ["-log", "a.sas"])           # relative to the job's directory
    with pytest.raises(UsageError, match="not a regular file"):
        _submit_and_launch(tmp_path, ["-autoexec", "/dev/zero"])


# ---------------------------------------------------------------- 4: the autoexec is a bounded regular file
def test_read_sas_file_refuses_devices_fifos_and_huge_files(tmp_path):
    with pytest.raises(SasError, match="'/dev/zero' is not a regular file"):
        read_sas_file("/dev/zero", "The autoexec file")
    fifo = tmp_path / "fifo.sas"
    os.mkfifo(fifo)
    with pytest.raises(SasError, match="is not a regular file"):
        read_sas_file(fifo)                                      # without a writer: no wait
    big = tmp_path / "big.sas"
    with open(big, "wb") as f:
        f.truncate(SAS_FILE_MAX_BYTES + 1)
    with pytest.raises(SasError, match="over the limit of 16,777,216 bytes"):
        read_sas_file(big)
    ok = tmp_path / "ok.sas"
    ok.write_text("%put é;\n")
    assert read_sas_file(ok) == "%put é;\n"


def test_an_autoexec_that_is_a_device_is_an_error_in_the_log(session):
    text_io = io.StringIO()
    log = SasLog(SessionLog(text=text_io, jsonl=io.StringIO(), listing=io.StringIO()))
    inv = parse_invocation([])
    inv.autoexec = "/dev/zero"                    # past the invocation checks (a direct API call)
    code = run_program("%put hi;", session, log, inv, data_step=lambda s, p: None, procs={})
    out = text_io.getvalue()
    assert code == 1 and "The autoexec file '/dev/zero' is not a regular file" in out, out
    assert "SYSCC=1012" in out


# ---------------------------------------------------------------- 7, 9: SYSCC after a tokenizer ERROR; big literals
@pytest.mark.parametrize("literal", ["0" + "F" * 300 + "x", "1e400", "9" * 400])
def test_a_literal_too_large_is_a_syntax_error_naming_it(literal):
    with pytest.raises(SasSyntaxError) as exc:
        tokenize(f"x = {literal};")
    message = str(exc.value)
    assert "is too large for a SAS number" in message and literal[:20] in message
    assert "1.797693134862316E308, the largest number SAS accepts" in message
    assert tokenize("x = 1.7976931348623157e308;")[2].value == 1.7976931348623157e308
    assert tokenize("x = 0" + "F" * 255 + "x;")[2].value > 1e307


def test_syscc_is_set_after_a_tokenizer_error(session):
    text_io = io.StringIO()
    log = SasLog(SessionLog(text=text_io, jsonl=io.StringIO(), listing=io.StringIO()))
    code = run_program("%put start;\nx = 0" + "F" * 300 + "x;\n", session, log, data_step=lambda s, p: None,
                       procs={})
    out = text_io.getvalue()
    assert code == 1 and "too large for a SAS number" in out, out
    assert "SYSCC=1012" in out
