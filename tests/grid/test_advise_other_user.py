"""`statgrid advise`, `size` and `inventory --bundle` run by one real OS user (bob) on a results bundle of
another (alice) that bob may not read: a clear refusal naming the path, its owner and mode — no traceback,
nothing of the bundle printed — and, as the control, the same commands succeed once alice shares it.

Real users (useradd) and the site install of this checkout (tests/support/multiuser.py): needs root, skipped
otherwise. The bundle is tests/data/bundle_ma2 (a `statgrid demo --sessions 2` run) with an inventory.json
written here, copied for alice.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.support.multiuser import make_users, run_as, site_install

__all__ = ["make_users", "site_install"]   # fixtures, used by name

BUNDLE = Path(__file__).parent.parent / "data" / "bundle_ma2"
INVENTORY = {"schema": 1, "taken_ts": 0, "nodes": {"vm": {"threads": 2, "cores": 2, "thp": "never"}},
             "libraries": {}, "session": {"bufsize_bytes": 262144},
             "grid": {"hosts": {"node1": {"slots": 2, "machine": "vm"}}, "master_host": "vm",
                      "dispatch_interval_s": 0.0}}
# Words of the bundle's own files that must not reach a refused user's terminal.
SECRETS = ("MA2", "io_import_household", "cpu_glm", "6e99_fe2821c5", "bufsize")


def chown_tree(root: Path, uid: int, gid: int) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)):
            os.chown(name, uid, gid)


@pytest.fixture
def alices_bundle(make_users):
    """(bob, the bundle): alice's copy of the bundle, mode 0700, in a directory every user may enter."""
    alice, bob = make_users(2)
    top = Path(tempfile.mkdtemp(prefix="sg-advise-other-", dir="/tmp"))
    os.chmod(top, 0o755)
    bundle = top / "ma2"
    shutil.copytree(BUNDLE, bundle)
    (bundle / "inventory.json").write_text(json.dumps(INVENTORY))
    chown_tree(bundle, alice.uid, alice.gid)
    os.chmod(bundle, 0o700)
    yield alice, bob, bundle
    shutil.rmtree(top, ignore_errors=True)


COMMANDS = {"advise": ["advise", "{b}"], "size": ["size", "{b}", "--sessions", "2"],
            "inventory": ["inventory", "--bundle", "{b}"]}


def run(site, user, name: str, bundle: Path):
    argv = [str(site.statgrid), *(a.format(b=bundle) for a in COMMANDS[name])]
    return run_as(user, argv, timeout=300)


def assert_refused(r, user, bad: Path, detail: str = "") -> None:
    """Refused (exit 1 or 2; 125 would be setpriv's cd), naming the path, no traceback, nothing of the bundle."""
    assert r.returncode in (1, 2), (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    # click's own check of a path argument, or statgrid's (advise/access.py), which also names owner and mode
    assert (f"path {str(bad)!r} is not readable" in r.stderr
            or f"cannot be read by {user.name}: " in r.stderr and f"{str(bad)!r} belongs to {detail}" in r.stderr), \
        r.stderr
    assert not any(word in r.stdout + r.stderr for word in SECRETS), (r.stdout, r.stderr)


def share(bundle: Path) -> None:
    os.chmod(bundle, 0o755)
    for dirpath, dirnames, filenames in os.walk(bundle):
        for n in dirnames:
            os.chmod(os.path.join(dirpath, n), 0o755)
        for n in filenames:
            os.chmod(os.path.join(dirpath, n), 0o644)


@pytest.mark.root
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_private_bundle_of_another_user_is_refused_naming_the_path(site_install, alices_bundle, name):
    alice, bob, bundle = alices_bundle
    assert_refused(run(site_install, bob, name, bundle), bob, bundle)


PRIVATE_FILE = [("advise", "jobs.jsonl"), ("size", "jobs.jsonl"), ("inventory", "inventory.json")]


@pytest.mark.root
@pytest.mark.parametrize("name, private", PRIVATE_FILE)
def test_one_private_file_of_a_shared_bundle_is_named_with_its_owner_and_mode(site_install, alices_bundle, name,
                                                                               private):
    alice, bob, bundle = alices_bundle
    share(bundle)
    os.chmod(bundle / private, 0o600)
    assert_refused(run(site_install, bob, name, bundle), bob, bundle / private, f"{alice.name} with mode 0600")


@pytest.mark.root
def test_the_same_bundle_shared_is_read(site_install, alices_bundle):
    """The control: the refusals above are about access alone."""
    alice, bob, bundle = alices_bundle
    share(bundle)
    r = run(site_install, bob, "advise", bundle)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == f"statgrid advise: bundle {bundle}; inventory from the bundle's inventory.json"
    r = run(site_install, bob, "size", bundle)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"sizing from {bundle} (MA2)")
    r = run(site_install, bob, "inventory", bundle)
    assert r.returncode == 0, r.stderr
    assert "bufsize" in r.stdout
