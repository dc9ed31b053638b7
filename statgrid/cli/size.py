"""`statgrid size BUNDLE --sessions N [--what-if nodes=…,slots=…,mbps=…] [--json]`: sizing from a bench
mixed bundle (statgrid/advise/size.py). One result record; the terminal text and --json both come from it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from statgrid.cli.common import call, fail
from statgrid.errors import UsageError


def size(ctx: typer.Context,
         bundle: Path = typer.Argument(..., help="A `bench mixed` (or demo, or bench scale step) results directory."),
         sessions: Optional[int] = typer.Option(None, "--sessions", help="Sessions to size for (default: the "
                                                "bundle's)."),
         users: Optional[int] = typer.Option(None, "--users", help="Users to size for (with --sessions-per-user)."),
         sessions_per_user: float = typer.Option(1.0, "--sessions-per-user",
                                                 help="Sessions each user runs at once (with --users)."),
         cores_per_node: Optional[float] = typer.Option(None, "--cores-per-node", help="Cores of a node of the "
                                                        "grid to size (default: the measured node's real CPUs)."),
         what_if: Optional[str] = typer.Option(None, "--what-if", metavar="KEY=VALUE,…",
                                               help="Replay the measured jobs on a simulated grid: nodes, slots (per "
                                               "node), cores (per node), mbps (the storage's sustained MB/s), "
                                               "shared (cores the nodes share on one machine), ramp (s); e.g. "
                                               "nodes=4,slots=8,cores=8,mbps=2000."),
         fit: str = typer.Option("background", "--fit", help="The model's parameter fitted to the bundle: "
                                 "background (how much of the monitor's background load took CPU from the jobs), "
                                 "cores (the share of each core the jobs got), launch (a time per job using neither "
                                 "CPU nor storage) or none."),
         as_json: bool = typer.Option(False, "--json", help="Print the result record as JSON.")) -> None:
    """Size a grid for N sessions from a bundle's measured jobs (cores, memory, nodes, MB/s, with the
    MB/s-per-core rule), checked by the what-if model; --what-if replays the jobs on another grid shape."""
    from statgrid.advise import size as sz

    n = _sessions(ctx, sessions, users, sessions_per_user)
    shape = call(ctx, sz.parse_what_if, what_if) if what_if is not None else None
    m = call(ctx, sz.load, bundle)
    result = call(ctx, sz.size, m, n if n is not None else m.workload.sessions, cores_per_node, shape,
                  users, sessions_per_user if users is not None else None, fit=fit)
    typer.echo(json.dumps(result.to_dict(), indent=1) if as_json else text(result))


def _sessions(ctx, sessions: int | None, users: int | None, per_user: float) -> int | None:
    if sessions is not None and users is not None:
        fail(ctx, UsageError("give --sessions N or --users U [--sessions-per-user s], not both."))
    if sessions is not None and sessions < 1:
        fail(ctx, UsageError(f"--sessions {sessions} must be at least 1 (the sessions to size the grid for)."))
    if users is None:
        return sessions
    if users < 1:
        fail(ctx, UsageError(f"--users {users} must be at least 1."))
    if not per_user > 0:
        fail(ctx, UsageError(f"--sessions-per-user {per_user!r} must be > 0 (e.g. 1, or 0.5 when half the "
                             "users are active at once)."))
    return max(1, round(users * per_user))


def _num(x: float | None, digits: int = 1) -> str:
    from statgrid.report.model import fmt

    return fmt(None if x is None else float(x), digits)


def _gb(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:,.2f} GiB"


def text(r) -> str:
    """The terminal view of a SizeResult."""
    me, ps, ne, tg, cal = r.measured, r.per_session, r.needed, r.target, r.calibration
    shared = " (shared by the nodes: one machine)" if me["cores_shared"] else ""
    who = (f"{tg['users']} users × {tg['sessions_per_user']:g} session(s) each = " if tg["users"] else "")
    lines = [
        f"sizing from {r.bundle} ({r.workload})",
        f"measured: {me['sessions']} sessions, {me['jobs']} jobs ({me['jobs_done']} DONE), clock {_num(me['clock_s'])} s "
        f"on {me['nodes']} node(s) × {me['slots_per_node']} slots, {_num(me['cores'], 0)} core(s){shared}",
        f"  CPU {_num(me['cpu_s'])} s ({_num(me['busy_cores'], 2)} cores busy on average), I/O "
        f"{_num(me['io_bytes'] / 1e6)} MB ({_num(me['mb_s'])} MB/s, {_num(me['mb_s_per_core'])} MB/s per core)",
        f"  per job: wall {_num(me['job_wall_s_mean'])} s, CPU {_num(me['job_cpu_s_mean'])} s (means), peak memory "
        f"{_gb(me['job_memory_bytes_max'])} (largest)",
        f"  per session: {_num(ps['jobs'])} jobs, CPU {_num(ps['cpu_s'])} s, I/O {_num(ps['io_bytes'] / 1e6)} MB",
        "",
        f"for {who}{tg['sessions']} sessions ({tg['jobs']} jobs) in the measured clock ({_num(ne['clock_s'])} s):",
        f"  cores      {_num(ne['cores'], 0)}  ({ne['nodes']} node(s) × {_num(ne['cores_per_node'], 0)}; "
        f"{_num(ne['cores_floor'])} with every core busy all the time)",
        f"  nodes      {ne['nodes']}  (arithmetic {ne['nodes_arithmetic']}; the model's check below)",
        f"  slots      {ne['slots']}  ({_slots_note(me, ne)})",
        f"  memory     {_gb(ne['memory_bytes'])}  ({_gb(ne['memory_bytes_per_node'])} per node: every slot "
        "running the largest job)",
        f"  storage    {_num(ne['mb_s'])} MB/s sustained  ({_num(ne['mb_s_per_core'])} MB/s per core)",
        "",
        "MB/s per core: what the measured jobs imply vs the rule",
    ]
    for rule in r.rules:
        lines.append(f"  {rule['rule']:<14} {_num(rule['mb_s_per_core_low'], 0)}–{_num(rule['mb_s_per_core_high'], 0)}"
                     f" MB/s per core → {_num(rule['mb_s_low'], 0)}–{_num(rule['mb_s_high'], 0)} MB/s for "
                     f"{_num(ne['cores'], 0)} cores; measured {_num(rule['measured_mb_s_per_core'])} MB/s per core "
                     f"= {_num(rule['measured_vs_rule'], 2)} × the rule's low end")
    fitted = {"cores": f"the jobs got {cal['core_share']:.0%} of each core", "none": "nothing fitted",
              "background": f"{cal['background_factor']:.2f} × the measured background load "
                            f"({_num(me['background_per_core'], 2)} other runnable threads per core)",
              "launch": f"{_num(cal['launch_s'], 2)} s per job using neither CPU nor storage"}[cal["fit"]]
    lines += ["", f"model check (event-driven replay with the grid's placement policy; fitted to the bundle: {fitted};"
              f" its own replay {_num(cal['bare_clock_s'])} s before the fit, {_num(cal['measured_clock_s'])} s "
              "measured):",
              f"  {ne['nodes']} node(s): clock {_num(ne['model_clock_s'])} s; target {_num(ne['target_clock_s'])} s "
              f"(+{ne['tolerance']:.0%} over " + ("the measured clock)" if ne['unconstrained_clock_s'] <= ne['clock_s']
                                                   else f"{_num(ne['unconstrained_clock_s'])} s, the clock of a grid "
                                                   "with a core for every job: the sessions' own job chains and ramp "
                                                   "bound it)")]
    if ne["model_clock_s"] > ne["target_clock_s"]:
        lines.append("  the model's clock stays over the target even with a slot and a core for every job")
    lines += _what_if_lines("model", r.model)
    if r.what_if is not None:
        w = r.what_if
        mbps = "unlimited" if w.mbps is None else f"{_num(w.mbps, 0)} MB/s"
        cores = (f"{_num(w.shared_cores, 0)} cores shared" if w.shared_cores is not None
                 else f"{_num(w.cores_per_node, 0)} core(s) each")
        lines += ["", f"what-if: {w.sessions} sessions ({w.jobs} jobs, ramp {_num(w.ramp_s)} s) on {w.nodes} node(s) × "
                  f"{w.slots} slots, {cores}, storage {mbps}:",
                  f"  predicted clock {_num(w.clock_s)} s (measured {_num(me['clock_s'])} s for {me['sessions']} "
                  "sessions)"]
        lines += _what_if_lines("what-if", w)
    return "\n".join(lines)


def _slots_note(me: dict, ne: dict) -> str:
    """How the slots per node were chosen: as measured, or — when the measured hosts shared one machine, which
    sizing counts as one node — the hosts' slots summed (not any one grid host's slots)."""
    if not me["cores_shared"]:
        return f"{ne['slots_per_node']} per node, as measured"
    return (f"{ne['slots_per_node']} per node: the measured {me['nodes']} grid hosts × {me['slots_per_node']} slots "
            f"shared one machine of {_num(me['cores'], 0)} core(s), sized as one node")


def _what_if_lines(_name: str, w) -> list[str]:
    if w is None:
        return []
    shown = w.per_node[:8]
    out = [f"  {p['host']:<8} {p['jobs']:>4} jobs  {_num(p['busy_cores'], 2):>6} cores busy  {_num(p['mb_s']):>8} MB/s"
           for p in shown]
    if len(w.per_node) > len(shown):
        out.append(f"  … and {len(w.per_node) - len(shown)} more node(s)")
    return out
