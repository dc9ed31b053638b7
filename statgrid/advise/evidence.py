"""What the rules read, by name (rules_data's docstring lists the names): the inventory (a bundle's
inventory.json, or one collected now) and the figures of a run — the report's summary figures, and per
grid host and per job what the job records and the monitor's series say about the time each job ran.

items() turns both into the rules' items: scope → [(subject, namespace)], a namespace being a flat dict
of dotted names ("lib.gpfs.pagepool_bytes") to values. Nothing here decides anything: the conditions
are in rules_data.
"""
from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statgrid.errors import StatgridError, UsageError

INVENTORY_FILE = "inventory.json"
INVENTORY_SCHEMA = 1


@dataclass
class RunFigures:
    """A bundle's measured figures: run (grid-wide), hosts (grid host → figures), jobs (job id → figures)."""
    run: dict[str, Any]
    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: dict[int, dict[str, Any]] = field(default_factory=dict)


# -- the inventory -----------------------------------------------------------------------------------
def _inventory_module():
    """statgrid.monitor.inventory (the "inventory" part of issue 29), or None where it is not installed."""
    try:
        from statgrid.monitor import inventory
    except ImportError:
        return None
    return inventory if hasattr(inventory, "collect") else None


def bundle_inventory(bundle: Path, meta: dict) -> tuple[dict | None, str]:
    """(inventory, where it came from) of a bundle: its inventory.json; for a bundle saved before statgrid
    wrote one, the little bundle.json and grid.toml say (this machine's CPUs and memory, the grid's slots)."""
    path = Path(bundle) / INVENTORY_FILE
    if path.is_file():
        mod = _inventory_module()
        if mod is not None and hasattr(mod, "load"):
            return mod.load(bundle), "the bundle's inventory.json"
        try:
            inv = json.loads(path.read_text())
        except ValueError as exc:
            raise StatgridError(f"{str(path)!r} is not valid JSON ({exc}); remove it or run the benchmark "
                                "again.") from None
        if not isinstance(inv, dict) or inv.get("schema") != INVENTORY_SCHEMA:
            raise StatgridError(f"{str(path)!r} is not an inventory of schema {INVENTORY_SCHEMA}; use the "
                                "statgrid that wrote it.")
        return inv, "the bundle's inventory.json"
    return _inventory_from_meta(meta), ("bundle.json (this bundle has no inventory.json: only the machine's CPUs "
                                        "and memory and the grid's slots are known)")


def _inventory_from_meta(meta: dict) -> dict:
    host = meta.get("host") or {}
    machine = host.get("hostname") or "machine"
    grid = meta.get("grid") or {}
    hosts = {}
    if grid.get("embedded") and grid.get("nodes"):
        for i in range(1, int(grid["nodes"]) + 1):
            hosts[f"node{i}"] = {"slots": grid.get("slots"), "machine": machine, "open": True}
    return {"schema": INVENTORY_SCHEMA, "nodes": {machine: {"threads": host.get("cpus"), "mem_bytes":
                                                            host.get("mem_bytes"), "kernel": host.get("kernel")}},
            "libraries": {}, "session": {},
            "grid": {"hosts": hosts, "master_host": machine if grid.get("embedded") else None}}


def live_inventory(cfg) -> tuple[dict | None, str]:
    """(inventory of this machine and grid now, where from), or (None, why not)."""
    mod = _inventory_module()
    if mod is None:
        return None, "no inventory: this statgrid has no statgrid.monitor.inventory"
    return mod.collect(cfg), "collected now on this machine"


