"""WORK/UTIL lifecycle: creation, locking, cleanwork decisions, start-up failures, signal handlers."""
from __future__ import annotations

import errno
import os
import signal
import time

from statgrid.config import load_config
from statgrid.errors import StatgridError
from statgrid.session import Session
from statgrid.host.scratch import MARKER, ScratchDir, _create_error, clean_stale

import pytest
from tests.conftest import WAIT_S, wait_for


def test_scratch_dir_is_private_locked_and_live(tmp_path):
    d = ScratchDir.create(tmp_path, "work", "1a_deadbeef")
    assert d.path.stat().st_mode & 0o777 == 0o700
    assert (d.path / MARKER).is_file() and not (d.path / (MARKER + ".new")).exists()
    (res,) = clean_stale([tmp_path])
    assert res.action == "live" and d.path.exists()
    d.remove()
    assert not d.path.exists()


def test_empty_marker_is_never_removed(tmp_path):
    """An unlocked marker with no content may be a session mid-start (or damaged): leave it."""
    d = tmp_path / "SGwork_1a_00000001"
    d.mkdir()
    (d / MARKER).write_text("")
    (res,) = clean_stale([tmp_path])
    assert res.action == "skipped" and "unreadable session marker" in res.reason and d.exists()


def test_markerless_dir_removed_only_when_old(tmp_path):
    d = tmp_path / "SGutil_1a_00000002"
    d.mkdir()
    (res,) = clean_stale([tmp_path])
    assert res.action == "skipped" and d.exists()
    old = time.time() - 3600
    os.utime(d, (old, old))
    (res,) = clean_stale([tmp_path])
    assert res.action == "removed" and not d.exists()


def test_other_directories_are_ignored(tmp_path):
    (tmp_path / "not_ours").mkdir()
    (tmp_path / "SGwork_x").mkdir()
    assert clean_stale([tmp_path]) == []


def test_disk_full_message():
    msg = str(_create_error(os.path.abspath("/scratch"), "work", OSError(errno.ENOSPC, "No space left on device")))
    assert msg == ("no space left on device for the WORK directory under '/scratch'; free space there or point "
                   "[libraries] work in grid.toml at a larger file system.")
    msg = str(_create_error(os.path.abspath("/nfs"), "util", OSError(errno.ENOLCK, "No locks available")))
    assert "does not support file locks (No locks available)" in msg


def test_permission_denied_names_the_path_the_user_and_the_fix(tmp_path):
    """A session runs as its user on a grid whose nodes run as root: a root they cannot write to is
    named with its mode and owner, and how to make it like /tmp."""
    import pwd

    root = tmp_path / "work"
    root.mkdir()
    root.chmod(0o755)
    me = pwd.getpwuid(os.geteuid()).pw_name
    msg = str(_create_error(root, "work", OSError(errno.EACCES, "Permission denied"), root / "SGwork_1a_x"))
    assert msg == (f"cannot create the WORK directory {str(root / 'SGwork_1a_x')!r} as user {me!r}: Permission denied; "
                   f"{str(root)!r} is mode 0755, owned by {me}. Every user who runs sessions must be able to create "
                   f"directories there: make it like /tmp (`chmod 1777 {root}`, as a grid node run as root does when "
                   "it creates it), or point [libraries] work in grid.toml at such a directory.")


def test_failed_start_leaves_no_work_and_no_handler(home, tmp_path):
    (home / "blocker").write_text("a file where the UTIL root should be")
    (home / "grid.toml").write_text('[libraries]\nutil = "blocker/util"\n')
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(StatgridError, match="cannot create the UTIL directory under"):
        Session(load_config())
    assert list((home / "work").iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) == before
    assert not (signal.pthread_sigmask(signal.SIG_BLOCK, []) & {signal.SIGTERM, signal.SIGINT})


def test_sessions_closed_out_of_order_restore_the_original_handler(home):
    before = signal.getsignal(signal.SIGTERM)
    a = Session(load_config())
    b = Session(load_config())
    a.close()
    b.close()
    assert signal.getsignal(signal.SIGTERM) == before


def test_other_hosts_sessions_need_all_hosts(tmp_path):
    import json
    d = tmp_path / "SGwork_1a_00000003"
    d.mkdir()
    (d / MARKER).write_text(json.dumps({"pid": 1, "host": "some-other-node", "starttime": 1}))
    (res,) = clean_stale([tmp_path])
    assert res.action == "skipped" and "--all-hosts" in res.reason and d.exists()
    (res,) = clean_stale([tmp_path], all_hosts=True)
    assert res.action == "removed" and not d.exists()


def test_work_of_a_zombie_session_is_removed(tmp_path):
    """A session that died but is not reaped yet (its parent, or PID 1 after a launcher died, has
    not waited) holds no file and runs no code: its WORK goes (it was kept as 'live')."""
    pid = os.fork()
    if pid == 0:
        try:
            ScratchDir.create(tmp_path, "work", "1a_0000z0mb")
        finally:
            os._exit(0)                      # no cleanup: as a SIGKILLed session
    try:
        wait_for(lambda: open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[0] == "Z", "the child to end",
                 every_s=0.01)
        (res,) = clean_stale([tmp_path])
        assert res.action == "removed", res
        assert not any(tmp_path.iterdir())
    finally:
        os.waitpid(pid, 0)


def _clean_in_thread(roots) -> list:
    """clean_stale in a thread; a hang (the FIFO that used to block root's node forever) fails the
    test after a generous bound instead of hanging the suite."""
    import threading

    out: list = []
    t = threading.Thread(target=lambda: out.extend(clean_stale(roots)), daemon=True)
    t.start()
    t.join(WAIT_S)
    assert not t.is_alive(), "clean_stale hung"
    return out


def test_a_fifo_or_a_link_planted_as_a_marker_is_left_alone_without_hanging(tmp_path):
    """Under a 1777 root anyone may plant SGwork_* entries: a FIFO marker blocked the reader (root's
    node, after every signal-ended session) and a linked marker had root open any file read-write."""
    victim = tmp_path / "victim"
    victim.write_text("keep")
    fifo_dir, link_dir, linked = (tmp_path / "SGwork_1_aa", tmp_path / "SGwork_2_bb", tmp_path / "SGwork_3_cc")
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / MARKER)
    link_dir.mkdir()
    (link_dir / MARKER).symlink_to(victim)
    linked.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    results = {r.path.name: r for r in _clean_in_thread([tmp_path])}
    assert results["SGwork_1_aa"].action == "skipped" and "not a regular file" in results["SGwork_1_aa"].reason
    assert results["SGwork_2_bb"].action == "skipped" and "link" in results["SGwork_2_bb"].reason
    assert results["SGwork_3_cc"].action == "skipped" and "not a directory" in results["SGwork_3_cc"].reason
    assert fifo_dir.is_dir() and link_dir.is_dir() and (tmp_path / "elsewhere").is_dir()
    assert victim.read_text() == "keep"
