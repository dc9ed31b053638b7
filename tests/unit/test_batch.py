"""grid/interface/batch.py over a scripted client (no grid): what is killed, when, and what is
returned. The expected ids and calls are written out by hand from each script."""
import pytest

from statgrid.errors import StatgridError
from statgrid.grid.interface.batch import Batch


class ScriptedClient:
    """Job i answers the states script[i] to successive waits (the last one forever); kill()
    makes an unfinished job KILLED. Every kill and wait call is recorded."""

    def __init__(self, script: dict[int, list[str]], at_submit: dict[int, str] | None = None):
        self.script = {i: list(states) for i, states in script.items()}
        self.state = {i: (at_submit or {}).get(i, "PEND") for i in script}
        self.next_id = min(script)
        self.kills: list[list[int]] = []
        self.waits: list[tuple[list[int], float | None]] = []

    def submit(self, argv, **options):
        job_id, self.next_id = self.next_id, self.next_id + 1
        return {"id": job_id, "state": self.state[job_id], "argv": argv, **options}

    def wait(self, ids, timeout_s=None):
        self.waits.append((list(ids), timeout_s))
        out = []
        for i in ids:
            if self.state[i] != "KILLED":
                self.state[i] = self.script[i].pop(0) if len(self.script[i]) > 1 else self.script[i][0]
            out.append({"id": i, "state": self.state[i]})
        return out

    def kill(self, ids):
        self.kills.append(list(ids))
        for i in ids:
            if self.state[i] not in ("DONE", "EXIT", "KILLED"):
                self.state[i] = "KILLED"
        return [{"id": i, "state": self.state[i]} for i in ids]


def submit_all(batch: Batch, n: int) -> None:
    for k in range(n):
        batch.submit(["job.py"], name=f"j{k}")


def test_wait_all_kills_the_rest_on_the_first_failure():
    client = ScriptedClient({1: ["RUN"], 2: ["RUN", "EXIT"], 3: ["RUN"]})
    batch = Batch(client)
    submit_all(batch, 3)
    ended = []
    records = batch.wait_all(poll_s=0.0, on_end=lambda r: ended.append((r["id"], r["state"])))
    assert client.kills == [[1, 3]]
    assert [(r["id"], r["state"]) for r in records] == [(1, "KILLED"), (2, "EXIT"), (3, "KILLED")]
    assert ended == [(2, "EXIT")]          # the killed ones end after the wait stopped watching
    assert batch.unfinished() == []


def test_wait_all_without_stop_waits_for_every_job_and_reports_each_once():
    client = ScriptedClient({5: ["RUN", "EXIT"], 6: ["RUN", "RUN", "DONE"]})
    batch = Batch(client)
    submit_all(batch, 2)
    ended = []
    records = batch.wait_all(poll_s=0.0, on_end=lambda r: ended.append(r["id"]), stop_on_failure=False)
    assert client.kills == []
    assert ended == [5, 6]
    assert [r["state"] for r in records] == ["EXIT", "DONE"]
    # the second poll waited only for job 6, the one still unfinished
    assert [ids for ids, _ in client.waits] == [[5, 6], [5, 6], [6]]


def test_guard_kills_the_unfinished_on_an_error_from_on_end():
    client = ScriptedClient({1: ["DONE"], 2: ["RUN", "EXIT"], 3: ["RUN"]})
    batch = Batch(client)

    def fail_on_exit(rec):
        if rec["state"] != "DONE":
            raise StatgridError(f"job {rec['id']} failed")

    with pytest.raises(StatgridError, match="job 2 failed"):
        with batch.guard():
            submit_all(batch, 3)
            batch.wait_all(poll_s=0.0, on_end=fail_on_exit)
    assert client.kills == [[3]]           # 1 DONE and 2 EXIT are not killed again


def test_guard_spares_the_exceptions_it_is_told_and_quiet_hides_kill_errors():
    client = ScriptedClient({1: ["RUN"], 2: ["RUN"]})
    batch = Batch(client)
    with pytest.raises(KeyError):
        with batch.guard(spare=(KeyError,)):
            submit_all(batch, 2)
            raise KeyError("terminated")
    assert client.kills == []

    def refuse(ids):
        raise StatgridError("no master answers")

    client.kill = refuse
    with pytest.raises(KeyboardInterrupt):
        with batch.guard(quiet=True):
            raise KeyboardInterrupt
    with pytest.raises(StatgridError, match="no master answers"):
        batch.kill()


def test_wait_each_kills_one_still_running_at_the_deadline_and_waits_kill_wait_s():
    client = ScriptedClient({1: ["DONE"], 2: ["RUN"]})
    batch = Batch(client)
    submit_all(batch, 2)
    out = [(rec["id"], rec["state"], timed_out) for rec, timed_out in batch.wait_each(timeout_s=0.0, kill_wait_s=7.0)]
    assert out == [(1, "DONE", False), (2, "KILLED", True)]
    assert client.kills == [[2]]
    assert client.waits[-1] == ([2], 7.0)


def test_a_job_that_ended_at_submit_is_reported_and_never_waited_for():
    client = ScriptedClient({1: ["EXIT"], 2: ["RUN", "DONE"]}, at_submit={1: "EXIT"})
    batch = Batch(client)
    submit_all(batch, 2)
    ended = []
    records = batch.wait_all(poll_s=0.0, on_end=lambda r: ended.append(r["id"]), stop_on_failure=False)
    assert ended == [1, 2]
    assert [r["state"] for r in records] == ["EXIT", "DONE"]
    assert [ids for ids, _ in client.waits] == [[2], [2]]
