"""The grid's typed contract (statgrid/job/protocol.py): every record round-trips through JSON,
a reader rejects what it cannot read and says which field, attempt files of the previous release
are still read, and a job's identity reaches the launcher and the attempt file unchanged."""
from __future__ import annotations

import dataclasses
import getpass
import json
import os
import pwd
import socket
import subprocess
import sys
import typing
from pathlib import Path
from types import SimpleNamespace

import pytest

from statgrid.grid.master import core as master
from statgrid.grid.execution import node
from statgrid.grid.master.outcome import _read_attempt
from statgrid.job import protocol
from statgrid.job.jobdir import JobDir, attempt_path
from statgrid.job.protocol import (AttemptFinished, AttemptLost, AttemptStarted, HostAction, HostEvent, Identity,
                                    IoCounters, LaunchExited, LaunchFailed, LaunchRequest, LaunchStarted,
                                    ProtocolError, Rusage, TaskErred, attempt_from_dict, job_event_from_dict)
from tests.conftest import WAIT_S, wait_for

LAUNCHER = Path(node.__file__).with_name("launcher.py")
ANN = Identity(user="ann", uid=4242, gid=4343, groups=(4343, 27))
RUSAGE = Rusage(user_cpu_s=1.5, sys_cpu_s=0.25, max_rss_bytes=12 << 20, page_faults=1, page_reclaims=2,
                voluntary_ctx_switches=3, involuntary_ctx_switches=4, block_input_ops=5, block_output_ops=6)
IO = IoCounters(logical_read_bytes=10, logical_write_bytes=20, read_bytes=4096, write_bytes=8192)
KEY = "statgrid-job-7-2"
COMMON = dict(key=KEY, job_id=7, attempt=2, host="node1", identity=ANN)
STARTED = AttemptStarted(**COMMON, pid=100, pgid=100, cgroup="/sys/fs/cgroup/x/job-1", start_ts=1700000000.25)

RECORDS = [
    LaunchRequest(job_id=7, attempt=2, host="node1", argv=("statgrid", "run", "a.py"), env={"PATH": "/bin"},
                  cwd="/home/ann", job_dir="/g/jobs/7", work_roots=("/w", "/u"), stdout="/g/jobs/7/output.txt",
                  stderr="/g/jobs/7/output.txt", identity=ANN, attempt_file="/g/grid/attempts/7.2.json"),
    LaunchStarted(pid=100, pgid=100, cgroup=None, start_ts=1700000000.25, identity=ANN),
    LaunchExited(pid=100, exit_code=None, signal=15, end_ts=1700000009.5, rusage=RUSAGE, io=IO),
    LaunchFailed(error="ProtocolError: LaunchRequest: missing field 'argv'"),
    STARTED,
    AttemptFinished(**protocol.started_fields(STARTED), end_ts=1700000009.5, exit_code=0, signal=None, rusage=RUSAGE,
                    io=IO, stimer={"record": "total", "real_s": 9.0}, launch_error=None, attempt_file_error=None),
    AttemptFinished.launch_failed(KEY, "node1", None, "RuntimeError: no launcher", 1700000001.0),
    AttemptLost(**protocol.started_fields(STARTED), end_ts=1700000005.0,
                reason="host lost: the launcher of node1 died"),
    TaskErred(key=KEY, error="KilledWorker: gone", host_lost=True, worker="tcp://127.0.0.1:4000"),
    HostEvent(action=HostAction.REMOVE, address="tcp://127.0.0.1:4000", name=None, silent_s=31.5),
]
IDS = [f"{type(r).__name__}-{i}" for i, r in enumerate(RECORDS)]


def wire(record) -> dict:
    """What the other process reads: the record's dict through JSON text."""
    return json.loads(json.dumps(record.to_dict()))


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_every_record_round_trips_through_json(record):
    d = wire(record)
    assert (d["type"], d["version"]) == (type(record).TYPE, protocol.VERSION)
    assert type(record).from_dict(d) == record
    assert dataclasses.fields(record) and all(hasattr(record, f.name) for f in dataclasses.fields(record))


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_every_record_is_frozen_and_slotted(record):
    assert not hasattr(record, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, dataclasses.fields(record)[0].name, None)


