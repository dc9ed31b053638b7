"""Sizing (issue 29 item 4): how big a grid must be for N sessions, from a `bench mixed` bundle's measured
jobs, with the MB/s-per-core rule beside it, and the what-if model's clock on the grid it proposes.

The arithmetic keeps the measured service: N sessions doing the measured sessions' work in the measured
workload clock (seed 000's Table 4 idea: the work per node stays the same as the grid grows):
    cores_needed  = N × CPU seconds per session ÷ clock        (every core busy: a floor)
    nodes_needed  = cores_needed ÷ the measured node's cores, rounded up
    MB/s needed   = N × bytes per session ÷ clock              (sustained, over the whole clock)
    memory/node   = slots × the largest job's peak memory       (every slot running the biggest job)
The rule of seeds 000/004 and SAS's guidance asks the storage for 90–150 (SAS: 100–150) MB/s per core:
for cores_needed cores that is a range of MB/s, printed beside what the measured jobs imply.

Then the what-if model (whatif.py) replays the N sessions on the proposed grid — the real placement
policy, shared CPU and storage — and if its clock is over the measured one by more than `tolerance`,
adds nodes until it is not: the answer's nodes are the model's. When even a grid with a slot and a core
for every job at once cannot give the measured clock (the sessions' own chains of jobs and their ramp
bound it), the target is that grid's clock instead, and the answer says so.

The model has one parameter fitted to the bundle itself, chosen so the replay of the bundle on its own grid
gives its measured clock (`calibrate`, reported as `calibration`): by default the share of each core the
jobs got (the grid's own master and monitors, and anything else on the machine, had the rest); or a time
per job that needs neither CPU nor storage (dispatch, process start, waits the model does not see).

The measured hardware is what the bundle says the nodes had (bundle.json grid.cpus: each embedded node's
own CPUs), not what grid.toml's slots claim: nodes without CPUs of their own shared the machine's.
"""
from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from statgrid.advise import whatif
from statgrid.bench import mixed
from statgrid.bench import workload as wl
from statgrid.errors import StatgridError, UsageError
from statgrid.job.accounting import JobRusage

# MB/s per core the storage should sustain: (low, high, source).
RULES = (("SAS guidance", 100.0, 150.0, "SAS's storage guidance, cited by seeds 000 and 004"),
         ("seeds 000/004", 90.0, 150.0, "seed 000 (Table 4 / Figure 10) and seed 004 (16 → 880 users)"))
TOLERANCE = 0.10                      # how far over the target clock the model's clock may be


@dataclass(frozen=True)
class MeasuredJob:
    """One job of the bundle: session, order, group (template), state, wall_s and its demand."""

    session: int
    order: int
    group: str
    state: str
    wall_s: float
    demand: whatif.JobDemand


@dataclass(frozen=True)
class Measured:
    """A bundle as the model sees it. clock_s: its workload clock; nodes, slots (per node); cores_per_node:
    the CPUs each node really had; shared_cores: when the nodes shared one machine, its CPUs (else None);
    resubmit_s: a session's median delay from a job's end to its next submit; background_per_core: other
    runnable threads per core during the workload (the monitor's load average less the grid's running jobs)."""

    path: Path
    workload: wl.Workload
    jobs: tuple[MeasuredJob, ...]
    clock_s: float
    nodes: int
    slots: int
    cores_per_node: float
    shared_cores: float | None
    resubmit_s: float
    background_per_core: float = 0.0
    grid_cfg: object = None

    @property
    def cores(self) -> float:
        return self.shared_cores if self.shared_cores is not None else self.cores_per_node * self.nodes

    def shape(self, **changes) -> whatif.GridShape:
        """The measured grid (changes: nodes, slots, cores, mbps, shared_cores)."""
        base = dict(nodes=self.nodes, slots=self.slots, cores=self.cores_per_node, shared_cores=self.shared_cores,
                    background_per_core=self.background_per_core)
        base.update(changes)
        cfg = self.grid_cfg
        queues = cfg.queues if cfg is not None else {"normal": whatif.QueueConfig("normal")}
        return whatif.GridShape(queues=queues, limits=whatif.limits_of(cfg), **base)


