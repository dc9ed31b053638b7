"""`statgrid inventory --hosts`: every grid host's machine inventoried where it runs.

One short grid job per host, pinned there (as `iobench --nodes` does), runs `statgrid inventory
--machine` with the grid's library paths: it prints that machine's nodes and libraries as JSON,
read back here with peek and merged into this machine's inventory (inventory.merge_machines). The
grid's own jobs are the way to a node that statgrid already has — the master runs them as you, on
the host you name, with no new endpoint; the cost is a slot on each host for about a second, and a
host with no free slot holds its job until `timeout_s`.
"""
from __future__ import annotations

import json
import sys

from statgrid.monitor import inventory
from statgrid.errors import StatgridError, UsageError

TIMEOUT_S = 120.0
PEEK_BYTES = 1 << 20            # one machine's record is a few KB; PEEK_MAX_BYTES


def job_argv(libraries: dict[str, str]) -> list[str]:
    argv = [sys.executable, "-m", "statgrid", "inventory", "--machine"]
    for name, path in libraries.items():
        argv += ["--library", f"{name}={path}"]
    return argv


def chosen_hosts(spec: str, known: list[str]) -> list[str]:
    """'all' or 'h1,h2' → host names, each one the grid has (UsageError naming the unknown ones)."""
    names = known if spec.strip() == "all" else [h.strip() for h in spec.split(",") if h.strip()]
    unknown = [h for h in names if h not in known]
    if unknown or not names:
        raise UsageError(f"--hosts {spec!r}: {', '.join(map(repr, unknown)) or 'no host'} is not a host of this grid; "
                         f"give 'all' or a comma list of {', '.join(known) or '(none: is the grid up?)'}.")
    return names


def collect_hosts(cfg, spec: str, timeout_s: float = TIMEOUT_S, echo=None, client=None) -> dict:
    """This machine's inventory with the machines of the grid hosts `spec` names merged in. A host
    whose job did not end DONE in time keeps machine null, with the reason in grid.hosts[h].inventory.
    client: the master to ask (default: this grid home's, GridClient(cfg))."""
    from statgrid.grid.interface.batch import Batch
    from statgrid.grid.interface.client import GridClient

    grid = client or GridClient(cfg)
    rows = grid.hosts()
    hosts = chosen_hosts(spec, [h["host"] for h in rows])
    # 'all' leaves out hosts that cannot run a job now (no worker, or closed by an administrator)
    skipped = {h["host"]: h["state"] for h in rows
               if spec.strip() == "all" and h["state"] in ("unavail", "closed_Adm")}
    hosts = [h for h in hosts if h not in skipped]
    inv = inventory.collect(cfg)
    libs = inventory.library_paths(cfg)
    batch = Batch(grid)
    machines: list[tuple[str, dict]] = []
    failed: dict[str, str] = {h: f"not asked: the host was {state}" for h, state in skipped.items()}
    with batch.guard():
        by_id = {}
        for h in hosts:
            rec = batch.submit(job_argv(libs), hosts=[h], name=f"inventory-{h}")
            by_id[int(rec["id"])] = h
        if echo:
            echo(f"inventory jobs {', '.join(map(str, batch.ids))} on {', '.join(hosts)}")
        for rec, timed_out in batch.wait_each(timeout_s):
            h = by_id[int(rec["id"])]
            if rec["state"] != "DONE":
                failed[h] = (f"job {rec['id']} " + (f"found no free slot in {timeout_s:g} s" if timed_out else
                                                    f"ended {rec['state']} ({rec.get('exit_reason')})"))
                continue
            text = grid.peek(rec["id"], PEEK_BYTES)["text"]
            try:
                machines.append((h, json.loads(text[text.index("{"):])))
            except ValueError:
                failed[h] = f"job {rec['id']} printed no inventory (see `statgrid peek {rec['id']}`)"
    if not machines:
        raise StatgridError("no host's inventory came back: " + "; ".join(f"{h}: {why}" for h, why in failed.items()))
    inventory.merge_machines(inv, machines)
    for h, why in failed.items():
        inv["grid"]["hosts"].setdefault(h, {})["inventory"] = why
    return inv


def for_run(cfg, embedded: bool, timeout_s: float = 60.0) -> dict:
    """The inventory a `bench mixed` run keeps: this machine's; on a running grid with hosts joined
    from machines of their own, theirs too (one short grid job on each, as `inventory --hosts all`).
    If those jobs cannot run within timeout_s, this machine's alone, the reason in grid.note."""
    if embedded or cfg is None or not any(h.joins for h in cfg.hosts.values()):
        return inventory.collect(cfg, embedded=embedded)

    try:
        return collect_hosts(cfg, "all", timeout_s)
    except StatgridError as exc:
        inv = inventory.collect(cfg, embedded=embedded)
        inv["grid"]["note"] = f"the joined hosts' machines were not inventoried: {exc}"
        return inv