def _scalar_field(cls) -> str:
    """A field whose annotation is a plain scalar (so an object is of the wrong type there)."""
    hints = typing.get_type_hints(cls)
    return next(f.name for f in dataclasses.fields(cls) if hints[f.name] in (int, float, str, bool, int | None,
                                                                           float | None, str | None))


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_a_reader_rejects_what_it_cannot_read_and_names_it(record):
    cls, d = type(record), wire(record)
    name = cls.__name__
    with pytest.raises(ProtocolError, match=rf"^{name}: version 5 is not supported \(this statgrid reads version 4\)"):
        cls.from_dict({**d, "version": 5})
    with pytest.raises(ProtocolError, match=rf"^{name}: version 3 is not supported"):
        cls.from_dict({**d, "version": 3})       # a node of the previous release: no memory limit
    with pytest.raises(ProtocolError, match=rf"^{name}: missing field 'version'"):
        cls.from_dict({k: v for k, v in d.items() if k != "version"})
    with pytest.raises(ProtocolError, match=rf"^{name}: unknown field 'uid_override'"):
        cls.from_dict({**d, "uid_override": 0})
    field = dataclasses.fields(record)[-1].name
    with pytest.raises(ProtocolError, match=rf"^{name}: missing field '{field}'$"):
        cls.from_dict({k: v for k, v in d.items() if k != field})
    field = _scalar_field(cls)
    with pytest.raises(ProtocolError, match=rf"^{name}\.{field} must be \w+, got dict {{'x': 1}}$"):
        cls.from_dict({**d, field: {"x": 1}})
    with pytest.raises(ProtocolError, match=rf"type 'other' is not '{cls.TYPE}'"):
        cls.from_dict({**d, "type": "other"})


@pytest.mark.parametrize("path, value, message", [
    (("identity", "uid"), "4242", r"LaunchRequest\.identity\.uid must be int, got str '4242'"),
    (("identity", "uid"), True, r"LaunchRequest\.identity\.uid must be int, got bool True"),
    (("identity", "groups"), [1, "2"], r"LaunchRequest\.identity\.groups\[1\] must be int, got str '2'"),
    (("argv",), "statgrid run a.py", r"LaunchRequest\.argv must be a list, got str"),
    (("env",), {"A": 1}, r"LaunchRequest\.env\['A'\] must be str, got int 1"),
    (("attempt",), 2.0, r"LaunchRequest\.attempt must be int, got float 2\.0"),
])
def test_nested_and_container_types_are_checked(path, value, message):
    d = wire(RECORDS[0])
    target = d
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    with pytest.raises(ProtocolError, match=message):
        LaunchRequest.from_dict(d)


def test_enum_fields_and_event_dispatch():
    d = wire(HostEvent(action=HostAction.ADD, address="tcp://a:1", name="node1", silent_s=0.0))
    with pytest.raises(ProtocolError, match=r"HostEvent\.action must be one of \['add', 'remove', 'stale', 'fresh'\], got 'join'"):
        HostEvent.from_dict({**d, "action": "join"})
    for record in RECORDS[4:9]:
        assert job_event_from_dict(wire(record)) == record
    with pytest.raises(ProtocolError, match="message type 'host' is not one of"):
        job_event_from_dict(d)


def test_task_keys():
    assert protocol.task_key(7, 2) == KEY and protocol.parse_task_key(KEY) == (7, 2)
    with pytest.raises(ValueError):
        protocol.parse_task_key("other-7-2")


# -- attempt files of version 1 (statgrid before protocol.py): a grid upgraded while jobs ran ------------

V1_BASE = {"key": KEY, "job_id": 7, "attempt": 2, "host": "node1"}
V1_STARTED = {**V1_BASE, "state": "started", "pid": 100, "pgid": 100, "cgroup": None, "start_ts": 1700000000.25}
V1_FINISHED = {**V1_STARTED, "state": "finished", "exit_code": 3, "signal": None, "end_ts": 1700000009.5,
               "rusage": RUSAGE.to_dict(), "io": IO.to_dict(), "stimer": None}