def load(path: str | Path) -> Measured:
    """A `bench mixed` bundle → Measured. Errors name the path and what is missing, or what this user may not read."""
    from statgrid.advise.access import readable_bundle

    path = readable_bundle(path)
    if not path.is_dir():
        raise UsageError(f"BUNDLE {str(path)!r} is not a directory: give a `bench mixed` results directory "
                         "(it holds bundle.json and jobs.jsonl).")
    if (path / "scale.json").is_file() and not (path / "bundle.json").is_file():
        steps = sorted(p.name for p in path.iterdir() if (p / "bundle.json").is_file())
        raise UsageError(f"BUNDLE {str(path)!r} is a bench scale directory; give one of its steps' bundles"
                         + (f", e.g. {str(path / steps[0])!r}." if steps else "."))
    meta, jobs = mixed.load_bundle(path)
    if meta.get("kind") != "statgrid-bench-mixed":
        raise StatgridError(f"{str(path)!r}: bundle.json is a {meta.get('kind')!r}, not a bench mixed bundle.")
    wtext = (path / "workload.toml").read_text() if (path / "workload.toml").is_file() else None
    if wtext is None:
        raise StatgridError(f"{str(path)!r} has no workload.toml; sizing needs the workload the jobs came from.")
    workload = wl.parse(wtext, str(path / "workload.toml"))
    t0 = meta["workload_start_ts"]
    out = []
    for j in jobs:
        ru = JobRusage.parse(j.get("rusage")) or JobRusage()
        wall = (j["end_ts"] - j["start_ts"]) if j.get("end_ts") and j.get("start_ts") else 0.0
        cpu_s = ru.cpu_s
        threads = max(1.0, cpu_s / wall) if wall > 0 else 1.0
        out.append(MeasuredJob(j["session"], j["order"], j.get("group") or j.get("template", "?"), j.get("state", "?"),
                               wall, whatif.JobDemand(cpu_s, float(ru.logical_io_bytes), threads, ru.max_rss_bytes,
                                                      0.0, j.get("template", ""))))
    if not out:
        raise StatgridError(f"{str(path)!r}: jobs.jsonl holds no job; nothing to size from.")
    grid = meta.get("grid") or {}
    host = meta.get("host") or {}
    cpus = grid.get("cpus") or {}
    nodes = grid.get("nodes") or len({j.get("host") for j in jobs if j.get("host")}) or 1
    own = [len(v) for v in cpus.values() if v]
    machine_cpus = float(host.get("cpus") or 1)
    if own and len(own) == len(cpus):
        cores_per_node, shared = float(statistics.mean(own)), None
    else:                                           # the nodes shared the machine: one pool of its CPUs
        cores_per_node, shared = machine_cpus / nodes, machine_cpus
    cfg = None
    if (path / "grid.toml").is_file():
        from statgrid.config import load_config
        try:
            cfg = load_config(path / "grid.toml", env={})
        except StatgridError:
            cfg = None
    clock_s = meta["end_ts"] - t0
    own_running = sum(j.wall_s for j in out) / clock_s if clock_s > 0 else 0.0
    return Measured(path, workload, tuple(out), clock_s, int(nodes), int(grid.get("slots") or 1),
                    cores_per_node, shared, _resubmit_s(jobs),
                    background_per_core(path / "grid" / "monitor", t0, meta["end_ts"], own_running, machine_cpus), cfg)


def background_per_core(monitor_dir: Path, start_ts: float, end_ts: float, own_running: float,
                        machine_cpus: float) -> float:
    """Other work's runnable threads per core while the workload ran: the monitor's 1-minute load average
    (its mean over the workload, the machine's: hosts on one machine see the same) less the grid's own
    running jobs (their summed wall time over the clock), over the machine's CPUs. 0 without a monitor.
    The load average lags by about a minute (an exponential average): a rough figure for a short run."""
    if not monitor_dir.is_dir():
        return 0.0
    from statgrid.monitor.store import load as load_series
    try:
        rows = load_series(monitor_dir, "node").to_pylist()
    except Exception:                       # a capture the store cannot read: no figure, not a failure
        return 0.0
    loads: dict[str, list[float]] = {}
    for r in rows:
        if start_ts <= r.get("ts", 0) <= end_ts and r.get("load_1m") is not None:
            loads.setdefault(r.get("host"), []).append(r["load_1m"])
    if not loads:
        return 0.0
    load = statistics.mean(statistics.mean(v) for v in loads.values())
    return max(0.0, load - own_running) / machine_cpus


