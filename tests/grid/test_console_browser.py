"""The console in a real browser (issue 17): Debian's chromium driven by Selenium (chromium-driver),
against a shared grid run by root from a site install, with real OS users.

alice signs in with her token, submits a job from the CLI and watches it appear and start without
reloading, opens it and sees its log grow, kills it with the button; carol (an administrator)
closes a host and the grid view shows it closed, then opens it; bob opens alice's job and sees
its metadata but not her log. No page logs an error to the browser's console. A screenshot of
each view is kept under $STATGRID_TEST_ARTIFACTS (default: test-artifacts/ in the checkout,
ignored by git). Skipped, with the reason, where chromium, chromedriver or users cannot be had.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import WAIT_S
from tests.support.multiuser import site_install
from tests.grid.test_multiuser_grid import made_people, shared_grid
from tests.support.gridtoml import SHARED_SECTIONS, toml_text

__all__ = ["site_install"]   # a fixture, used by name

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("STATGRID_TEST_ARTIFACTS", REPO / "test-artifacts")) / "console"

# the shared grid of tests/grid/test_multiuser_grid.py with its monitor on: the console draws charts
GRID_TOML = toml_text({"node1": 2, "node2": 2}, monitor={"enabled": True}, **SHARED_SECTIONS)
# Ticks until killed: the test kills it, however long a loaded machine takes to get there.
LOG_SCRIPT = "import itertools, time\nfor i in itertools.count():\n    print('tick', i, flush=True)\n    time.sleep(0.2)\n"


def _browser_or_skip():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/run installs them)")
    import importlib.util

    if importlib.util.find_spec("selenium") is None:
        pytest.skip("selenium is not installed (requirements.lock has it)")
    return chromium, driver


class Browser:
    """One chromium (a fresh profile: its own cookies) with the console's address."""

    def __init__(self, base: str):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        chromium, driver = _browser_or_skip()
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1400,1000", "--ignore-certificate-errors",   # the grid's own CA
                    "--no-first-run", "--disable-background-networking", "--disable-component-update"):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(driver), options=options)
        self.base = base
        self.errors: list[tuple[str, dict]] = []

    def get(self, path: str) -> None:
        self.driver.get(self.base + path)
        self.loaded()

    def loaded(self) -> None:
        """The page is loaded, and its live stream (if it has one) is open: a change made after
        this shows on it. Before the stream opens, the page would miss it (the stream starts with
        the changes from its opening on), so nothing is done to a live page before."""
        self.wait_for("document.readyState === 'complete' && window.htmx !== undefined && "
                      "(document.querySelector('main[sse-connect]') === null || "
                      "document.getElementById('live').classList.contains('on'))")

    def wait_for(self, script: str, timeout_s: float = WAIT_S):
        from selenium.common.exceptions import JavascriptException, TimeoutException
        from selenium.webdriver.support.ui import WebDriverWait

        last = []

        def check(d):
            try:
                last[:] = [d.execute_script("return " + script)]
            except JavascriptException as exc:          # not there yet (a page between two loads)
                last[:] = [exc.msg]
                return False
            return last[0]
        try:
            return WebDriverWait(self.driver, timeout_s, poll_frequency=0.1).until(check)
        except TimeoutException:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for: {script}; it was {last!r} on "
                                 f"{self.driver.current_url} ({self.driver.title!r})") from None

    def click(self, css: str) -> None:
        """Click the element, found afresh: a live swap may replace it between finding and clicking."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        def clicked(d):
            try:
                d.find_element(By.CSS_SELECTOR, css).click()
                return True
            except StaleElementReferenceException:
                return False
        WebDriverWait(self.driver, WAIT_S, poll_frequency=0.1).until(clicked, f"could not click {css}")

    def accept_confirm(self) -> str:
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.ui import WebDriverWait

        alert = WebDriverWait(self.driver, WAIT_S).until(expected_conditions.alert_is_present(), "no confirm shown")
        text = alert.text
        alert.accept()
        return text

    def text(self, css: str) -> str:
        return self.driver.execute_script("const e = document.querySelector(arguments[0]); "
                                          "return e ? e.textContent : null", css)

    def check_console(self, page: str) -> None:
        """Every message the page logged at SEVERE (errors, failed loads), remembered for the test."""
        for entry in self.driver.get_log("browser"):
            if entry["level"] == "SEVERE":
                self.errors.append((page, entry))

    def screenshot(self, name: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))

    def sign_in(self, token: str, then: str = "/console/grid") -> None:
        from selenium.webdriver.common.by import By

        self.get("/console/login?next=" + then)
        self.driver.find_element(By.ID, "token").send_keys(token)
        self.driver.find_element(By.ID, "sign-in").click()
        self.wait_for(f"location.pathname === {then!r}")
        self.loaded()

    def close_host(self, host: str, reason: str) -> None:
        """Type the reason in the host's row and press Close. A live swap of the row (its load, its
        running jobs) between the two would take the typed reason with it: then both again."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        def closed(d):
            try:
                form = d.find_element(By.CSS_SELECTOR, f"#host-{host} form")
                form.find_element(By.NAME, "reason").send_keys(reason)
                form.find_element(By.CSS_SELECTOR, "button.close").click()
                return True
            except StaleElementReferenceException:
                return False
        WebDriverWait(self.driver, WAIT_S, poll_frequency=0.1).until(closed, f"could not close {host}")

    def mark_page(self) -> None:
        """A mark that a reload would wipe: the page must still carry it when a change has shown."""
        self.driver.execute_script("window.statgridNotReloaded = true")

    def not_reloaded(self) -> bool:
        return self.driver.execute_script("return window.statgridNotReloaded === true")

    def quit(self) -> None:
        self.driver.quit()


