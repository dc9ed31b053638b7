"""SAS programs as grid jobs (issue 26): `statgrid submit prog.sas -sysparm 3 -fullstimer` through the real CLI
on a real grid, as another real OS user. The SAS log lands in the job's directory as session.log, visible to
its owner only (another user is refused by `peek` and by the file system); a failing program ends EXIT with
exit code 1; WORK is removed. Also `statgrid run prog.sas` in-process through the CLI: exit 1 when a step
failed. The programs use only what the driver itself runs (global statements, an unknown PROC), so the test
does not depend on the DATA step or the procedures.
"""
from __future__ import annotations

import textwrap

import pytest

from tests.conftest import run_cli
from tests.grid.test_multiuser_grid import made_people, shared_grid
from tests.support.multiuser import run_as, site_install, write_as

__all__ = ["site_install"]   # a fixture, used by name

GOOD = textwrap.dedent("""\
    options nocenter;
    title 'Quarterly';
    libname mine '{home}';
    libname mine list;
    run;
    """)
BAD = textwrap.dedent("""\
    proc nosuch data=a;
    run;
    title 'after the error';
    """)


@pytest.fixture(scope="module")
def people():
    with made_people(("alice", "bob", "carol")) as made:     # carol: the grid's administrator
        yield made


@pytest.fixture(scope="module")
def grid(site_install, people):
    with shared_grid(site_install, people, prefix="sgsas-") as g:
        yield g


@pytest.mark.root
def test_a_sas_job_runs_as_its_user_and_its_log_is_hers_alone(grid, people):
    alice, bob = people["alice"], people["bob"]
    prog = write_as(alice, alice.home / "good.sas", GOOD.format(home=alice.home))
    job_id = grid.submit("alice", str(prog), "-sysparm", "3", "-fullstimer")
    rec = grid.wait("alice", job_id)
    log_path = grid.home / "jobs" / str(job_id) / "session.log"
    log = log_path.read_text()                        # read here as root
    assert rec["state"] == "DONE", (rec, log)
    assert rec["argv"][1:] == ["-sysparm", "3", "-fullstimer"]
    assert "1          options nocenter;" in log
    assert f"NOTE: Libref=   MINE" in log and f"Physical Name= {alice.home}" in log
    assert "NOTE: The SAS System used:" in log and "      user cpu time" in log       # -fullstimer
    assert log_path.stat().st_uid == alice.uid
    peek = grid.cli("alice", "peek", str(job_id))
    assert peek.returncode == 0 and "options nocenter" in peek.stdout, peek
    # bob sees neither the log nor the output
    refused = grid.cli("bob", "peek", str(job_id))
    assert refused.returncode == 1 and f"belongs to {alice.name!r}" in refused.stderr, refused
    read = run_as(bob, ["cat", str(log_path)])
    assert read.returncode != 0 and "Permission denied" in read.stderr
    assert list((grid.root / "work").iterdir()) == []     # WORK went with the session


@pytest.mark.root
def test_a_failing_sas_job_ends_exit_1(grid, people):
    alice = people["alice"]
    prog = write_as(alice, alice.home / "bad.sas", BAD)
    job_id = grid.submit("alice", str(prog))
    rec = grid.wait("alice", job_id)
    log = (grid.home / "jobs" / str(job_id) / "session.log").read_text()
    assert rec["state"] == "EXIT" and rec["exit_code"] == 1, (rec, log)
    assert "ERROR: Procedure NOSUCH not found" in log
    assert "NOTE: SAS set option OBS=0 and will continue to check statements." in log
    assert list((grid.root / "work").iterdir()) == []


@pytest.mark.root
def test_a_bad_invocation_option_is_refused_at_submit(grid, people):
    alice = people["alice"]
    prog = write_as(alice, alice.home / "opt.sas", GOOD.format(home=alice.home))
    done = grid.cli("alice", "submit", str(prog), "-nosuch", "1")
    assert done.returncode == 2 and "'-nosuch' is not a SAS invocation option" in done.stderr, done


def test_statgrid_run_exit_codes(home, tmp_path):
    good = tmp_path / "good.sas"
    good.write_text(GOOD.format(home=tmp_path))
    bad = tmp_path / "bad.sas"
    bad.write_text(BAD)
    r = run_cli("run", str(good), "-sysparm", "x", "-set", "SG_NAME", "v", "--log-dir", str(tmp_path / "logs"))
    assert r.returncode == 0, r.stderr
    assert "1          options nocenter;" in (tmp_path / "logs" / "session.log").read_text()
    r = run_cli("run", str(bad), "-log", str(tmp_path / "bad.log"))
    assert r.returncode == 1
    assert "ERROR: Procedure NOSUCH not found" in (tmp_path / "bad.log").read_text()
    r = run_cli("run", str(good), "-set", "ONLYNAME")
    assert r.returncode == 2 and "-set takes a name and a value" in r.stderr


