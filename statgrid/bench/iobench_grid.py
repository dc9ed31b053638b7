"""`statgrid iobench --nodes`: one iobench job per chosen host, started through the grid, their
timed runs aligned by a file barrier in the grid home (bench/iobench.file_barrier); the results
gathered here into one record (per node and total).

The jobs wait for each other, so none is submitted unless all can start at once (iobench.grid_nodes),
and if one does not start or fails, the others are killed rather than left at the barrier."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable

from statgrid.bench import iobench_out
from statgrid.bench.iobench import IOSpec, grid_nodes, load_runs
from statgrid.errors import StatgridError
from statgrid.grid.interface.batch import Batch
from statgrid.grid.interface.client import GridClient

PEEK_BYTES = 1500                       # of a failed job's output, quoted in the error


def job_argv(spec: IOSpec, group: Path, n_nodes: int) -> list[str]:
    """The command each node's job runs: this iobench, on that node, at the group's barrier."""
    where = ["--dir", str(spec.dir)] if spec.device is None else []
    return [sys.executable, "-m", "statgrid", "iobench", *where, "--mode", spec.mode,
            "--rwmixread", str(spec.rwmixread), "--pattern", spec.pattern, "--bs", str(spec.bs_bytes),
            "--threads", str(spec.threads), "--size-per-thread", str(spec.size_per_thread_bytes),
            "--runs", str(spec.runs), "--barrier-dir", str(group), "--barrier-nodes", str(n_nodes),
            *(["--direct"] if spec.direct else []), *(["--fsync"] if spec.fsync else []),
            *(["--time", f"{spec.duration_s!r}s"] if spec.duration_s is not None else []),
            *(["--device", str(spec.device)] if spec.device is not None else []),
            *(["--destructive"] if spec.destructive else [])]


def run(cfg, spec: IOSpec, nodes: str, queue: str, echo: Callable[[str], None]) -> tuple[dict, Path]:
    """Run `spec` on the hosts `nodes` names ('all' or 'node1,node2') in `queue` ('' = the default);
    returns (the summarized result, the group directory holding each node's runs and result.json).
    Raises UsageError / StatgridError (the jobs submitted so far killed first); on Ctrl-C the jobs
    are killed (they remove their files) and KeyboardInterrupt goes on."""
    grid = GridClient(cfg)
    mine = grid.jobs(mine=True, states=["RUN", "PEND"])
    queue, chosen = grid_nodes(cfg, nodes, queue, grid.hosts(), mine)
    group = cfg.home / "iobench" / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    group.mkdir(parents=True)
    argv = job_argv(spec, group, len(chosen))
    batch = Batch(grid)
    # Ctrl-C kills them; a StatgridError does not (_give_up has killed them, or the master does not answer)
    with batch.guard(spare=(StatgridError,)):
        for n in chosen:
            try:
                rec = batch.submit(argv + ["--node", n, "--raw-out", str(group / f"{n}.npz")], queue=queue,
                                   hosts=[n], name=f"iobench-{n}")
            except StatgridError as exc:
                _give_up(batch, exc)
            # The master dispatches on submit: a job still PEND in the answer cannot start now (the
            # grid changed since the check above) and would leave the others waiting at the barrier.
            if rec["state"] == "PEND":
                _give_up(batch, StatgridError(
                    f"iobench job {rec['id']} on {n} did not start at once (PEND in queue {queue!r}; see `statgrid "
                    "hosts` and `statgrid jobs -u all`); try again when those hosts are free."))
        echo(f"iobench jobs {', '.join(map(str, batch.ids))} on {', '.join(chosen)}; results in {group}")
        jobs = batch.wait_all(stop_on_failure=True)      # one ending badly: the others would wait for it
    failed = sorted((j for j in jobs if j["state"] != "DONE"), key=lambda j: j["state"] != "EXIT")  # the cause first
    if failed:
        tail = grid.peek(failed[0]["id"], PEEK_BYTES)["text"]
        raise StatgridError(f"iobench job {failed[0]['id']} on {failed[0]['host']} ended {failed[0]['state']} "
                            f"({failed[0]['exit_reason']}); its output ends with:\n{tail}")
    result = iobench_out.summarize(spec, iobench_out.group_by_run([load_runs(group / f"{n}.npz") for n in chosen]))
    (group / "result.json").write_text(iobench_out.to_json(result))
    return result, group


def _give_up(batch: Batch, exc: StatgridError) -> None:
    """Kill the iobench jobs submitted so far (none may wait at the barrier for a job that will not
    come), then raise `exc`, saying so."""
    if batch.ids:
        batch.client.kill(batch.ids)
        batch.client.wait(batch.ids, timeout_s=60)
        exc = type(exc)(f"{exc} (iobench jobs {', '.join(map(str, batch.ids))} were killed.)")
    raise exc
