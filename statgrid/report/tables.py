"""The report's tables, each defined once (statgrid.report.model.Table), from saved results.

Sources: a `bench mixed` bundle (bundle.json + jobs.jsonl + grid/monitor/), a `bench scale`
directory (scale.json), an `iobench --json` result. Figures and their definitions:

- Workload summary (seed 000 Table 3). Throughput is what the devices under the monitored
  machines moved (reads + writes, the monitor's disk series; of a device stack — partition, LVM,
  md, multipath — only the top-most devices, so each byte once: see sampler.top_devices), per sample:
    mean       bytes moved ÷ the workload's clock time (from the first submission to the last end)
    sustained  the highest mean over any 60 s of the run (the whole run when it is shorter)
    peak       the highest single sample
  IOPS likewise; latency is the IOPS-weighted mean of the devices' await (average) and its highest
  sample (peak); CPU is the mean of the machines' samples, in % of their CPUs and in cores. The
  jobs' logical I/O (read()/write() bytes, page-cache hits included — the file-system view, like
  GPFS beside XIV in Table 3) is given beside the device view.
  Response time is seed 000's "cumulative real time … of all the jobs in the workload" (its Table 5
  compares two runs by it): the sum of each job's process wall time, start to end. The summed step
  real time (STIMER) — what the per-node table adds up, as seed 002 Tables 3–4 sum FULLSTIMER real
  time — leaves out each session's start-up and wind-down outside its steps, so it is smaller.
- Per-node FULLSTIMER aggregates (seed 002 Tables 3–4): per grid host, the mean over its jobs of
  CPU/real, and summed step real time (STIMER), memory, user and system CPU; the spread row is
  (max − min) ÷ mean across hosts.
- Accounting (`statgrid acct`, statgrid/grid/master/acct.py, like LSF's bacct): finished jobs per user,
  per group of the grid's [groups], per queue and in total — counts by state, wait mean and p95
  (nearest rank), run time summed and mean, CPU summed.
- Per-job table; a job's flag is what `statgrid advise` found about it (statgrid.advise, rules job.*: a job
  whose CPU/real is below 0.7 waited, and the node's CPU, I/O and memory pressure over its run say for what).
"""
from __future__ import annotations

from statgrid.advise.rules_data import WAITED_BELOW
from statgrid.bench import iobench_out
from statgrid.job.figures import WORKLOAD_ROWS, mean_present, cpu_real, job_figures, job_times, wall_s
from statgrid.bench.iobench import read_pct
from statgrid.job.accounting import JobRusage
from statgrid.report.model import Column, Table
from statgrid.monitor.store import moving_max
from statgrid.report.series import Series, iops, mb_s

SUSTAINED_WINDOW_S = 60.0
SIZE_BUCKETS = [(4 << 10, "≤ 4 KiB"), (16 << 10, "4–16 KiB"), (64 << 10, "16–64 KiB"), (256 << 10, "64–256 KiB"),
                (1 << 20, "256 KiB–1 MiB"), (float("inf"), "> 1 MiB")]


# -- workload summary -------------------------------------------------------------------------------
def summary_figures(meta: dict, jobs: list[dict], series: Series | None) -> dict:
    """Every figure of the workload summary under a stable key (what --compare lines up)."""
    f = job_figures(meta, jobs)
    if series is not None:
        f.update(series_figures(series))
    return f


