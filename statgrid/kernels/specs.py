"""The kernel specs `statgrid kernels install` writes: statgrid-sas and statgrid-python, each naming statgrid's
provisioner (jupyter_client's kernel_provisioner metadata; the entry point is in pyproject.toml), so that starting
one — JupyterLab, `jupyter console --kernel statgrid-sas`, any KernelManager — asks the grid for it."""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from statgrid.job.kinds import KERNEL_LANGUAGES

PROVISIONER = "statgrid-provisioner"
DISPLAY = {"sas": "SAS (statgrid grid)", "python": "Python 3 (statgrid grid)"}
LANGUAGE = {"sas": "sas", "python": "python"}


def spec_name(language: str) -> str:
    return f"statgrid-{language}"


def kernel_json(language: str, queue: str = "") -> dict:
    """A kernel.json. argv is what the node runs, as the job's user; it is built by the master (launch_argv) from
    the job's kind and language, so argv here only names it for tools that show it; no {connection_file}: the
    connection is made on the node."""
    config = {"language": language, **({"queue": queue} if queue else {})}
    return {"argv": [sys.executable, "-m", "statgrid", "kernel-run", "--", language],
            "display_name": DISPLAY[language], "language": LANGUAGE[language], "interrupt_mode": "signal",
            "metadata": {"kernel_provisioner": {"provisioner_name": PROVISIONER, "config": config},
                         "supported_encryption": ["curve"], "debugger": False}}


def install(user: bool = False, prefix: str | None = None, queue: str = "") -> list[str]:
    """Install both specs (jupyter_client's KernelSpecManager: --user → ~/.local/share/jupyter/kernels,
    --sys-prefix → this environment's, else the system's); the paths written."""
    from jupyter_client.kernelspec import KernelSpecManager

    ksm = KernelSpecManager()
    out = []
    for language in KERNEL_LANGUAGES:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "kernel.json").write_text(json.dumps(kernel_json(language, queue), indent=1))
            out.append(ksm.install_kernel_spec(tmp, spec_name(language), user=user, prefix=prefix))
    return out