@pytest.fixture(scope="module")
def people():
    _browser_or_skip()
    with made_people() as made:
        yield made


@pytest.fixture(scope="module")
def grid(site_install, people):
    with shared_grid(site_install, people, GRID_TOML, prefix="sgcon-") as g:
        assert "enabled = true" in g.toml.read_text()
        console = next(line.split()[1] for line in g.up.stdout.splitlines() if line.startswith("console: "))
        assert console.startswith("https://") and console.endswith("/console/")
        g.base = console.removesuffix("/console/")
        g.tokens = {who: g.cli(who, "token", "create", "--print", "--name", "browser").stdout.splitlines()[0].strip()
                    for who in ("alice", "bob", "carol")}
        yield g


@pytest.mark.root
@pytest.mark.browser
def test_a_user_watches_her_job_live_and_kills_it_an_admin_closes_a_host_another_user_sees_no_log(grid):
    from selenium.webdriver.common.by import By

    alice = Browser(grid.base)
    try:
        alice.get("/console/grid")                         # not signed in: sent to the sign-in page
        assert alice.driver.current_url.startswith(grid.base + "/console/login?next=")
        alice.screenshot("login")
        alice.check_console("login")
        alice.sign_in(grid.tokens["alice"], "/console/jobs")
        assert alice.text("#me").strip() == grid.people["alice"].name
        alice.mark_page()

        job = grid.submit("alice", "--name", "ticker", "--", "python3", "-c", LOG_SCRIPT)
        alice.wait_for(f"document.querySelector('#job-{job} .state') !== null")        # appeared, pushed
        alice.wait_for(f"document.querySelector('#job-{job} .state').textContent === 'RUN'")
        assert alice.not_reloaded()
        alice.screenshot("jobs")
        alice.check_console("jobs")

        alice.click(f"#job-{job} a[href='/console/jobs/{job}']")
        alice.wait_for(f"location.pathname === '/console/jobs/{job}'")
        alice.loaded()
        alice.wait_for("document.querySelector('#log').textContent.includes('tick 2')")
        alice.mark_page()
        before = alice.text("#log").count("tick")
        alice.wait_for(f"document.querySelector('#log').textContent.split('tick').length - 1 >= {before + 5}")
        assert alice.not_reloaded()                       # the tail grew on its own
        alice.wait_for("document.querySelectorAll('.chart .u-wrap').length === 3")   # CPU, memory, I/O drawn
        alice.screenshot("job")
        alice.check_console("job")

        alice.click("#kill")
        assert alice.accept_confirm() == f"Kill job {job}?"
        alice.wait_for(f"document.querySelector('#job-{job} .state').textContent === 'KILLED'")
        # The answer to her click and the stream's news of the end come in either order, and the
        # end may be there before the answer is written: "kill requested" or already "KILLED".
        flash = alice.wait_for(f"document.querySelector('#flash').textContent.includes('job {job}: ') && "
                               "document.querySelector('#flash').textContent")
        assert flash.strip() in (f"job {job}: kill requested", f"job {job}: KILLED"), flash
        assert alice.not_reloaded()
        alice.check_console("job (killed)")
        assert alice.driver.find_elements(By.ID, "kill") == []

        for path, name in (("/console/queues", "queues"), ("/console/hosts/node1", "host"),
                           ("/console/results", "results")):
            alice.get(path)
            if name == "host":
                alice.wait_for("document.querySelectorAll('.chart .u-wrap').length === 6")
            alice.screenshot(name)
            alice.check_console(name)
        # not an administrator: no host buttons, and the server refuses her anyway
        alice.get("/console/grid")
        assert alice.driver.find_elements(By.CSS_SELECTOR, "button.close") == []
        alice.check_console("grid (alice)")
        assert alice.errors == []
    finally:
        alice.quit()

    carol = Browser(grid.base)
    try:
        carol.sign_in(grid.tokens["carol"], "/console/grid")
        assert "(administrator)" in carol.text("#me")
        carol.mark_page()
        carol.close_host("node1", "disk swap")
        carol.wait_for("document.querySelector('#host-node1 .state').textContent === 'closed_Adm'")
        assert f"by {grid.people['carol'].name}: disk swap" in carol.text("#host-node1")
        assert carol.not_reloaded()
        carol.wait_for("document.querySelectorAll('.chart .u-wrap').length === 6")
        carol.screenshot("grid")
        assert "closed_Adm" in grid.cli("bob", "hosts").stdout            # the grid itself has it closed
        carol.click("#host-node1 button.open")
        carol.wait_for("document.querySelector('#host-node1 .state').textContent === 'ok'")
        carol.check_console("grid (carol)")
        assert carol.errors == []
    finally:
        carol.quit()

    bob = Browser(grid.base)
    try:
        bob.sign_in(grid.tokens["bob"], f"/console/jobs/{job}")
        assert "ticker" in bob.text("h1") and bob.text("#not-yours") is not None
        assert bob.driver.find_elements(By.ID, "log") == [] and "tick 1" not in bob.driver.page_source
        assert bob.driver.find_elements(By.ID, "kill") == []
        bob.screenshot("job-of-another-user")
        bob.check_console("job (bob)")
        assert bob.errors == []
    finally:
        bob.quit()