def _resubmit_s(jobs: list[dict]) -> float:
    """The median gap between a session's job ending and its next job's submit (bench mixed polls)."""
    by_session: dict[int, list[dict]] = {}
    for j in jobs:
        by_session.setdefault(j["session"], []).append(j)
    gaps = []
    for js in by_session.values():
        js.sort(key=lambda j: j["order"])
        gaps += [b["submit_ts"] - a["end_ts"] for a, b in zip(js, js[1:])
                 if a.get("end_ts") and b.get("submit_ts") and b["submit_ts"] >= a["end_ts"]]
    return statistics.median(gaps) if gaps else 0.0


# -- the workload for N sessions ----------------------------------------------------------------------------
def scaled_workload(w: wl.Workload, sessions: int, ramp_s: float | None = None) -> wl.Workload:
    """`w`'s mix for `sessions` sessions: each group's count × sessions / w.sessions (largest remainders,
    total rounded), the same ramp unless given (bench scale keeps it as nodes grow)."""
    if sessions == w.sessions and ramp_s is None:
        return w
    exact = [g.count * sessions / w.sessions for g in w.groups]
    counts = [int(x) for x in exact]
    short = round(sum(exact)) - sum(counts)
    for i in sorted(range(len(exact)), key=lambda i: -(exact[i] - counts[i]))[:short]:
        counts[i] += 1
    groups = tuple(dataclasses.replace(g, count=c) for g, c in zip(w.groups, counts))
    return dataclasses.replace(w, sessions=sessions, groups=groups, ramp_s=w.ramp_s if ramp_s is None else ramp_s)


def session_plans(m: Measured, sessions: int, ramp_s: float | None = None,
                  launch_s: float = 0.0) -> list[whatif.SessionPlan]:
    """The sessions of `m`'s workload scaled to `sessions`, each job carrying a measured job's demand: the
    job of the same session and order when the schedule is the measured one, else the measured jobs of its
    group in turn."""
    w = scaled_workload(m.workload, sessions, ramp_s)
    exact = {(j.session, j.order): j for j in m.jobs}
    by_group: dict[str, list[MeasuredJob]] = {}
    for j in sorted(m.jobs, key=lambda j: (j.session, j.order)):
        by_group.setdefault(j.group, []).append(j)
    turn = {g: 0 for g in by_group}
    plans: dict[int, list[whatif.JobDemand]] = {}
    starts: dict[int, float] = {}
    for pj in w.schedule():
        hit = exact.get((pj.session, pj.order)) if w is m.workload else None
        if hit is None or hit.group != pj.group:
            pool = by_group.get(pj.group)
            if not pool:
                raise StatgridError(f"{str(m.path)!r}: no measured job of group {pj.group!r} to size its jobs by.")
            hit = pool[turn[pj.group] % len(pool)]
            turn[pj.group] += 1
        plans.setdefault(pj.session, []).append(dataclasses.replace(hit.demand, launch_s=launch_s))
        starts[pj.session] = pj.start_offset_s
    return [whatif.SessionPlan(starts[s], tuple(plans[s])) for s in sorted(plans)]


FITS = ("background", "cores", "launch", "none")


@dataclass(frozen=True)
class Calibration:
    """The model's one fitted parameter (see the module docstring). fit: which (FITS); background_factor:
    the share of the monitor's background load (Measured.background_per_core) that took CPU from the jobs;
    core_share: the fraction of each core the jobs got; launch_s: seconds per job using neither CPU nor
    storage; bare_clock_s: the replay of the bundle on its own grid before the fit (the background as
    measured, nothing else); measured_clock_s."""

    fit: str
    background_factor: float
    core_share: float
    launch_s: float
    bare_clock_s: float
    measured_clock_s: float
    resubmit_s: float

    def apply(self, shape: whatif.GridShape) -> whatif.GridShape:
        """`shape` (its background in the monitor's terms) as the fitted model runs it."""
        return dataclasses.replace(shape, cores=shape.cores * self.core_share,
                                   shared_cores=None if shape.shared_cores is None
                                   else shape.shared_cores * self.core_share,
                                   background_per_core=shape.background_per_core * self.background_factor)