V1_LAUNCH_ERROR = {**V1_BASE, "state": "finished", "exit_code": None, "signal": None, "end_ts": 1700000001.0,
                   "launch_error": "RuntimeError: the launcher closed the connection"}
V1_LOST = {**V1_STARTED, "state": "lost", "end_ts": 1700000005.0, "reason": "host lost: the launcher of node1 died"}


def _legacy(home: Path, attempt: int) -> Path:
    """Where releases before protocol version 3 wrote an attempt's file: the job's directory."""
    path = JobDir(master.job_dir(SimpleNamespace(home=home), 7)).legacy_attempt(attempt)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _of_attempt(old: dict, attempt: int) -> dict:
    return {**old, "attempt": attempt, "key": protocol.task_key(7, attempt)}


def test_a_restarted_master_reads_attempt_files_of_version_1(tmp_path):
    cfg = SimpleNamespace(home=tmp_path)
    common = {**COMMON, "identity": None}
    expected = {
        1: AttemptStarted(**{**common, "attempt": 1, "key": protocol.task_key(7, 1)}, pid=100, pgid=100, cgroup=None,
                          start_ts=1700000000.25),
        2: AttemptFinished(**common, pid=100, pgid=100, cgroup=None, start_ts=1700000000.25,
                           end_ts=1700000009.5, exit_code=3, signal=None, rusage=RUSAGE, io=IO, stimer=None,
                           launch_error=None, attempt_file_error=None),
        3: AttemptFinished.launch_failed(protocol.task_key(7, 3), "node1", None,
                                         "RuntimeError: the launcher closed the connection", 1700000001.0),
        4: AttemptLost(**{**common, "attempt": 4, "key": protocol.task_key(7, 4)}, pid=100, pgid=100, cgroup=None,
                       start_ts=1700000000.25, end_ts=1700000005.0, reason="host lost: the launcher of node1 died"),
    }
    for attempt, old in zip(expected, (V1_STARTED, V1_FINISHED, V1_LAUNCH_ERROR, V1_LOST)):
        _legacy(tmp_path, attempt).write_text(json.dumps(_of_attempt(old, attempt)))   # as node.py wrote them
        assert _read_attempt(cfg, 7, attempt) == expected[attempt]
    # Version 1's shape is read only without a version key: a version-2 file must be complete.
    _legacy(tmp_path, 5).write_text(json.dumps(_of_attempt({**V1_STARTED, "version": 2}, 5)))
    assert _read_attempt(cfg, 7, 5) is None
    with pytest.raises(ProtocolError, match=r"AttemptStarted: missing field 'identity'"):
        attempt_from_dict({**{k: v for k, v in V1_STARTED.items() if k != "state"}, "version": 2,
                           "type": "attempt.started"})
    assert _read_attempt(cfg, 7, 6) is None                           # no file: never started


def test_attempt_files_of_version_2_in_the_job_directory_are_read(tmp_path):
    """The previous release wrote complete records (version 2) into the job's directory; a job of a
    grid upgraded while it ran still has its there. The grid's attempts directory comes first."""
    cfg = SimpleNamespace(home=tmp_path)
    v2 = {**STARTED.to_dict(), "version": 2}
    _legacy(tmp_path, 2).write_text(json.dumps(v2))
    assert _read_attempt(cfg, 7, 2) == STARTED
    finished = RECORDS[5]
    path = master.attempt_file(cfg, 7, 2)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(finished.to_dict()))
    assert _read_attempt(cfg, 7, 2) == finished
    # A record of another attempt (a user renamed an old file in their job directory) is not believed.
    _legacy(tmp_path, 3).write_text(json.dumps(v2))
    assert _read_attempt(cfg, 7, 3) is None


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file of another owner")
def test_an_attempt_file_the_grid_did_not_write_is_not_believed(tmp_path):
    """The job's directory belongs to its user: a file there that the grid's account does not own,
    or that is not a regular file (a FIFO would block the master's loop), tells nothing."""
    cfg = SimpleNamespace(home=tmp_path)
    forged = _legacy(tmp_path, 2)
    forged.write_text(json.dumps(RECORDS[5].to_dict()))
    os.chown(forged, 65534, 65534)
    assert _read_attempt(cfg, 7, 2) is None
    forged.unlink()
    os.mkfifo(forged)
    assert _read_attempt(cfg, 7, 2) is None
    forged.unlink()
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps(RECORDS[5].to_dict()))
    forged.symlink_to(target)
    assert _read_attempt(cfg, 7, 2) is None


