"""GET /metrics (issue 17, item 2) on a real grid: Prometheus's text format checked by promtool
(Debian's prometheus package), the figures against what the grid did, and scraping only with a
credential."""
from __future__ import annotations

import http.client
import os
import shutil
import ssl
import subprocess

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support import gridtest
from tests.conftest import wait_for
from tests.support.gridtoml import toml_text

GRID_TOML = toml_text({"node1": 2, "node2": {"slots": 1, "open": False}},
                      {"normal": {"priority": 30}, "night": {"priority": 5, "hosts": "node2"}},
                      monitor={"interval": "1s"})


def samples(text: str) -> dict[tuple[str, tuple], float]:
    """{(sample name, sorted labels): value} of a scrape."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    with gridtest.running(gridtest.Grid(tmp_path_factory.mktemp("metrics"), GRID_TOML)) as g:
        yield g


def test_metrics_say_what_the_grid_did_and_pass_promtool(grid):
    ok, bad = grid.submit("true"), grid.submit("false")
    grid.wait([ok, bad])
    running = grid.submit("sleep", "600")                 # killed at the end
    grid.wait_started(running)
    waiting = grid.client.submit(["true"], queue="night", cwd=str(grid.root), env={"PATH": os.environ["PATH"]})["id"]
    me = grid.client.whoami()["user"]
    wait_for(lambda: (grid.home / "monitor" / "node1" / "latest.json").exists(), "node1's monitor's first sample")
    text = grid.client.metrics()
    got = samples(text)
    assert got[("statgrid_jobs_finished_total", (("queue", "normal"), ("state", "DONE")))] == 1
    assert got[("statgrid_jobs_finished_total", (("queue", "normal"), ("state", "EXIT")))] == 1
    assert got[("statgrid_jobs_submitted_total", (("queue", "normal"),))] == 3
    assert got[("statgrid_jobs", (("queue", "normal"), ("state", "RUN"), ("user", me)))] == 1
    assert got[("statgrid_jobs", (("queue", "night"), ("state", "PEND"), ("user", me)))] == 1
    assert got[("statgrid_queue_jobs", (("queue", "night"), ("state", "PEND")))] == 1
    assert got[("statgrid_host_slots", (("host", "node1"),))] == 2
    assert got[("statgrid_host_running_jobs", (("host", "node1"),))] == 1
    assert got[("statgrid_host_state", (("host", "node2"), ("state", "closed_Adm")))] == 1
    assert got[("statgrid_host_state", (("host", "node2"), ("state", "ok")))] == 0
    assert got[("statgrid_job_wait_seconds_count", ())] == 3          # three jobs started
    assert got[("statgrid_dispatch_latency_seconds_count", ())] == 3
    assert 0 < got[("statgrid_node_memory_used_bytes", (("host", "node1"),))]
    assert 0 <= got[("statgrid_node_cpu_user_ratio", (("host", "node1"),))] <= 1
    assert any(name == "statgrid_library_read_bytes_per_second" and ("host", "node1") in labels
               and ("library", "work") in labels and dict(labels)["source"] in ("block", "nfs", "gpfs", "process")
               for name, labels in got)
    if shutil.which("promtool") is None:
        pytest.skip("promtool (Debian's prometheus package) is not installed: the format is not cross-checked")
    checked = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    grid.client.kill([running, waiting])
    grid.wait([running, waiting])


def test_scraping_needs_a_token(grid):
    context = ssl.create_default_context(cafile=str(grid.home / "grid" / "ca.pem"))

    def scrape(token=None) -> tuple[int, str]:
        conn = http.client.HTTPSConnection("localhost", grid.cfg.master.port, timeout=30, context=context)
        try:
            conn.request("GET", "/metrics", headers={"Authorization": f"Bearer {token}"} if token else {})
            resp = conn.getresponse()
            return resp.status, resp.read().decode()
        finally:
            conn.close()

    status, body = scrape()
    assert status == 401 and "statgrid token create" in body
    token = grid.client.token_create("prometheus")["token"]
    status, body = scrape(token)
    assert status == 200 and "statgrid_host_slots" in body