def series_figures(series: Series) -> dict:
    """The storage and processor figures of the monitor series (the summary's device half)."""
    window = max(1, round(SUSTAINED_WINDOW_S / series.interval_s))
    dev = series.device_rows
    mbs = series.per_slot(dev, mb_s)
    iops_slots = series.per_slot(dev, iops)
    iv = series.intervals
    read_b = sum((r["read_bytes_per_s"] or 0) * iv[r["host"]] for r in dev)
    write_b = sum((r["write_bytes_per_s"] or 0) * iv[r["host"]] for r in dev)
    weighted = [(iops(r) * iv[r["host"]], r["await_ms"]) for r in dev
                if r.get("await_ms") is not None]                       # (requests, their mean await)
    w_total = sum(w for w, _ in weighted)
    cpus = sum(series.cpus.values())
    f = {
        "mb_s_mean": series.mean(dev, mb_s), "mb_s_sustained": moving_max(mbs, window),
        "mb_s_peak": max(mbs.values()) if mbs else None,
        "iops_mean": series.mean(dev, iops), "iops_sustained": moving_max(iops_slots, window),
        "iops_peak": max(iops_slots.values()) if iops_slots else None,
        "latency_ms_mean": sum(w * a for w, a in weighted) / w_total if w_total else None,
        "latency_ms_peak": max((a for w, a in weighted if w > 0), default=None),
        "read_write_ratio": read_b / write_b if write_b else None,
        "cpus": cpus,
    }
    per_machine = [machine_cpu(series, m) for m in series.machines]
    for key in ("cpu_busy", "cpu_wait", "cpu_idle"):
        cores = [c[key] for c in per_machine if c[key] is not None]
        f[f"{key}_cores"] = sum(cores) if cores else None
        f[f"{key}_pct"] = sum(cores) / cpus * 100 if cores and cpus else None
    f["mb_s_per_core"] = f["mb_s_sustained"] / cpus if f["mb_s_sustained"] is not None and cpus else None
    fs_rows = []
    for (machine, device), libs in series.libraries_by_device().items():
        rows = series.library_rows_of(machine, libs[0])
        fs_rows += rows
        per = series.per_slot(rows, mb_s)
        label = f"{'+'.join(libs)} ({device}{'' if len(series.machines) == 1 else ' on ' + machine})"
        f[f"lib:{label}:sustained"] = moving_max(per, window)
        f[f"lib:{label}:peak"] = max(per.values()) if per else None
    if fs_rows:     # Table 3's file-system rows (seed 000: GPFS, SASDATA + SASWORK over every node): each device or mount once
        fs = series.per_slot(fs_rows, mb_s)
        f["fs_mb_s_sustained"] = moving_max(fs, window)
        f["fs_mb_s_peak"] = max(fs.values()) if fs else None
    return f


def machine_cpu(series: Series, machine: str) -> dict:
    """A machine's mean CPU user+sys (cpu_busy) / wait / idle over its samples, in cores."""
    rows = [r for r in series.node_rows if r["host"] == machine and r.get("cpu_user_pct") is not None]
    out = {}
    for key, value in (("cpu_busy", lambda r: (r["cpu_user_pct"] or 0) + (r["cpu_system_pct"] or 0)),
                       ("cpu_wait", lambda r: r["cpu_iowait_pct"] or 0),
                       ("cpu_idle", lambda r: r["cpu_idle_pct"] or 0)):
        out[key] = sum(value(r) for r in rows) / len(rows) / 100 * series.cpus[machine] if rows else None
    return out


SUMMARY_ROWS = [  # key, section, figure, unit
    ("mb_s_mean", "storage (devices)", "mean throughput", "MB/s"),
    ("mb_s_sustained", "storage (devices)", "sustained throughput", "MB/s"),
    ("mb_s_peak", "storage (devices)", "peak throughput", "MB/s"),
    ("iops_sustained", "storage (devices)", "sustained IOPS", ""),
    ("iops_peak", "storage (devices)", "peak IOPS", ""),
    ("latency_ms_mean", "storage (devices)", "average latency", "ms"),
    ("latency_ms_peak", "storage (devices)", "peak latency", "ms"),
    ("read_write_ratio", "storage (devices)", "read/write ratio (bytes)", ""),
    ("fs_mb_s_sustained", "file system (libraries)", "sustained throughput", "MB/s"),
    ("fs_mb_s_peak", "file system (libraries)", "peak throughput", "MB/s"),
    ("jobs_logical_mb_s", "file system (jobs)", "jobs' logical reads + writes", "MB/s"),
    ("cpu_busy_pct", "processor", "user + sys", "%"),
    ("cpu_busy_cores", "processor", "user + sys", "cores"),
    ("cpu_wait_pct", "processor", "wait", "%"),
    ("cpu_wait_cores", "processor", "wait", "cores"),
    ("cpu_idle_pct", "processor", "idle", "%"),
    ("cpu_idle_cores", "processor", "idle", "cores"),
    ("cpus", "processor", "CPUs of the grid's machines", ""),
    ("mb_s_per_core", "processor", "sustained MB/s per core", "MB/s"),
    *WORKLOAD_ROWS,
    ("span_s", "capture", "time span of the samples", "s"),
    ("samples", "capture", "samples of the machines", ""),
    ("hosts", "capture", "hosts sampled", ""),
    ("machines", "capture", "machines (hosts on one kernel counted once)", ""),
]
FIGURE_NAMES = {k: name for k, _, name, _ in SUMMARY_ROWS}
SUMMARY_COLUMNS = [Column("section", "section", align="left"), Column("figure", "figure", align="left"),
                   Column("value", "value"), Column("unit", "unit", align="left")]
