"""The live jobs list in a real browser (issue 24, items 7 and 10): a running job's run time counts
up on the page without a reload, and past the list's cap the newest rows stay, the oldest leave
the bottom and the page says it is capped. Debian's chromium driven by Selenium, as
tests/grid/test_console_browser.py, on a grid of the test's own (cap lowered to 5 for the test)."""
from __future__ import annotations

import os

import pytest

from tests.support import gridtest
from tests.grid.test_console_browser import Browser, _browser_or_skip
from tests.support.gridtoml import toml_text

LIVE_ROWS = 5
GRID_TOML = toml_text({"node1": 1}, {"capq": {"hosts": "node1"}}, master={"api_tls": False})


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    _browser_or_skip()
    g = gridtest.Grid(tmp_path_factory.mktemp("console-live-browser"), GRID_TOML)
    g.env["STATGRID_CONSOLE_LIVE_ROWS"] = str(LIVE_ROWS)
    with gridtest.running(g):
        g.token = g.client.token_create("browser")["token"]
        g.submitted = []
        yield g
        g.client.kill(g.submitted)


def submit(grid, *argv) -> int:
    job = grid.client.submit(list(argv), queue="capq", cwd=str(grid.root), env={"PATH": os.environ["PATH"]})["id"]
    grid.submitted.append(job)
    return job


def elapsed(browser: Browser, css: str) -> float | None:
    text = browser.text(css)
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def stream_open(browser: Browser) -> None:
    """The page's stream is open (htmx:sseOpen lights #live), so every change from now on reaches it:
    a job submitted before would be in neither the page nor its stream."""
    browser.wait_for("document.querySelector('#live').classList.contains('on')")


def notice_display(browser: Browser) -> str | None:
    return browser.driver.execute_script("const e = document.querySelector('#jobs-capped'); "
                                         "return e ? getComputedStyle(e).display : null")


@pytest.mark.browser
def test_a_running_jobs_time_counts_up_and_a_capped_list_says_so(grid):
    browser = Browser(f"http://127.0.0.1:{grid.cfg.master.port}")
    try:
        browser.sign_in(grid.token, "/console/jobs")
        browser.get("/console/jobs?queue=capq")
        stream_open(browser)
        browser.mark_page()
        assert notice_display(browser) == "none"                  # the notice's place, empty: not capped

        running = submit(grid, "sleep", "600")
        browser.wait_for(f"document.querySelector('#job-{running} .state') !== null && "
                         f"document.querySelector('#job-{running} .state').textContent === 'RUN'")
        cell = f"#job-{running} td.run .elapsed"
        browser.wait_for(f"document.querySelector('{cell}') !== null")
        first = elapsed(browser, cell)
        assert first is not None and first >= 0, browser.text(f"#job-{running}")
        browser.wait_for(f"parseFloat(document.querySelector('{cell}').textContent) >= {first + 2}")   # it counts
        assert browser.not_reloaded()
        browser.screenshot("jobs-running-time")

        browser.get(f"/console/jobs/{running}")                 # the job's page: its run time so far too
        header = f"#job-{running} dd.run .elapsed"
        browser.wait_for(f"document.querySelector('{header}') !== null")
        shown = elapsed(browser, header)
        assert shown is not None and shown >= first + 2
        browser.wait_for(f"parseFloat(document.querySelector('{header}').textContent) >= {shown + 1}")

        browser.get("/console/jobs?queue=capq")
        stream_open(browser)
        browser.mark_page()
        newer = [submit(grid, "true") for _ in range(LIVE_ROWS + 2)]           # 8 jobs in all, 5 rows kept
        browser.wait_for(f"document.querySelector('#job-{newer[-1]}') !== null")
        browser.wait_for("document.querySelectorAll('#jobs-body tr.job').length === 5 && "
                         "document.querySelector('#jobs-capped').textContent.includes('of 8 jobs')")
        rows = browser.driver.execute_script(
            "return Array.from(document.querySelectorAll('#jobs-body tr.job')).map(r => r.id)")
        assert rows == [f"job-{j}" for j in reversed(newer[-LIVE_ROWS:])]    # the newest, newest on top
        notice = browser.text("#jobs-capped")
        assert "Showing the newest 5 of 8 jobs" in notice, notice
        assert notice_display(browser) not in ("none", None)
        assert browser.not_reloaded()
        browser.screenshot("jobs-capped")
        browser.check_console("jobs")
        assert browser.errors == []
    finally:
        browser.quit()
