"""`-m unit` does not collect tests/grid/ (its tests are all `grid`, never `unit`), and every expression
that could pick one of them still does: an expression is ruled out only when it is false for a test
that is `grid`, not `unit`, and carries any mix of the other names it uses."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import _grid_cannot_match, pytest_ignore_collect

TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("markexpr, ruled_out", [
    ("unit", True),
    ("not grid", True),
    ("unit and not root", True),
    ("(unit or browser) and not grid", True),
    ("grid", False),
    ("grid and not root", False),
    ("root", False),                  # a tests/grid/ test marked root
    ("root and not netns", False),    # root but not netns: that mix must be tried
    ("unit or netns", False),
    ("not unit", False),
    ("unit and", False),              # not an expression pytest reads: collect, pytest reports it
])
def test_which_expressions_rule_tests_grid_out(markexpr, ruled_out):
    assert _grid_cannot_match(markexpr) is ruled_out


class _Config:
    def __init__(self, markexpr: str):
        self.markexpr = markexpr

    def getoption(self, name, default=None):
        return self.markexpr if name == "markexpr" else default


def test_only_the_grid_folder_is_left_out():
    assert pytest_ignore_collect(TESTS / "grid", _Config("unit")) is True
    assert pytest_ignore_collect(TESTS / "grid", _Config("grid")) is None
    assert pytest_ignore_collect(TESTS / "grid", _Config("")) is None
    assert pytest_ignore_collect(TESTS / "unit", _Config("unit")) is None
    assert pytest_ignore_collect(TESTS / "unit", _Config("not grid")) is None
    # a folder named grid elsewhere (tests/unit/grid, say) is not the layer's
    assert pytest_ignore_collect(TESTS / "unit" / "grid", _Config("unit")) is None