DEFINITIONS = ("Throughput and IOPS are the counted devices' (monitor disk series, reads + writes) over the {over}: "
               "mean = bytes moved ÷ that time; sustained = the highest mean over any 60 s (the whole run if shorter); "
               "peak = the highest single sample. Latency: IOPS-weighted mean of the devices' await, and its "
               "highest sample. CPU: mean of the machines' samples.")


def summary_rows(f: dict) -> list[dict]:
    rows = [{"key": k, "section": s, "figure": name, "value": f.get(k), "unit": u} for k, s, name, u in SUMMARY_ROWS
            if k in f]
    libs = []
    for k in f:
        if k.startswith("lib:"):
            label, which = k[4:].rsplit(":", 1)          # a label may hold ':' (an NFS source, srv:/export)
            libs.append({"key": k, "section": "libraries", "figure": f"{which} throughput, {label}", "value": f[k],
                         "unit": "MB/s"})
    at = next((i + 1 for i, r in enumerate(rows) if r["key"] == "mb_s_peak"), len(rows))
    return rows[:at] + libs + rows[at:]


RESPONSE_TIME_NOTE = ("Response time is seed 000's cumulative real time of all the jobs: each job's process wall "
                      "time, start to end, summed (EXIT jobs included). The summed step real time (STIMER) adds up "
                      "the jobs' steps, as the per-node FULLSTIMER table does (a job with no STIMER total — a command, "
                      "or a session killed before it wrote one — counts its wall time there); the difference is each "
                      "session's start-up and wind-down outside its steps.")
STACK_RULE = ("A byte passes every layer of a device stack (partition, LVM, md RAID, multipath), so only the top-most "
              "devices are summed — those no other device holds (sysfs holders/) and, for a disk, without partitions: "
              "each logical byte once, without RAID mirror copies or parity.")
NO_STACK_RECORD = ("This capture has no record of how its devices stack (saved before statgrid read /sys/block, or /sys "
                   "was not readable): a byte through a partition, LVM, md RAID or multipath is summed at every layer "
                   "it passes.")


def devices_note(series: Series) -> str:
    """Which devices the device figures summed, machine by machine, and the devices under them."""
    known, unknown = [], []
    for m in series.machines:
        counted: dict[str, str | None] = {}
        for r in series.device_rows:
            if r["host"] == m:
                counted.setdefault(r["device"], r.get("layer"))
        under: dict[str, set[str]] = {}
        for r in series.stacked_rows:
            if r["host"] == m:
                for top in r["counted_in"].split():
                    under.setdefault(top, set()).add(r["device"])
        where = f"{m}: " if len(series.machines) > 1 else ""
        if not under and all(r.get("counted_in") is None for r in series.device_rows if r["host"] == m):
            if counted:
                unknown.append(where + ", ".join(sorted(counted)))
            continue
        desc = []
        for d in sorted(counted.keys() | under.keys()):
            bits = [x for x in (counted.get(d), "over " + ", ".join(sorted(under[d])) if d in under else None) if x]
            desc.append(f"{d} ({', '.join(bits)})" if bits else d)
        known.append(where + ", ".join(desc))
    out = []
    if known:
        out.append(f"Devices counted: {'; '.join(known)}. {STACK_RULE}")
    if unknown:
        out.append(f"Devices summed: {'; '.join(unknown)}. {NO_STACK_RECORD}")
    return " ".join(out)


SOURCE_NOTES = {
    "nfs": "NFS libraries: bytes to and from the server, READ/WRITE ops and their execute time "
           "(/proc/self/mountstats, as nfsiostat reads it).",
    "gpfs": "GPFS libraries: the applications' bytes and read/write calls on each node (mmpmon fs_io_s, "
            "as seed 000's gpfs_perf); no latency.",
    "process": "Libraries on no block device (tmpfs, overlay …): the grid jobs' own reads and writes to that "
               "mount (/proc/<pid>/io rchar/wchar and their calls, charged by the files each job has open), "
               "logical bytes — page-cache hits included; no latency."}


