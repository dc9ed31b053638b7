"""Live change events (issue 17): the master broadcasts each change once from memory, every viewer
gets it; a viewer that falls behind gets a resync instead of holding the master up."""
from __future__ import annotations

import asyncio
import threading

from statgrid.grid.interface.client import GridClient
from statgrid.grid.master.events import Broadcaster
from tests.support import gridtest
from tests.conftest import WAIT_S

GRID_TOML = gridtest.ONE_SLOT_TOML


def test_a_viewer_that_falls_behind_gets_one_resync_and_never_blocks_the_publisher(monkeypatch):
    monkeypatch.setattr("statgrid.grid.master.events.QUEUE_MAX_EVENTS", 3)

    async def scenario():
        hub = Broadcaster()
        slow, quick = hub.subscribe(), hub.subscribe()
        got_quick = []
        for i in range(10):
            hub.publish({"type": "job", "n": i})
            got_quick.append(await quick.next(1))              # keeps up
        first = await slow.next(1)
        hub.publish({"type": "job", "n": 10})
        after = await slow.next(1)
        assert await quick.next(1) == {"type": "job", "n": 10}
        hub.close()
        return got_quick, first, after, await quick.next(1)

    got_quick, first, after, end = asyncio.run(scenario())
    assert [e["n"] for e in got_quick] == list(range(10))
    assert first == {"type": "resync"} and after == {"type": "job", "n": 10}
    assert end == {"type": "end"}


def test_every_viewer_sees_each_change_of_a_job(tmp_path):
    g = gridtest.Grid(tmp_path, GRID_TOML)
    with gridtest.running(g):
        seen: dict[int, list[tuple[str, str]]] = {i: [] for i in range(3)}
        ready = threading.Barrier(4)

        def viewer(i: int) -> None:
            stream = GridClient(g.cfg).events(timeout_s=WAIT_S)
            assert next(stream) == {"type": "open"}              # subscribed: every change from now on
            ready.wait(WAIT_S)
            for event in stream:
                if event["type"] == "job":
                    seen[i].append((event["event"], event["job"]["state"]))
                    if event["job"]["state"] in ("DONE", "EXIT", "KILLED"):
                        return

        threads = [threading.Thread(target=viewer, args=(i,), daemon=True) for i in range(3)]
        for t in threads:
            t.start()
        # the streams are open once each has read its first line; then submit
        ready.wait(WAIT_S)
        job = g.submit("true")
        for t in threads:
            t.join(WAIT_S)
        assert not any(t.is_alive() for t in threads)
        assert g.wait([job])[0]["state"] == "DONE"
    want = [("submit", "PEND"), ("dispatch", "RUN"), ("start", "RUN"), ("finish", "DONE")]
    assert all(seen[i] == want for i in seen), seen
