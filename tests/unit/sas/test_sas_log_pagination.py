"""The listing's pagination: a long PROC output is cut into pages holding every line once, in order, each
page within PAGESIZE. (It walks the lines by index: re-slicing the rest for each page was quadratic —
200,000 lines took 13 s; that speed is not asserted here, a test's outcome must not depend on the
machine's load.)"""
from __future__ import annotations

from statgrid.sas.options import SasOptions
from statgrid.sas.saslog import SasLog


class _Pages:
    def __init__(self):
        self.pages: list[str] = []

    def listing(self, text: str) -> None:
        self.pages.append(text)


def test_a_long_listing_is_cut_into_pages_with_every_line_once():
    options = SasOptions()
    options.set("PAGESIZE", "15")
    options.set("NOCENTER")
    out = _Pages()
    log = SasLog(out, options)
    n = 200_000
    log.listing("\n".join(f"r{i}" for i in range(n)))
    body = [ln for page in out.pages for ln in page.lstrip("\f").split("\n") if ln.startswith("r")]
    assert body == [f"r{i}" for i in range(n)]                 # every line once, in order
    assert len(out.pages) == log.page - 1 and all(len(p.lstrip("\f").split("\n")) <= 15 for p in out.pages)
