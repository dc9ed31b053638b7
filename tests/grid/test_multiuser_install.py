"""A site install serves every user (issue 15): statgrid in a venv under /opt made from the system's Python,
run by an ordinary account that can read it all and change none of it."""
from __future__ import annotations

import textwrap

import pytest

from tests.support.multiuser import REPO, SITE_ROOT, make_users, mkdir_as, run_as, site_install, users, write_as

__all__ = ["make_users", "site_install", "users"]   # fixtures, used by name


@pytest.mark.root
def test_another_user_runs_the_site_install(site_install, users):
    alice = users[0]
    helped = run_as(alice, ["statgrid", "--help"])
    assert helped.returncode == 0, helped.stderr
    assert "Usage" in helped.stdout
    which = run_as(alice, ["sh", "-c", "command -v statgrid"])
    assert which.stdout.strip() == str(site_install.statgrid)

    imported = run_as(alice, ["python", "-c", "import statgrid, duckdb, distributed; print(statgrid.__file__)"])
    assert imported.returncode == 0, imported.stderr
    installed = imported.stdout.strip()
    assert installed.startswith(str(site_install.site_packages)), installed   # not the checkout: non-editable

    # this checkout's statgrid, not one an earlier session left
    for rel in ("job/protocol.py", "cli/app.py"):
        assert (site_install.site_packages / "statgrid" / rel).read_bytes() == (REPO / "statgrid" / rel).read_bytes()


@pytest.mark.root
def test_the_user_can_change_nothing_of_the_site_install(site_install, users):
    alice = users[0]
    writable = run_as(alice, ["find", str(SITE_ROOT), "-writable"])
    assert writable.returncode == 0, writable.stderr   # every directory readable: find said nothing
    assert writable.stdout == ""
    for where in (site_install.bin_dir, site_install.site_packages / "statgrid", site_install.deps, SITE_ROOT):
        touched = run_as(alice, ["touch", str(where / "alice-was-here")])
        assert touched.returncode != 0 and "Permission denied" in touched.stderr, (where, touched)
        assert not (where / "alice-was-here").exists()
    # the statgrid she runs is root's
    st = site_install.statgrid.stat()
    assert (st.st_uid, st.st_mode & 0o022) == (0, 0)


@pytest.mark.root
def test_a_session_job_runs_as_the_user(site_install, users):
    alice = users[0]
    home = mkdir_as(alice, alice.home / "sghome")
    job = write_as(alice, alice.home / "job.py", textwrap.dedent("""\
        import os
        import statgrid

        with statgrid.session(memsize="256M", threads=1) as s:
            s.sql("CREATE TABLE work.t AS SELECT range AS x FROM range(100)")
            s.means("work.t", var=["x"], stats="n mean")
        print("uid", os.getuid())
        """))
    ran = run_as(alice, ["statgrid", "run", str(job)], env={"STATGRID_HOME": str(home)}, timeout=180)
    assert ran.returncode == 0, ran.stderr
    assert f"uid {alice.uid}" in ran.stdout.splitlines()
    assert "49.5" in ran.stdout                       # the mean of 0..99: the step ran
    # WORK was the user's, under the home she gave, and went with the session
    assert (home / "work").stat().st_uid == alice.uid
    assert list((home / "work").iterdir()) == []