def calibrate(m: Measured, fit: str = "background") -> Calibration:
    """Fit the model to the bundle: replaying it on its own grid gives its measured clock (bisection).
    fit="background": how much of the monitor's background load (other runnable threads) took CPU from the
    jobs, a factor in 0 … 4 (with no background measured: as "cores"); "cores": no background, the share of
    each core the jobs got; "launch": no background, a time per job that uses neither CPU nor storage;
    "none": the background as measured, nothing fitted."""
    if fit not in FITS:
        raise UsageError(f"--fit {fit!r} is not one of {', '.join(FITS)}.")
    if fit == "background" and m.background_per_core <= 0:
        fit = "cores"
    plans = {launch: session_plans(m, m.workload.sessions, launch_s=launch) for launch in (0.0,)}

    def clock(factor: float = 1.0, share: float = 1.0, launch_s: float = 0.0) -> float:
        cal = Calibration(fit, factor, share, launch_s, 0, 0, 0)
        p = plans.get(launch_s) or session_plans(m, m.workload.sessions, launch_s=launch_s)
        return whatif.replay(p, cal.apply(m.shape()), m.workload.concurrency, m.resubmit_s).makespan_s
    bare = clock()
    target = m.clock_s

    def bisect(f, lo: float, hi: float, rising: bool) -> float:
        """x in lo … hi where f(x) meets the target (f rising or falling in x); an end if it never does."""
        if (f(lo) >= target) == rising:
            return lo
        if (f(hi) < target) == rising:
            return hi
        for _ in range(30):
            mid = (lo + hi) / 2
            if (f(mid) < target) == rising:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2
    factor, share, launch_s = (1.0 if fit == "none" else 0.0), 1.0, 0.0
    if fit == "background":
        factor = bisect(lambda x: clock(factor=x), 0.0, 4.0, rising=True)
    elif fit == "cores":
        share = bisect(lambda x: clock(factor=0.0, share=x), 0.01, 4.0, rising=False)
    elif fit == "launch":
        hi = max(1.0, max(j.wall_s for j in m.jobs))
        while clock(factor=0.0, launch_s=hi) < target and hi < 1e6:
            hi *= 2
        launch_s = bisect(lambda x: clock(factor=0.0, launch_s=x), 0.0, hi, rising=True)
    return Calibration(fit, factor, share, launch_s, bare, target, m.resubmit_s)


# -- the answer ---------------------------------------------------------------------------------------------
@dataclass
class WhatIf:
    """A replay's answer on one grid shape: shape, predicted clock and per node figures."""

    nodes: int
    slots: int
    cores_per_node: float
    shared_cores: float | None
    mbps: float | None
    background_per_core: float
    sessions: int
    ramp_s: float
    jobs: int
    clock_s: float
    per_node: list[dict] = field(default_factory=list)    # host, jobs, busy_cores, mb_s


@dataclass
class SizeResult:
    """One record for the terminal and JSON. Units in the names; MB = 10⁶ bytes."""

    bundle: str
    workload: str
    measured: dict
    per_session: dict
    target: dict
    needed: dict
    rules: list[dict]
    calibration: dict
    model: WhatIf | None = None          # the replay on the grid sized here
    what_if: WhatIf | None = None        # the replay on the shape asked for

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["schema"] = 1
        return d


def run_what_if(m: Measured, sessions: int, cal: Calibration, nodes: int | None = None, slots: int | None = None,
                cores: float | None = None, mbps: float | None = None, shared_cores: float | None = None,
                ramp_s: float | None = None, background: float | None = None) -> WhatIf:
    """Replay `sessions` sessions of the bundle's workload on a grid shape (unset: the measured one's)."""
    changes = {k: v for k, v in (("nodes", nodes), ("slots", slots), ("cores", cores)) if v is not None}
    if cores is not None or shared_cores is not None:
        changes["shared_cores"] = shared_cores            # cores per node given: each node's own, unless shared
    # else: the measured nodes' CPUs — their own, or the one machine's that they shared
    changes["mbps"] = math.inf if mbps is None else mbps
    if background is not None:
        changes["background_per_core"] = background
    shape = m.shape(**changes)
    fitted = cal.apply(shape)
    plans = session_plans(m, sessions, ramp_s, cal.launch_s)
    r = whatif.replay(plans, fitted, m.workload.concurrency, m.resubmit_s)
    per_node = [{"host": h, "jobs": f.jobs, "busy_cores": f.busy_core_s / r.makespan_s if r.makespan_s else 0.0,
                 "mb_s": f.io_bytes / 1e6 / r.makespan_s if r.makespan_s else 0.0} for h, f in r.nodes.items()]
    return WhatIf(shape.nodes, shape.slots, shape.cores, shape.shared_cores, None if math.isinf(shape.mbps) else
                  shape.mbps, shape.background_per_core, sessions,
                  scaled_workload(m.workload, sessions, ramp_s).ramp_s, len(r.jobs), r.makespan_s, per_node)


