"""The data's size as written is what datagen says it is: the README's and --dry-run's GB per scale
come from `written_bytes_per_row`, so it must match the files datagen really writes."""
from __future__ import annotations

import re

import pytest

from statgrid.bench import datagen

from conftest import run_cli

SCALE = 0.002


def test_written_bytes_per_row_matches_the_files(session, tmp_path):
    lib = tmp_path / "gen"
    lib.mkdir()
    session.libname("gen", lib)
    rows = datagen.plan(SCALE)
    for name in datagen.SPECS:
        datagen.generate(session, name, SCALE, 1, "gen")
    for name, spec in datagen.SPECS.items():
        per_row = datagen.file_of(lib, name).stat().st_size / rows[name]
        assert per_row == pytest.approx(spec.written_bytes_per_row, rel=0.15), name
    written = sum(datagen.file_of(lib, n).stat().st_size for n in datagen.SPECS)
    assert written == pytest.approx(sum(datagen.estimated_bytes(SCALE).values()), rel=0.05)


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_dry_run_prints_the_estimated_size(home):
    r = run_cli("datagen", "--scale", "1", "--dry-run")
    assert r.returncode == 0, r.stderr
    total = re.search(r"^total\s+≈\s+([\d.]+) GB", r.stdout, re.M)
    assert total and float(total.group(1)) == pytest.approx(sum(datagen.estimated_bytes(1.0).values()) / 1e9,
                                                            abs=0.001)
    assert 100 < float(total.group(1)) < 200      # the README's "about 141 GB" at scale 1.0
    assert re.search(r"^person\s+90,000,000 rows ≈\s+55\.980 GB", r.stdout, re.M)
