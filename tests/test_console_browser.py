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

from tests.multiuser import site_install
from tests.test_multiuser_grid import GRID_TOML as MULTIUSER_TOML
from tests.test_multiuser_grid import made_people, shared_grid

__all__ = ["site_install"]   # a fixture, used by name

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("STATGRID_TEST_ARTIFACTS", REPO / "test-artifacts")) / "console"
WAIT_S = 60

GRID_TOML = MULTIUSER_TOML.replace("[monitor]\nenabled = false", "[monitor]\nenabled = true")   # charts
LOG_SCRIPT = "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.2)\n"


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
        self.wait_for("document.readyState === 'complete' && window.htmx !== undefined")

    def wait_for(self, script: str, timeout_s: float = WAIT_S):
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout_s, poll_frequency=0.1).until(
            lambda d: d.execute_script("return " + script), f"timed out waiting for: {script}")

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
        self.wait_for(f"location.pathname === {then!r} && document.readyState === 'complete'")

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

        alice.driver.find_element(By.CSS_SELECTOR, f"#job-{job} a[href='/console/jobs/{job}']").click()
        alice.wait_for(f"location.pathname === '/console/jobs/{job}' && window.htmx !== undefined")
        alice.wait_for("document.querySelector('#log').textContent.includes('tick 2')")
        alice.mark_page()
        before = alice.text("#log").count("tick")
        alice.wait_for(f"document.querySelector('#log').textContent.split('tick').length - 1 >= {before + 5}")
        assert alice.not_reloaded()                       # the tail grew on its own
        alice.wait_for("document.querySelectorAll('.chart .u-wrap').length === 3")   # CPU, memory, I/O drawn
        alice.screenshot("job")
        alice.check_console("job")

        alice.driver.find_element(By.ID, "kill").click()
        alice.driver.switch_to.alert.accept()                 # "Kill job N?"
        alice.wait_for(f"document.querySelector('#job-{job} .state').textContent === 'KILLED'")
        assert "kill requested" in alice.text("#flash") and alice.not_reloaded()
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
        carol.driver.find_element(By.CSS_SELECTOR, "#host-node1 input[name=reason]").send_keys("disk swap")
        carol.driver.find_element(By.CSS_SELECTOR, "#host-node1 button.close").click()
        carol.wait_for("document.querySelector('#host-node1 .state').textContent === 'closed_Adm'")
        assert f"by {grid.people['carol'].name}: disk swap" in carol.text("#host-node1")
        assert carol.not_reloaded()
        carol.wait_for("document.querySelectorAll('.chart .u-wrap').length === 6")
        carol.screenshot("grid")
        assert "closed_Adm" in grid.cli("bob", "hosts").stdout            # the grid itself has it closed
        carol.driver.find_element(By.CSS_SELECTOR, "#host-node1 button.open").click()
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