# -- identity: from the master's user, through the node and the launcher, unchanged ------------------------

def test_the_master_sets_identity_from_the_jobs_user():
    me = pwd.getpwuid(os.getuid())
    ident = master.identity_of(me.pw_name)
    assert (ident.user, ident.uid, ident.gid, ident.groups[0]) == (me.pw_name, me.pw_uid, me.pw_gid, me.pw_gid)
    assert set(os.getgrouplist(me.pw_name, me.pw_gid)) == set(ident.groups)
    assert master.identity_of("no-such-user-x9") == Identity(user="no-such-user-x9", uid=None, gid=None, groups=())



SELF = master.identity_of(getpass.getuser())     # who runs these tests: the launcher runs their jobs as is


def _request(tmp_path: Path, identity: Identity = SELF, argv=("sh", "-c", "echo hi")) -> LaunchRequest:
    out = str(tmp_path / "output.txt")
    (tmp_path / "attempts").mkdir(exist_ok=True)
    return LaunchRequest(job_id=7, attempt=2, host="node1", argv=argv, env={"PATH": os.environ["PATH"]},
                         cwd=str(tmp_path), job_dir=str(tmp_path), work_roots=(), stdout=out, stderr=out,
                         identity=identity, attempt_file=str(attempt_path(tmp_path / "attempts", 7, 2)))


def test_run_job_carries_the_identity_through_the_real_launcher_unchanged(own_launcher, tmp_path):
    """The attempt file's identity is the one the launcher read from the node's request (echoed in
    LaunchStarted, which run_job checks against what the master sent)."""
    request = _request(tmp_path, SELF)
    outcome = node.run_job(request.to_dict())
    assert isinstance(outcome, AttemptFinished) and outcome.launch_error is None, outcome
    assert (outcome.exit_code, outcome.identity, outcome.job_id, outcome.attempt) == (0, SELF, 7, 2)
    path = Path(request.attempt_file)
    assert attempt_from_dict(json.loads(path.read_text())) == outcome
    assert path.stat().st_mode & 0o777 == 0o600 and not (tmp_path / "attempt-2.json").exists()
    assert (tmp_path / "output.txt").read_text() == "hi\n"


@pytest.mark.parametrize("identity", [dataclasses.replace(ANN, user="ann-x9"),
                                      Identity(user="bob-x9", uid=None, gid=None, groups=())],
                         ids=["other", "unknown"])
def test_run_job_of_someone_the_launcher_cannot_run_as_fails_with_its_reason(own_launcher, tmp_path, identity):
    """Run as root, the launcher refuses a user unknown here; run as anyone else, every job not
    its own user's. The reason, as the launcher gave it, is the attempt's launch error."""
    request = _request(tmp_path, identity, argv=("sh", "-c", "echo ran > ran.txt"))
    outcome = node.run_job(request.to_dict())
    assert isinstance(outcome, AttemptFinished) and outcome.pid is None and outcome.identity == identity, outcome
    reason = (f"user {identity.user!r} is unknown on host node1" if os.geteuid() == 0 else
              f"this node runs as {getpass.getuser()!r} (uid {os.getuid()}), not root, so it runs only")
    assert outcome.launch_error.startswith(reason), outcome.launch_error
    assert attempt_from_dict(json.loads(Path(request.attempt_file).read_text())) == outcome
    assert not (tmp_path / "ran.txt").exists() and not (tmp_path / "output.txt").exists()