def sources_note(series: Series | None) -> str:
    """What the library rows that are not a device's measure (one sentence per source present)."""
    present = {r.get("source") or "block" for r in (series.library_rows if series else [])}
    lines = [SOURCE_NOTES[s] for s in ("nfs", "gpfs", "process") if s in present]
    return ("File-system rows sum each library's device or mount once over the machines. " + " ".join(lines)) \
        if lines else ""


def workload_summary(meta: dict, figures: dict, series: Series | None) -> Table:
    w = meta["workload"]
    notes = ([DEFINITIONS.format(over="workload's clock time"), devices_note(series), sources_note(series)]
             if series is not None else
             ["No monitor series in this bundle: storage and processor figures are missing."])
    notes.append(RESPONSE_TIME_NOTE)
    if meta.get("grid", {}).get("embedded"):
        notes.append("Embedded grid: its hosts are processes of one machine, so the machine is counted once.")
    return Table("summary", f"Workload summary — {w['name']}, {w['sessions']} sessions, {w['jobs']} jobs",
                 SUMMARY_COLUMNS, summary_rows(figures), notes)


def capture_summary(figures: dict, title: str, series: Series) -> Table:
    return Table("summary", title, SUMMARY_COLUMNS, summary_rows(figures),
                 [DEFINITIONS.format(over="capture's time span"), devices_note(series), sources_note(series)])


MACHINE_COLUMNS = [Column("machine", "machine", align="left"), Column("hosts", "hosts sampled", align="left"),
                   Column("cpus", "CPUs"), Column("cpu_busy_pct", "user + sys %", 1),
                   Column("cpu_wait_pct", "wait %", 1),
                   Column("cpu_idle_pct", "idle %", 1), Column("mb_s_mean", "mean MB/s", 2),
                   Column("mb_s_sustained", "sustained MB/s", 2), Column("mb_s_peak", "peak MB/s", 2),
                   Column("iops_mean", "mean IOPS", 1), Column("mem_used_gb_peak", "peak memory used GB", 2)]


def per_machine(series: Series) -> Table:
    """Each machine's own devices and CPUs (Figure 8's per-node view, from the monitor)."""
    rows = []
    for m in series.machines:
        f = series_figures(series.only(m))
        mem = [r["mem_used_bytes"] for r in series.node_rows if r["host"] == m and r.get("mem_used_bytes") is not None]
        rows.append({"machine": m, "hosts": ", ".join(series.hosts_of.get(m, [m])),
                     **{c.key: f.get(c.key) for c in MACHINE_COLUMNS[2:-1]},
                     "mem_used_gb_peak": max(mem) / 1e9 if mem else None})
    return Table("machines", "Per machine (monitor series)", MACHINE_COLUMNS, rows,
                 ["A machine is every host whose monitor saw the same kernel; for each sample slot the samples of "
                  "its first host that has one stand for it. Throughput is its devices' reads + writes; memory "
                  "used excludes the page cache."])


def io_sizes(series: Series | None) -> Table:
    """Requests by size (the devices' average request size per sample, weighted by its IOPS)."""
    counts = [0.0] * len(SIZE_BUCKETS)
    for r in (series.device_rows if series else []):
        n = iops(r) * series.intervals[r["host"]]
        size = r.get("avg_request_bytes")
        if n and size is not None:
            counts[next(i for i, (hi, _) in enumerate(SIZE_BUCKETS) if size <= hi)] += n
    total = sum(counts)
    rows = [{"size": label, "requests": round(c), "share_pct": c / total * 100 if total else None}
            for (_, label), c in zip(SIZE_BUCKETS, counts)]
    return Table("io_sizes", "I/O request sizes", [Column("size", "request size", align="left"),
                                                   Column("requests", "requests"), Column("share_pct", "%", 1)],
                 rows, ["From each sample's average request size (sysstat's areq-sz), weighted by its requests."])