def size(m: Measured, sessions: int, cores_per_node: float | None = None, what_if: dict | None = None,
         users: int | None = None, sessions_per_user: float | None = None,
         tolerance: float = TOLERANCE, fit: str = "background") -> SizeResult:
    """Size a grid for `sessions` sessions of the bundle's workload; see the module docstring.
    what_if: nodes, slots, cores, mbps, shared, ramp (any subset) for one more replay."""
    if not isinstance(sessions, int) or sessions < 1:
        raise UsageError(f"--sessions {sessions!r} must be a whole number ≥ 1.")
    if cores_per_node is not None and not cores_per_node >= MIN_CORES:
        raise UsageError(f"--cores-per-node {cores_per_node!r} must be at least {MIN_CORES}.")
    if not any(j.state == "DONE" for j in m.jobs):
        raise UsageError("the bundle has no DONE job: its jobs' CPU, I/O and memory say nothing of the work; size "
                         "from a run whose jobs finished.")
    per_run = len(m.jobs) / max(1, m.workload.sessions)
    if sessions * per_run > MAX_REPLAY_JOBS:
        raise UsageError(f"--sessions {sessions} replays about {sessions * per_run:,.0f} jobs; the what-if replay takes "
                         f"at most {MAX_REPLAY_JOBS:,} (its time grows faster than the jobs): size for fewer sessions "
                         "and scale the answer, or measure a bundle whose sessions run more work each.")
    w = m.workload
    cpu_total = sum(j.demand.cpu_s for j in m.jobs)
    io_total = sum(j.demand.io_bytes for j in m.jobs)
    walls = [j.wall_s for j in m.jobs if j.wall_s > 0]
    mems = [j.demand.memory_bytes for j in m.jobs]
    clock = m.clock_s
    mb_s = io_total / 1e6 / clock
    measured = {"sessions": w.sessions, "jobs": len(m.jobs), "jobs_done": sum(j.state == "DONE" for j in m.jobs),
                "clock_s": clock, "nodes": m.nodes, "slots_per_node": m.slots,
                "cores_per_node": m.cores_per_node, "cores": m.cores, "cores_shared": m.shared_cores is not None,
                "cpu_s": cpu_total, "busy_cores": cpu_total / clock, "io_bytes": io_total, "mb_s": mb_s,
                "mb_s_per_core": mb_s / m.cores, "background_per_core": m.background_per_core, "job_wall_s_mean": statistics.mean(walls) if walls else None,
                "job_cpu_s_mean": cpu_total / len(m.jobs), "job_memory_bytes_max": max(mems),
                "job_memory_bytes_mean": statistics.mean(mems)}
    per_session = {"jobs": len(m.jobs) / w.sessions, "cpu_s": cpu_total / w.sessions,
                   "io_bytes": io_total / w.sessions}
    # A sizing node is a measured node with its own CPUs; when the nodes shared one machine, the machine.
    node_slots = m.slots if m.shared_cores is None else m.slots * m.nodes
    node_cores = cores_per_node or (m.cores_per_node if m.shared_cores is None else m.shared_cores)
    cores_needed = sessions * per_session["cpu_s"] / clock
    nodes = max(1, math.ceil(cores_needed / node_cores - 1e-9))
    mb_s_needed = sessions * per_session["io_bytes"] / 1e6 / clock
    mem_node = node_slots * max(mems)
    cal = calibrate(m, fit)

    def replay(n: int) -> WhatIf:
        return run_what_if(m, sessions, cal, nodes=n, slots=node_slots, cores=node_cores)
    # The clock no grid shortens: every job with a slot and the cores it can use at once (the sessions' own
    # chains of jobs, their ramp and launch times). The target is the measured clock, or that if longer.
    most = max(nodes, math.ceil(sessions * w.concurrency / min(node_slots, max(1.0, node_cores))))
    floor = replay(most).clock_s
    target_clock = max(clock, floor) * (1 + tolerance)
    model = _fewest_nodes(replay, nodes, most, target_clock)
    needed = {"cores_floor": cores_needed, "cores": model.nodes * node_cores, "nodes_arithmetic": nodes,
              "nodes": model.nodes, "cores_per_node": node_cores, "slots_per_node": node_slots,
              "slots": model.nodes * node_slots, "memory_bytes_per_node": mem_node,
              "memory_bytes": mem_node * model.nodes, "mb_s": mb_s_needed,
              "mb_s_per_core": mb_s_needed / (model.nodes * node_cores), "clock_s": clock,
              "unconstrained_clock_s": floor, "target_clock_s": target_clock, "model_clock_s": model.clock_s,
              "tolerance": tolerance}
    rules = [{"rule": name, "source": source, "mb_s_per_core_low": lo, "mb_s_per_core_high": hi,
              "mb_s_low": lo * needed["cores"], "mb_s_high": hi * needed["cores"],
              "measured_mb_s_per_core": needed["mb_s_per_core"],
              "measured_vs_rule": needed["mb_s_per_core"] / lo} for name, lo, hi, source in RULES]
    target = {"sessions": sessions, "users": users, "sessions_per_user": sessions_per_user,
              "jobs": round(sessions * per_session["jobs"]), "factor": sessions / w.sessions}
    result = SizeResult(str(m.path), w.name, measured, per_session, target, needed, rules, dataclasses.asdict(cal),
                        model)
    if what_if is not None:
        result.what_if = run_what_if(m, sessions, cal, what_if.get("nodes"), what_if.get("slots"),
                                     what_if.get("cores"), what_if.get("mbps"), what_if.get("shared"),
                                     what_if.get("ramp"), what_if.get("background"))
    return result