def test_run_job_rejects_a_request_of_another_version(own_launcher, tmp_path):
    """The task errs (the master then ends the job with the error): no job starts, no file is written."""
    with pytest.raises(ProtocolError, match="LaunchRequest: version 1 is not supported"):
        node.run_job({**_request(tmp_path, ANN).to_dict(), "version": 1})
    with pytest.raises(ProtocolError, match="LaunchRequest: unknown field 'uid_override'"):
        node.run_job({**_request(tmp_path, ANN).to_dict(), "uid_override": 0})
    assert list((tmp_path / "attempts").iterdir()) == [] and not (tmp_path / "output.txt").exists()


def _ask(path: str, line: bytes) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall(line)
        return json.loads(sock.makefile("rb").readline())


def test_the_launcher_script_checks_requests_with_protocol_py(tmp_path):
    """Run as `python -I -S launcher.py` (no statgrid on its path), it loads protocol.py from its
    file: a request with a forged or unknown field, or of another version, starts nothing."""
    path = str(tmp_path / "l.sock")
    proc = subprocess.Popen([sys.executable, "-I", "-S", str(LAUNCHER), path], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"ready\n"
        good = _request(tmp_path, SELF, argv=("sh", "-c", "echo ran >> ran.txt")).to_dict()
        for bad, error in [({**good, "uid_override": 0}, "LaunchRequest: unknown field 'uid_override'"),
                           ({**good, "identity": {**good["identity"], "uid": "0"}},
                            "LaunchRequest.identity.uid must be int, got str '0'"),
                           ({**good, "version": 1}, "LaunchRequest: version 1 is not supported"),
                           ({k: v for k, v in good.items() if k != "identity"}, "missing field 'identity'")]:
            reply = LaunchFailed.from_dict(_ask(path, (json.dumps(bad) + "\n").encode()))
            assert reply.error.startswith("ProtocolError: ") and error in reply.error, reply
        assert not (tmp_path / "ran.txt").exists()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(path)
            sock.sendall((json.dumps(good) + "\n").encode())
            reader = sock.makefile("rb")
            assert LaunchStarted.from_dict(json.loads(reader.readline())).identity == SELF
            assert LaunchExited.from_dict(json.loads(reader.readline())).exit_code == 0
        assert (tmp_path / "ran.txt").read_text() == "ran\n"
    finally:
        proc.stdin.close()
        proc.wait(timeout=WAIT_S)


def _log_attempt_records() -> None:
    for record in RECORDS[4:8]:
        node._event(record)


def test_attempt_records_cross_the_dask_event_log_intact():
    """Through a real scheduler: it adds a "worker" key to a dict a worker logs, so records travel
    as JSON text (protocol.to_event), and the master reads them back unchanged."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        client.submit(_log_attempt_records, pure=False).result()
        wait_for(lambda: len(client.get_events(node.JOB_TOPIC)) >= 4, "4 records in the event log",
                 state=lambda: client.get_events(node.JOB_TOPIC))
        events = [msg for _, msg in client.get_events(node.JOB_TOPIC)]
    assert [protocol.from_event(m, job_event_from_dict) for m in events] == RECORDS[4:8]


def test_identities_are_looked_up_again_after_their_time(monkeypatch):
    """An account changed after the master first saw it is seen within IDENTITY_TTL_S, not at the
    next restart (it was cached for the master's life)."""
    clock = [1000.0]
    monkeypatch.setattr(master.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(master, "_identities", {})
    ids = iter([Identity("ann", 1001, 1001, (1001,)), Identity("ann", 1001, 1001, (1001, 27))])
    monkeypatch.setattr(master, "_lookup_identity", lambda user: next(ids))
    first = master.identity_of("ann")
    clock[0] += master.IDENTITY_TTL_S - 1
    assert master.identity_of("ann") is first                        # within its time: no lookup
    clock[0] += 2
    assert master.identity_of("ann").groups == (1001, 27)            # after it: looked up again