# -- per node and per job ---------------------------------------------------------------------------
NODE_COLUMNS = [Column("host", "host", align="left"), Column("jobs", "jobs"),
                Column("cpu_real_mean", "mean CPU/real", 2),
                Column("real_min", "summed step real time (STIMER, min)", 2),
                Column("memory_gb", "memory (GB)", 3), Column("user_cpu_min", "user CPU (min)", 2),
                Column("sys_cpu_min", "system CPU (min)", 2)]


def per_node(jobs: list[dict]) -> Table:
    hosts = sorted({j["host"] for j in jobs if j.get("host")})
    rows = []
    for h in hosts:
        hj = [j for j in jobs if j.get("host") == h]
        ts = [job_times(j) for j in hj]
        rows.append({"host": h, "jobs": len(hj), "cpu_real_mean": mean_present([cpu_real(j) for j in hj]),
                     "real_min": sum(t["real_s"] or 0 for t in ts) / 60,
                     "memory_gb": sum(t["memory_bytes"] for t in ts) / 1e9,
                     "user_cpu_min": sum(t["user_cpu_s"] for t in ts) / 60,
                     "sys_cpu_min": sum(t["sys_cpu_s"] for t in ts) / 60})
    keys = [c.key for c in NODE_COLUMNS[1:]]
    if len(rows) > 1:
        total = {"host": "all", **{k: sum(r[k] or 0 for r in rows) for k in keys}}
        total["cpu_real_mean"] = mean_present([cpu_real(j) for j in jobs if j.get("host")])
        spread = {"host": "spread (max − min) ÷ mean"}
        for k in keys:
            vals = [r[k] for r in rows if r[k] is not None]
            m = sum(vals) / len(vals) if vals else 0
            spread[k] = (max(vals) - min(vals)) / m if m else None
        rows += [total, spread]
    return Table("nodes", "Per-node FULLSTIMER aggregates", NODE_COLUMNS, rows,
                 ["Per host: mean over its jobs of CPU/real, and sums over its jobs of STIMER real time, memory, "
                  "user and system CPU (the job's session total; a job without one counts its process)."])


ACCT_COLUMNS = [Column("by", "by", align="left"), Column("name", "name", align="left"), Column("jobs", "jobs"),
                Column("done", "DONE"), Column("exit", "EXIT"), Column("killed", "KILLED"),
                Column("started", "started"), Column("wait_mean_s", "mean wait (s)", 3),
                Column("wait_p95_s", "p95 wait (s)", 3), Column("run_sum_s", "summed run (s)", 2),
                Column("run_mean_s", "mean run (s)", 2), Column("cpu_sum_s", "summed CPU (s)", 2)]


def accounting(jobs: list[dict], groups: dict[str, list[str]] | None = None) -> Table:
    """The accounting of `statgrid acct` (statgrid.grid.master.acct) over the bundle's jobs: per user, per
    group of the grid's [groups] (as the bundle recorded them), per queue, and the total."""
    from dataclasses import asdict

    from statgrid.grid.master.acct import account

    rep = account(jobs, groups)
    rows = [{"by": by, **asdict(r)} for by, rs in (("user", rep.by_user), ("group", rep.by_group),
                                                  ("queue", rep.by_queue)) for r in rs]
    rows.append({**asdict(rep.total), "by": "total", "name": "all"})
    notes = ["Finished jobs (DONE, EXIT, KILLED), as `statgrid acct` counts them: wait = start − submit and run = "
             "end − start, of the jobs that started; p95 by nearest rank (the ⌈0.95·n⌉-th smallest wait); CPU = "
             "the job process's user + system time (rusage). A user in two groups counts in both; '-' under group: "
             "in none."]
    if any(not j.get("user") or not j.get("queue") for j in jobs):
        notes.append("Some job records of this bundle name no user or queue (bundles saved before bench mixed kept "
                     "them): they count under '-'.")
    return Table("acct", "Accounting", ACCT_COLUMNS, rows, notes)


JOB_COLUMNS = [Column("id", "job"), Column("session", "session"), Column("template", "template", align="left"),
               Column("kind", "kind", align="left"), Column("user_type", "user type", align="left"),
               Column("host", "host", align="left"), Column("state", "state", align="left"),
               Column("wait_s", "wait s", 2), Column("wall_s", "wall s", 2), Column("real_s", "STIMER real s", 2),
               Column("user_cpu_s", "user s", 2),
               Column("sys_cpu_s", "sys s", 2), Column("cpu_real", "CPU/real", 2), Column("read_mb", "read MB", 2),
               Column("written_mb", "written MB", 2), Column("memory_mib", "peak memory MiB", 1),
               Column("flag", "flag", align="left")]