def _fewest_nodes(replay, lo: int, hi: int, target_clock_s: float) -> WhatIf:
    """The replay with the fewest nodes in lo … hi whose clock is within target (hi's when none is):
    doubling from lo, then bisection (the clock falls as nodes are added, give or take placement)."""
    first = replay(lo)
    if first.clock_s <= target_clock_s:
        return first
    ok: WhatIf | None = None
    bad = lo
    n = lo
    while n < hi:
        n = min(hi, n * 2)
        r = replay(n)
        if r.clock_s <= target_clock_s:
            ok = r
            break
        bad = n
    if ok is None:
        return replay(hi)
    while ok.nodes - bad > 1:
        mid = (bad + ok.nodes) // 2
        r = replay(mid)
        if r.clock_s <= target_clock_s:
            ok = r
        else:
            bad = mid
    return ok


WHAT_IF_KEYS = {"nodes": int, "slots": int, "cores": float, "mbps": float, "shared": float, "ramp": float,
                "background": float}
WHAT_IF_EXAMPLE = "--what-if nodes=4,slots=8,cores=8,mbps=2000"


MIN_CORES = 0.01          # a node's cores: below this the fluid model's shares underflow
MIN_MBPS = 0.001          # the storage's MB/s
MAX_REPLAY_JOBS = 5000    # the what-if replay's size (880 sessions of MA10's mix replay in a few seconds)


def parse_what_if(text: str) -> dict:
    """'nodes=4,slots=8,mbps=2000' → {'nodes': 4, 'slots': 8, 'mbps': 2000.0}. Keys: nodes, slots (per node),
    cores (per node), mbps (the storage's sustained MB/s), shared (cores the nodes share, one machine),
    ramp (seconds over which the sessions log on), background (other runnable threads per core)."""
    out: dict = {}
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in WHAT_IF_KEYS:
            raise UsageError(f"--what-if {part!r}: expected KEY=VALUE with KEY one of {', '.join(WHAT_IF_KEYS)}; "
                             f"e.g. {WHAT_IF_EXAMPLE}.")
        kind = WHAT_IF_KEYS[key]
        try:
            v = kind(value.strip())
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise UsageError(f"--what-if {key}={value.strip()!r} is not {what}; e.g. {WHAT_IF_EXAMPLE}.") from None
        low = {"cores": MIN_CORES, "shared": MIN_CORES, "mbps": MIN_MBPS}.get(key)
        if not (v > 0 if key not in ("ramp", "background") else v >= 0) or (kind is float and not math.isfinite(v)) \
                or (low is not None and v < low):
            bound = '≥ 0' if key in ('ramp', 'background') else (f'≥ {low:g}' if low is not None else '> 0')
            raise UsageError(f"--what-if {key}={value.strip()!r} must be {bound} and finite; e.g. {WHAT_IF_EXAMPLE}.")
        out[key] = v
    if not out:
        raise UsageError(f"--what-if {text!r} names no setting; e.g. {WHAT_IF_EXAMPLE}.")
    return out
