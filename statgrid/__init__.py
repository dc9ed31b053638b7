"""statgrid — an open analytics grid: sessions, a workload manager, monitors and a performance lab.

`statgrid.session(...)` opens a session (the module `statgrid.session` is callable).
"""
from __future__ import annotations

__version__ = "0.1.0"

import statgrid.session  # noqa: E402,F401  (makes statgrid.session() available after `import statgrid`)