@pytest.mark.root
def test_sas_words_that_look_like_statgrid_options_stay_sas_words(grid, people):
    """Review fault: -set NAME VALUE's VALUE went to the node's `statgrid run` as a word click read as its own
    option (--log-dir moved the log out of the job directory, --option=memsize=1T changed the session).
    They now travel as one opaque word read by the SAS parser alone: an environment variable's value."""
    alice = people["alice"]
    prog = write_as(alice, alice.home / "env.sas", "%put V=%sysget(SGV) W=%sysget(SGW);\n")
    job_id = grid.submit("alice", str(prog), "-set", "SGV", "--log-dir", "-set", "SGW", "--option=memsize=1T",
                         "-sysparm", "x")
    rec = grid.wait("alice", job_id)
    log = (grid.home / "jobs" / str(job_id) / "session.log").read_text()
    assert rec["state"] == "DONE", (rec, log)
    assert "V=--log-dir W=--option=memsize=1T" in log
    bad = grid.cli("alice", "submit", str(prog), "-set", "A=B", "x")
    assert bad.returncode == 2 and "the name of an environment variable" in bad.stderr, bad


IO_PROG = textwrap.dedent("""\
    options mautosource sasautos=('{alice}/macros');
    %hello(x=1)
    proc printto print='{alice}/mine.lst' new; run;
    data a; x = 1; run;
    proc print data=a; run;
    proc printto; run;
    data _null_; file '{alice}/mine.txt'; put 'mine'; run;
    data _null_; file '{bob}/private/stolen.txt'; put 'stolen'; run;
    proc printto log='{bob}/private/stolen.log'; run;
    data _null_; infile '{bob}/private/secret.txt'; input; put _infile_; run;
    options sasautos=('{bob}/private');
    %secretmac
    %put after;
    """)


@pytest.mark.root
def test_a_sas_jobs_files_are_its_users_and_another_users_files_are_refused(grid, people):
    """PROC PRINTTO, FILE, INFILE and the autocall library as the job's user: what alice writes is hers; bob's
    private directory (0700) can be neither written (FILE, PRINTTO) nor read (INFILE, SASAUTOS) by her job —
    each a clear ERROR, the job goes on, and nothing appears in bob's directory."""
    import os
    alice, bob = people["alice"], people["bob"]
    macros = alice.home / "macros"
    macros.mkdir(exist_ok=True)
    os.chown(macros, alice.uid, alice.gid)
    write_as(alice, macros / "hello.sas", "%macro hello(x=); %put HELLO x=&x; %mend;\n")
    private = bob.home / "private"
    private.mkdir(exist_ok=True)
    os.chown(private, bob.uid, bob.gid)
    os.chmod(private, 0o700)
    write_as(bob, private / "secret.txt", "the secret\n", mode=0o600)
    write_as(bob, private / "secretmac.sas", "%macro secretmac; %put SECRET MACRO RAN; %mend;\n", mode=0o600)
    before = sorted(p.name for p in private.iterdir())
    prog = write_as(alice, alice.home / "io.sas", IO_PROG.format(alice=alice.home, bob=bob.home))
    job_id = grid.submit("alice", str(prog))
    rec = grid.wait("alice", job_id)
    log = (grid.home / "jobs" / str(job_id) / "session.log").read_text()
    assert rec["state"] == "EXIT" and rec["exit_code"] == 1, (rec, log)   # the refusals are ERRORs
    assert "HELLO x=1" in log                                               # her own autocall library
    lst, txt = alice.home / "mine.lst", alice.home / "mine.txt"
    assert "Obs    x" in lst.read_text() and lst.stat().st_uid == alice.uid
    assert txt.read_text() == "mine\n" and txt.stat().st_uid == alice.uid
    assert "the secret" not in log and "SECRET MACRO RAN" not in log
    assert f"ERROR: DATA: Insufficient authorization to access {bob.home}/private/stolen.txt." in log
    assert f"ERROR: DATA: Insufficient authorization to access {bob.home}/private/secret.txt." in log
    assert "WARNING: Apparent invocation of macro SECRETMAC not resolved." in log
    assert sorted(p.name for p in private.iterdir()) == before            # nothing written into bob's directory
    assert "after" in log                                                   # the job went on after each refusal