# -- a run's figures ---------------------------------------------------------------------------------
def run_figures(meta: dict, jobs: list[dict], series, summary: dict) -> RunFigures:
    """The figures of a bundle: meta, jobs and series as the report loads them (report.build.load_mixed), and
    summary, the report's summary figures of the run (report.tables.summary_figures, plus
    mb_s_peak_per_machine) — handed in by the report, which stands above advise and computes them once."""
    from statgrid.job.figures import cpu_real, job_times, mean_present, wall_s
    from statgrid.job.accounting import JobRusage

    from statgrid.advise import ownio

    run = dict(summary)
    run.update(ownio.run_io(meta, jobs, series, summary))
    machine_of: dict[str, str] = {}
    if series is not None:
        machine_of = {h: m for m, hs in series.hosts_of.items() for h in hs}
        for res, kind in (("cpu", "some"), ("io", "some"), ("memory", "some")):
            key = f"psi_{res}_{kind}_pct"
            run[key] = mean_present([r.get(key) for r in series.node_rows])
    hosts: dict[str, dict] = {}
    for j in jobs:
        if j.get("host"):
            h = hosts.setdefault(j["host"], {"jobs": 0, "real_s": 0.0, "cpu_s": 0.0, "ratios": []})
            t = job_times(j)
            h["jobs"] += 1
            h["real_s"] += t["real_s"] or 0
            h["cpu_s"] += t["user_cpu_s"] + t["sys_cpu_s"]
            h["ratios"].append(cpu_real(j))
    for h in hosts.values():
        h["cpu_real_mean"] = mean_present(h.pop("ratios"))
    run["hosts"] = len(hosts)
    run["host_real_mean"] = sum(h["real_s"] for h in hosts.values()) / len(hosts) if hosts else None
    per_job = {}
    samples = _Samples(series) if series is not None else None
    for j in jobs:
        ru = JobRusage.parse(j.get("rusage")) or JobRusage()
        wall = wall_s(j)
        own = ownio.job_io_bytes(j)
        f = {"cpu_real": cpu_real(j), "wall_s": wall, "host": j.get("host"), "template": j.get("template"),
             "kind": j.get("kind"), "max_rss_bytes": ru.max_rss_bytes,
             "major_faults_per_s": ru.page_faults / wall if wall and ru.page_faults is not None else None,
             "own_io_bytes": own, "own_io_mb_s": own / 1e6 / wall if own is not None and wall else None}
        f["own_io"] = f"{f['own_io_mb_s']:.1f} MB/s" if f["own_io_mb_s"] is not None else "not in its record"
        m = machine_of.get(j.get("host"))
        if samples is not None and m is not None and j.get("start_ts") and j.get("end_ts"):
            f.update(samples.window(m, j["start_ts"], j["end_ts"]))
        per_job[j["id"]] = f
    return RunFigures(run, hosts, per_job)


class _Samples:
    """A series' node samples per machine in time order, and its busiest device per sample, so each job's
    window is a bisection, not a scan of the whole run."""

    def __init__(self, series):
        self.interval = {m: series.intervals.get(m, series.interval_s) for m in series.machines}
        self.rows: dict[str, list[dict]] = {}
        for r in sorted(series.node_rows, key=lambda r: r["ts"]):
            self.rows.setdefault(r["host"], []).append(r)
        self.ts = {m: [r["ts"] for r in rows] for m, rows in self.rows.items()}
        self.util: dict[tuple[str, float], float] = {}
        self.dev_bps: dict[tuple[str, float], float] = {}      # the machine's devices' bytes/s, read + write
        for r in series.device_rows:
            key = (r["host"], r["ts"])
            if r.get("util_pct") is not None:
                self.util[key] = max(self.util.get(key, 0.0), r["util_pct"])
            if r.get("read_bytes_per_s") is not None or r.get("write_bytes_per_s") is not None:
                self.dev_bps[key] = (self.dev_bps.get(key, 0.0) + (r.get("read_bytes_per_s") or 0)
                                     + (r.get("write_bytes_per_s") or 0))

    def window(self, machine: str, start: float, end: float) -> dict:
        """The machine's samples over a job's run, averaged: a sample at ts covers (ts − interval, ts]; the
        samples overlapping [start, end] count (the first one after start for a job shorter than a sample)."""
        rows, ts = self.rows.get(machine, []), self.ts.get(machine, [])
        lo = bisect.bisect_right(ts, start)
        hi = bisect.bisect_left(ts, end + self.interval.get(machine, 1.0))
        picked = rows[lo:hi] or rows[lo:lo + 1]

        def mean(key):
            vals = [r[key] for r in picked if r.get(key) is not None]
            return sum(vals) / len(vals) if vals else None

        busy = [(r["cpu_user_pct"] or 0) + (r["cpu_system_pct"] or 0) for r in picked
                if r.get("cpu_user_pct") is not None]
        util = [self.util[(machine, r["ts"])] for r in picked if (machine, r["ts"]) in self.util]
        dev = [self.dev_bps[(machine, r["ts"])] for r in picked if (machine, r["ts"]) in self.dev_bps]
        return {"node_dev_mb_s": sum(dev) / len(dev) / 1e6 if dev else None,
                "node_cpu_busy_pct": sum(busy) / len(busy) if busy else None, "node_iowait_pct": mean("cpu_iowait_pct"),
                "psi_cpu_some_pct": mean("psi_cpu_some_pct"), "psi_io_some_pct": mean("psi_io_some_pct"),
                "psi_memory_some_pct": mean("psi_memory_some_pct"),
                "dev_util_pct": sum(util) / len(util) if util else None, "samples": len(picked)}