def per_job(jobs: list[dict], flags: dict | None = None) -> Table:
    """One row per job; flags: job id → what advise found about it (Advice.job_flags), shown as given."""
    flags = flags or {}
    rows = []
    for j in sorted(jobs, key=lambda j: j["id"]):
        t = job_times(j)
        ru = JobRusage.parse(j.get("rusage")) or JobRusage()
        ratio = cpu_real(j)
        rows.append({"id": j["id"], "session": j.get("session"), "template": j.get("template"), "kind": j.get("kind"),
                     "user_type": j.get("user_type"), "host": j.get("host"), "state": j["state"],
                     "wait_s": (j["start_ts"] - j["submit_ts"]) if j.get("start_ts") and j.get("submit_ts") else None,
                     "wall_s": wall_s(j), "real_s": t["real_s"], "user_cpu_s": t["user_cpu_s"],
                     "sys_cpu_s": t["sys_cpu_s"],
                     "cpu_real": ratio, "read_mb": (ru.logical_read_bytes or 0) / 1e6,
                     "written_mb": (ru.logical_write_bytes or 0) / 1e6,
                     "memory_mib": (ru.max_rss_bytes or 0) / 2**20,
                     "flag": flags.get(j["id"], "")})
    n = sum(1 for r in rows if r["flag"])
    return Table("jobs", "Jobs", JOB_COLUMNS, rows,
                 [f"Flags are the findings of `statgrid advise` about each job (rules job.*): a job whose CPU/real "
                  f"is below {WAITED_BELOW} waited, and the CPU, I/O and memory pressure of its node over its run say for what: "
                  f"{n} of {len(rows)} jobs flagged. Wall time is the job's process, start to end (its share of the response "
                  "time); STIMER real, user and system time are the session's STIMER total; bytes are logical reads "
                  "and writes; peak memory is the process's max RSS."])


# -- comparison, scalability, I/O test --------------------------------------------------------------
def comparison(name_a: str, fig_a: dict, name_b: str, fig_b: dict) -> Table:
    """Seed 000 Table 5 / seed 002 Table 5: every figure side by side, difference and ratio B ÷ A."""
    rows = []
    for k, section, figure, unit in SUMMARY_ROWS:
        a, b = fig_a.get(k), fig_b.get(k)
        if a is None and b is None:
            continue
        rows.append({"section": section, "figure": figure + (f" ({unit})" if unit else ""), "a": a, "b": b,
                     "diff": (b - a) if a is not None and b is not None else None,
                     "ratio": (b / a) if a and b is not None else None})
    return Table("compare", f"Comparison — A: {name_a}, B: {name_b}",
                 [Column("section", "section", align="left"), Column("figure", "figure", align="left"),
                  Column("a", "A"), Column("b", "B"), Column("diff", "B − A"), Column("ratio", "B ÷ A", 3)],
                 rows, ["Each figure as defined in the workload summary; ratio is B ÷ A."])


def scalability(meta: dict) -> Table:
    cols = [Column("nodes", "nodes"), Column("sessions", "sessions"), Column("jobs", "jobs"), Column("done", "DONE"),
            Column("exit", "EXIT"), Column("clock_s", "clock s", 1), Column("jobs_per_h", "jobs/h", 1),
            Column("summed_real_s", "summed real s", 1), Column("io_mb_per_s", "MB/s", 2),
            Column("efficiency", "efficiency", 3)]
    return Table("scale", "Scalability (seed 000 Table 4)", cols, meta["steps"],
                 [meta.get("note", ""), "Efficiency: jobs per hour per node ÷ jobs per hour on one node (weak "
                  "scaling: the work per node is the same at every step). MB/s: the jobs' logical reads and writes "
                  "over the clock time."])


IOBENCH_COLUMNS = [Column("file", "file", align="left"), Column("node", "node", align="left"),
                   Column("direction", "direction", align="left"), Column("mb_s", "MB/s", 1),
                   Column("mb_s_min", "min MB/s", 1), Column("mb_s_max", "max MB/s", 1), Column("iops", "IOPS", 0),
                   Column("lat_mean_ms", "latency ms", 3), Column("lat_p99_ms", "p99 ms", 3), Column("runs", "runs")]


