"""The README's two set-up commands stay true: .ci/run runs the test command verbatim."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(python3 -m venv .+)\n```", text)


def test_readme_has_demo_and_test_commands():
    demo, tests = readme_commands()[:2]
    assert demo.endswith("statgrid demo")
    assert tests.endswith("python -m pytest")


def test_ci_runs_the_readme_test_command():
    tests = readme_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests in ci
    assert "set -euo pipefail" in ci