# -- the rules' items --------------------------------------------------------------------------------
def flat(prefix: str, value: Any, out: dict | None = None) -> dict:
    """{"a": {"b": 1}} under prefix p → {"p.a.b": 1}; lists and scalars stay values."""
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            flat(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = value
    return out


def _weights(spec: str) -> list[tuple[str, int]]:
    out = []
    for token in str(spec or "").split():
        name, _, w = token.partition("+")
        out.append((name, int(w) if w.isdigit() else 0))
    return out


def _table(value: Any) -> dict:
    """value when it is a table (dict), else {} (an inventory edited or damaged by hand reads as not known)."""
    return value if isinstance(value, dict) else {}


def grid_hosts(inv: dict | None) -> dict[str, dict]:
    """The inventory's grid hosts, name → record; entries that are not records are left out."""
    hosts = _table(_table((inv or {}).get("grid")).get("hosts"))
    return {str(name): rec for name, rec in hosts.items() if isinstance(rec, dict)}


def _slots(rec: dict) -> int | None:
    """A host record's slots when they are a whole number ≥ 0 (None: unknown, e.g. a host that joins)."""
    v = rec.get("slots")
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def grid_values(inv: dict) -> dict:
    """The grid's shape: machines, cores, threads, slots, whether the master's machine runs jobs and
    whether every queue prefers other hosts to it (LSF HOSTS syntax: host+weight, others, all)."""
    grid = _table(inv.get("grid"))
    hosts = grid_hosts(inv)
    nodes = inv.get("nodes") or {}
    machines = {h.get("machine") for h in hosts.values() if h.get("machine")} or set(nodes)
    master = grid.get("master_host")
    on_master = [n for n, h in hosts.items() if h.get("machine") == master and master is not None]
    runs = any(hosts[n].get("open", True) and (_slots(hosts[n]) or 0) > 0 for n in on_master)
    down = None
    queues = _table(grid.get("queues"))
    if master is not None and queues:
        down = True
        for q in queues.values():
            w = _weights(q.get("hosts") if isinstance(q, dict) else q)
            named = dict(w)
            others = named.get("others", 0)
            mine = max((named.get(n, others) for n in on_master), default=0)
            theirs = max([v for n, v in w if n not in on_master], default=0)
            if not mine < theirs:
                down = False
    cores = [n.get("cores") for n in nodes.values()]
    threads = [n.get("threads") for n in nodes.values()]
    return {"grid.machines": len(machines), "grid.hosts": len(hosts),
            "grid.cores": sum(cores) if cores and None not in cores else None,
            "grid.threads": sum(threads) if threads and None not in threads else None,
            "grid.slots_total": sum(_slots(h) or 0 for h in hosts.values()) if hosts else None,
            "grid.master_runs_jobs": runs if master is not None else None, "grid.master_weighted_down": down,
            "grid.dispatch_interval_s": grid.get("dispatch_interval_s")}


def host_shares(inv: dict | None, figures: RunFigures) -> dict[str, dict]:
    """Grid host → its work in the run (jobs, real_s, …: RunFigures.hosts) and its share of the work,
    share_real_s. The hosts are the grid's shape — every open host of the inventory with slots, whether or not
    it ran a job (a host with slots and no job is the worst imbalance) — and any other host that ran jobs.
    The share is the hosts' summed real time split by their slots (equally when a host's slots are unknown)."""
    shape = grid_hosts(inv)
    hosts = {h: dict(f) for h, f in figures.hosts.items()}
    for name, rec in shape.items():
        if name in hosts:
            continue
        if rec.get("open", True) is not False and (_slots(rec) or 0) > 0:
            hosts[name] = {"jobs": 0, "real_s": 0.0, "cpu_s": 0.0, "cpu_real_mean": None}
    slots = {h: _slots(shape.get(h) or {}) for h in hosts}
    total = sum(f.get("real_s") or 0.0 for f in hosts.values())
    by_slots = all(isinstance(n, int) and n > 0 for n in slots.values())
    for h, f in hosts.items():
        f["slots"] = slots[h]
        f["share_real_s"] = (total * slots[h] / sum(slots.values()) if by_slots
                             else total / len(hosts)) if hosts else None
    return hosts


def _library_values(rec: dict) -> dict:
    ns = flat("", rec)
    ns["has_device"] = bool(rec.get("devices"))
    devices = rec.get("devices") or []
    ns["devices"] = ", ".join(devices) if devices else None
    return ns


def items(inv: dict | None, figures: RunFigures | None, site: dict | None = None) -> dict[str, list]:
    """scope → [(subject, namespace)] for the rules (see rules_data for the names)."""
    inv = inv or {}
    common: dict[str, Any] = {}
    common.update(flat("session", inv.get("session") or {}))
    common.update(flat("site", site or {}))
    libs = inv.get("libraries") or {}
    for name in ("DATA", "WORK", "UTIL"):
        if name in libs:
            common.update(flat(name, _library_values(libs[name])))
    if inv:
        common.update(grid_values(inv))
    shares = host_shares(inv, figures) if figures is not None else {}
    if figures is not None:
        common.update(flat("run", {k: v for k, v in figures.run.items() if not k.startswith("lib:")}))
        if shares:
            common["run.hosts"] = len(shares)
            common["run.host_real_mean"] = sum(h["real_s"] for h in shares.values()) / len(shares)
    out: dict[str, list] = {"grid": [("grid", dict(common))] if inv or figures else []}
    hosts = grid_hosts(inv)
    out["machine"] = []
    for machine, node in (inv.get("nodes") or {}).items():
        mine = [h for h in hosts.values() if h.get("machine") == machine]
        ns = {**common, **flat("node", node), "machine.hosts": len(mine),
              "machine.slots": sum(_slots(h) or 0 for h in mine) if mine else None}
        out["machine"].append((machine, ns))
    groups: dict[tuple, list[str]] = {}
    for name, rec in libs.items():
        key = (rec.get("host"), rec.get("mount_point") or rec.get("path"), rec.get("source"))
        groups.setdefault(key, []).append(name)
    out["library"] = []
    for (host, mount, source), names in groups.items():
        rec = libs[names[0]]
        where = f"{source or '?'} ({rec.get('fs_type') or '?'}"
        where += f", {'/'.join(rec['devices'])})" if rec.get("devices") else ")"
        several_hosts = len({k[0] for k in groups}) > 1           # libraries seen from more than one machine
        subject = f"{', '.join(names)} on {where}" + (f" of {host}" if several_hosts and host else "")
        out["library"].append((subject, {**common, **flat("lib", _library_values(rec)), "lib.names": names}))
    out["host"], out["job"] = [], []
    if figures is not None:
        for h, f in sorted(shares.items()):
            out["host"].append((h, {**common, **flat("host", f)}))
        for jid, f in sorted(figures.jobs.items()):
            out["job"].append((f"job {jid} {f.get('template') or ''} on {f.get('host') or '?'}".strip(),
                               {**common, **flat("job", f), "job.id": jid}))
    return out


# -- --set NAME=VALUE ---------------------------------------------------------------------------------
SITE_FACTS = {"stripe_bytes": "the storage's stripe size (e.g. 1M)",
              "required_mb_s": "the MB/s one node must sustain",
              "storage_mb_s": "what the storage sustains, all nodes at once (e.g. from `statgrid iobench`)"}


def parse_site(pairs: list[str]) -> dict:
    """--set NAME=VALUE → {name: number}; sizes (…_bytes) take K/M/G as grid.toml does."""
    from statgrid.config.units import parse_size_bytes

    out = {}
    for pair in pairs or []:
        name, eq, value = pair.partition("=")
        name = name.strip()
        if not eq or name not in SITE_FACTS:
            known = ", ".join(f"{k} ({v})" for k, v in SITE_FACTS.items())
            raise UsageError(f"--set {pair!r}: give NAME=VALUE with NAME one of {known}; e.g. --set stripe_bytes=1M.")
        try:
            if name.endswith("_bytes"):
                out[name] = parse_size_bytes(value.strip())
            else:
                out[name] = float(value)
                if not re.fullmatch(r"\s*\d+(\.\d+)?\s*", value) or out[name] <= 0:
                    raise ValueError
        except ValueError:
            raise UsageError(f"--set {pair!r}: {value!r} is not a positive "
                             f"{'size such as 1M' if name.endswith('_bytes') else 'number of MB/s such as 1600'}."
                             ) from None
    return out


# -- the whole check ----------------------------------------------------------------------------------
@dataclass
class Advice:
    """What `statgrid advise` found: every rule's results, and where the inventory came from."""
    results: list
    inventory_from: str
    bundle: str | None = None

    def to_json(self) -> list[dict]:
        return [r.to_json() for r in self.results]

    def job_flags(self) -> dict[int, str]:
        """job id → its job findings' labels, joined (the report's per-job flag column)."""
        flags: dict[int, list[str]] = {}
        for r in self.results:
            if r.rule.scope == "job" and r.status == "failed":
                for it in r.items:
                    flags.setdefault(it["id"], []).append(it["label"])
        return {k: "; ".join(v) for k, v in flags.items()}


def _items_of(inv, figures, site, what: str) -> dict[str, list]:
    """items(), or a StatgridError naming the file when a value of the wrong sort (an inventory edited by hand:
    a list where a table belongs, text where a number does) stops the rules' items being built."""
    try:
        return items(inv, figures, site)
    except (TypeError, AttributeError, ValueError) as exc:
        raise StatgridError(f"{what} holds a value of the wrong sort ({type(exc).__name__}: {exc}); remove the "
                            "file or run the benchmark again (`statgrid inventory --json` shows a good one).") from None


def advise_live(cfg, site: dict | None = None, rules=None) -> Advice:
    """The rules on this machine and grid now: an inventory collected now, no run figures."""
    from statgrid.advise.rules import evaluate
    from statgrid.advise.rules_data import RULES

    inv, where = live_inventory(cfg)
    ns = _items_of(inv, None, site, "the inventory collected now")
    return Advice(evaluate(RULES if rules is None else rules, ns, has_run=False), where)


def check_bundle(bundle: Path) -> Path:
    """The bundle directory, or a UsageError naming what it is not (a StatgridError naming the part this user may
    not read: advise.access)."""
    from statgrid.advise.access import readable_bundle

    bundle = readable_bundle(bundle)
    if not bundle.is_dir() or not (bundle / "bundle.json").is_file():
        what = "does not exist" if not bundle.exists() else "is not a `bench mixed` results bundle (no bundle.json)"
        steps = sorted(p.parent.name for p in bundle.glob("*/bundle.json")) if bundle.is_dir() else []
        if (bundle / "scale.json").is_file() and steps:
            what = (f"is a `bench scale` directory: give one of its steps' bundles, e.g. "
                    f"{str(bundle / steps[0])!r}")
        raise UsageError(f"BUNDLE {str(bundle)!r} {what}; give a directory written by `statgrid bench mixed` or "
                         "`statgrid demo` (e.g. <home>/demo/ma10-…), or no BUNDLE to check this machine now.")
    return bundle


def advise_bundle(bundle: Path, loaded, summary: dict, site: dict | None = None, rules=None) -> Advice:
    """The rules on a bundle: its inventory and its run. loaded = (meta, jobs, series) and summary as
    run_figures takes them (report.build.advice gathers both: the report stands above advise)."""
    from statgrid.advise.rules import evaluate
    from statgrid.advise.rules_data import RULES

    bundle = check_bundle(bundle)
    meta, jobs, series = loaded
    inv, where = bundle_inventory(bundle, meta)
    figures = run_figures(meta, jobs, series, summary)
    ns = _items_of(inv, figures, site, f"{str(bundle / INVENTORY_FILE)!r} (or bundle.json)")
    return Advice(evaluate(RULES if rules is None else rules, ns, has_run=True), where,
                  str(bundle))