def scale_comparison(name_a: str, meta_a: dict, name_b: str, meta_b: dict) -> Table:
    """Each node count of either test: clock, jobs/h and efficiency of A and B, and B ÷ A."""
    by_a = {s["nodes"]: s for s in meta_a["steps"]}
    by_b = {s["nodes"]: s for s in meta_b["steps"]}
    rows = []
    for n in sorted(by_a.keys() | by_b.keys()):
        a, b = by_a.get(n, {}), by_b.get(n, {})
        row = {"nodes": n}
        for key in ("clock_s", "jobs_per_h", "efficiency"):
            row[f"a_{key}"], row[f"b_{key}"] = a.get(key), b.get(key)
        row["ratio"] = b["jobs_per_h"] / a["jobs_per_h"] if a.get("jobs_per_h") and b.get("jobs_per_h") else None
        rows.append(row)
    cols = [Column("nodes", "nodes"), Column("a_clock_s", "A clock s", 1), Column("b_clock_s", "B clock s", 1),
            Column("a_jobs_per_h", "A jobs/h", 1), Column("b_jobs_per_h", "B jobs/h", 1),
            Column("ratio", "jobs/h B ÷ A", 3), Column("a_efficiency", "A efficiency", 3),
            Column("b_efficiency", "B efficiency", 3)]
    return Table("compare_scale", f"Scalability compared — A: {name_a}, B: {name_b}", cols, rows,
                 [f"A: {meta_a.get('note', '')}", f"B: {meta_b.get('note', '')}",
                  "Efficiency as in each test's scalability table; a step one test lacks is left empty."])


def iobench_rows(name: str, result: dict) -> list[dict]:
    """MB/s, IOPS and latency per node and in total, per direction, of one iobench result."""
    rows = []
    for node, s in iobench_out.scopes(result):
        for d in ("read", "write"):
            if s[d]["bw_bytes"]["max"] <= 0:
                continue
            lat = s[d]["lat_ns"]
            p = lat["percentile"]
            rows.append({"file": name, "node": node, "direction": d, "mb_s": s[d]["bw_bytes"]["mean"] / 1e6,
                         "mb_s_min": s[d]["bw_bytes"]["min"] / 1e6, "mb_s_max": s[d]["bw_bytes"]["max"] / 1e6,
                         "iops": s[d]["iops"]["mean"], "lat_mean_ms": lat["mean"] / 1e6,
                         "lat_p99_ms": p.get("99.000000", 0) / 1e6, "runs": s[d]["bw_bytes"]["n"]})
    return rows


def describe_spec(spec: dict) -> str:
    timed = f", for {spec['duration_s']:g} s per run" if spec.get("run_mode") == "time" and spec.get("duration_s") else ""
    raw = ", raw device" if spec.get("device") else ""
    return (f"{spec['mode']}, {spec['pattern']}, {spec['bs']} B blocks, {spec['threads']} thread(s), "
            f"{'O_DIRECT' if spec['direct'] else 'buffered'}{timed}{raw}")


def iobench(results: list[tuple[str, dict]]) -> Table:
    """Every node and direction of every result (the detail under Table 2)."""
    rows = [r for name, result in results for r in iobench_rows(name, result)]
    if len(results) == 1:
        spec = results[0][1]["spec"]
        return Table("iobench", f"I/O test — {describe_spec(spec)}", IOBENCH_COLUMNS, rows,
                     [f"Directory {spec['dir']}; mean over {spec['runs']} run(s)."])
    return Table("iobench", "I/O tests — every node and direction", IOBENCH_COLUMNS, rows,
                 ["Mean over each test's runs; min and max are its slowest and fastest run."])


# -- seed 000 Table 2: operations × configurations ---------------------------------------------------
CONFIG_FIELDS = ("dir", "pattern", "bs", "threads", "size_per_thread", "direct", "fsync", "run_mode", "duration_s",
                 "device")
# what a result written before a field existed ran with: by size, no time limit, a directory
SPEC_DEFAULTS = {"run_mode": "size", "duration_s": None, "device": False}


def spec_value(spec: dict, key: str):
    return spec.get(key, SPEC_DEFAULTS.get(key))


