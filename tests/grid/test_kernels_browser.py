"""A notebook with the statgrid-sas kernel in JupyterLab, driven in Debian's chromium by Selenium (issue 28): the
kernel starts on a real grid, a DATA step and a PROC MEANS run, the log (NOTEs in blue) and the listing show in
the cells' output. Screenshots are kept under $STATGRID_TEST_ARTIFACTS/kernels (default test-artifacts/ in the
checkout). Skipped, with the reason, where chromium, chromedriver or JupyterLab cannot be had."""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import urllib.request

import pytest

from statgrid.bench.mixed import free_port
from statgrid.kernels.specs import kernel_json
from tests.conftest import wait_for
from tests.grid.test_console_browser import ARTIFACTS, Browser
from tests.support.gridtest import Grid, running
from tests.support.gridtoml import toml_text

pytestmark = pytest.mark.browser
SHOTS = ARTIFACTS.parent / "kernels"
TOKEN = "statgrid-test-token"

DATA_STEP = "data work.class;\n  do i = 1 to 10;\n    height = 50 + i * 1.5;\n    output;\n  end;\nrun;"
MEANS = "proc means data=work.class n mean min max;\n  var height;\nrun;"


@contextlib.contextmanager
def jupyterlab(root, env):
    if importlib.util.find_spec("jupyterlab") is None:
        pytest.skip("JupyterLab is not installed (the lab extra: requirements.lock has it)")
    port = free_port()
    log = open(root / "lab.log", "w")
    # `statgrid lab` (the README's way in): JupyterLab with the kernel specs (here found through JUPYTER_PATH)
    proc = subprocess.Popen([sys.executable, "-m", "statgrid", "lab", "--no-browser", f"--port={port}",
                             "--ip=127.0.0.1", f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={root / 'nb'}",
                             "--allow-root"], env=env, stdout=log, stderr=subprocess.STDOUT)

    def up():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={TOKEN}", timeout=5) as r:
                return r.status == 200
        except OSError:
            assert proc.poll() is None, (root / "lab.log").read_text()[-2000:]
            return False
    try:
        wait_for(up, "JupyterLab to answer", every_s=0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_a_sas_notebook_in_jupyterlab_runs_on_the_grid(tmp_path, monkeypatch):
    import nbformat

    grid = Grid(tmp_path, toml_text({"node1": 2}, {"normal": {}, "interactive": {}}))
    (tmp_path / "nb").mkdir()
    spec = tmp_path / "jupyter" / "kernels" / "statgrid-sas"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps(kernel_json("sas")))
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "statgrid-sas", "display_name": "SAS (statgrid grid)", "language": "sas"}
    nb.cells = [nbformat.v4.new_code_cell(DATA_STEP), nbformat.v4.new_code_cell(MEANS)]
    nbformat.write(nb, str(tmp_path / "nb" / "class.ipynb"))
    env = {**os.environ, **grid.env, "JUPYTER_PATH": str(tmp_path / "jupyter"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "jconfig"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "jruntime"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "jsettings")}
    news = tmp_path / "jsettings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    with running(grid), jupyterlab(tmp_path, env) as lab:
        browser = Browser(lab)
        try:
            from selenium.webdriver.common.by import By

            d = browser.driver
            d.get(f"{lab}/lab/tree/class.ipynb?token={TOKEN}")
            # the kernel started on the grid: the notebook's kernel is idle, and the grid runs it as a job
            browser.wait_for("document.body.innerText.includes('SAS (statgrid grid) | Idle')")
            kernels = [j for j in grid.client.jobs() if j["kind"] == "kernel"]
            assert len(kernels) == 1 and kernels[0]["state"] == "RUN" and kernels[0]["queue"] == "interactive", kernels
            d.find_element(By.XPATH, "//div[contains(@class,'lm-MenuBar-itemLabel') and text()='Run']").click()
            d.find_element(By.CSS_SELECTOR, "li.lm-Menu-item[data-command='runmenu:run-all']").click()
            browser.wait_for("document.body.innerText.includes('The MEANS Procedure')")
            text = d.execute_script("return document.querySelector('.jp-Notebook').innerText")
            heights = [50 + i * 1.5 for i in range(1, 11)]
            assert "NOTE: The data set WORK.CLASS has 10 observations and 2 variables." in text
            assert "NOTE: There were 10 observations read from the data set WORK.CLASS." in text
            assert f"{sum(heights) / len(heights):.7f}" in text and f"{max(heights):.7f}" in text
            colour = d.execute_script("var s = [...document.querySelectorAll('.statgrid-log span')].find("
                                      "e => e.textContent.startsWith('NOTE:')); return s && getComputedStyle(s).color")
            assert colour == "rgb(0, 0, 208)", colour                     # NOTE lines blue, as SAS shows them
            SHOTS.mkdir(parents=True, exist_ok=True)
            d.save_screenshot(str(SHOTS / "jupyterlab-statgrid-sas-log.png"))
            d.execute_script("[...document.querySelectorAll('.jp-CodeCell')].pop().scrollIntoView({block: 'start'})")
            d.save_screenshot(str(SHOTS / "jupyterlab-statgrid-sas.png"))
        finally:
            browser.driver.quit()