def operation(spec: dict) -> tuple[int, str]:
    """(share of reads in %, the row's name): 100 % read, 50 % read-write, 100 % write."""
    reads = read_pct(spec["mode"], spec.get("rwmixread", 50))
    return reads, {100: "100% read", 0: "100% write"}.get(reads, f"{reads}% read-write")


def _config_part(key: str, value) -> str:
    if key == "run_mode":
        return "by size" if value in (None, "size") else f"by {value}"
    if key == "duration_s":
        return "no time limit" if value is None else f"for {value:g} s"
    if key == "device":
        return "raw device" if value else "file system"
    if value is None:
        return f"{key} not recorded"
    if key == "direct":
        return "O_DIRECT" if value else "buffered"
    if key == "fsync":
        return "fsync" if value else "no fsync"
    if key in ("bs", "size_per_thread"):
        for unit, n in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
            if value >= n and value % n == 0:
                value = f"{value // n}{unit}"
                break
        return f"{value} {'blocks' if key == 'bs' else 'per thread'}"
    if key == "threads":
        return f"{value} thread{'s' if value != 1 else ''}"
    return str(value)


def configurations(results: list[tuple[str, dict]], common: list[str]) -> list[str]:
    """Each result's configuration: the spec fields that differ between the results; a result
    whose operation and configuration an earlier one has also gets its name."""
    differ = [k for k in CONFIG_FIELDS if k not in common]
    labels, seen = [], set()
    for name, r in results:
        label = ", ".join(_config_part(k, spec_value(r["spec"], k)) for k in differ)
        cell = (operation(r["spec"])[0], label)
        labels.append(", ".join(x for x in (label, name if cell in seen else "") if x) or "MB/s")
        seen.add(cell)
    return labels


def _common_fields(results: list[tuple[str, dict]]) -> list[str]:
    return [k for k in CONFIG_FIELDS if len({repr(spec_value(r["spec"], k)) for _, r in results}) == 1]


def iobench_matrix(results: list[tuple[str, dict]]) -> Table:
    """Seed 000 Table 2: one row per operation, one column pair (mean, high watermark) per
    configuration; MB/s are reads + writes of every node at once."""
    common = _common_fields(results)
    labels = configurations(results, common)
    configs = list(dict.fromkeys(labels))
    ops: dict[int, dict] = {}
    for (_, result), label in zip(results, labels):
        reads, op = operation(result["spec"])
        row = ops.setdefault(reads, {"operation": op, "comments": []})
        per_run = [sum(run["total"][d]["bw_bytes"] for d in ("read", "write")) / 1e6 for run in result["runs"]]
        t = result["summary"]["total"]
        row[f"mean:{label}"] = sum(t[d]["bw_bytes"]["mean"] for d in ("read", "write")) / 1e6
        row[f"peak:{label}"] = max(per_run) if per_run else None
        lat = "; ".join(f"{d} latency {t[d]['lat_ns']['mean'] / 1e6:.3g} ms (p99 "
                        f"{t[d]['lat_ns']['percentile'].get('99.000000', 0) / 1e6:.3g} ms)"
                        for d in ("read", "write") if t[d]["bw_bytes"]["max"] > 0)
        row["comments"].append(f"{label}: {lat}" if len(configs) > 1 else lat)
    rows = [{**r, "comments": " · ".join(r["comments"])} for _, r in sorted(ops.items(), key=lambda kv: -kv[0])]
    cols = [Column("operation", "operation", align="left")]
    for c in configs:
        cols += [Column(f"mean:{c}", f"{c} mean MB/s" if c != "MB/s" else "mean MB/s", 1),
                 Column(f"peak:{c}", f"{c} peak MB/s" if c != "MB/s" else "peak MB/s", 1)]
    cols.append(Column("comments", "comments", align="left"))
    spec = results[0][1]["spec"]
    same = ", ".join(_config_part(k, spec[k]) for k in common if k != "dir" and spec.get(k) is not None) + \
        (f"; directory {spec['dir']}" if "dir" in common else "")
    return Table("iobench_table2", "I/O test — operations × configurations (seed 000 Table 2)", cols, rows,
                 [f"Every test: {same}." if same else "",
                  "Mean: reads + writes of all nodes at once, averaged over the runs; peak: the best run (the "
                  "high watermark)."])
