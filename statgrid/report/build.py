"""Saved results → Report: what `statgrid report` reads, recognised by its files.

    bench mixed bundle   bundle.json + jobs.jsonl (+ grid/monitor/)
    bench scale          scale.json (+ one bundle per step)
    iobench result       the JSON of `statgrid iobench --json`
    monitor capture      <host>/node-*.parquet (`statgrid monitor --out DIR`, or a grid's monitor/)
Nothing is re-run: every figure comes from these files.
"""
from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from statgrid.errors import StatgridError, UsageError
from statgrid.job.accounting import JobRusage
from statgrid.monitor import store
from statgrid.report import series as series_mod
from statgrid.report import profile, tables
from statgrid.report.model import Chart, Column, Report, Table
from statgrid.report.series import mb_s

BIN_S = 5.0          # per-node throughput from job records: bytes spread over each job's run, 5 s bins


def kind_of(path: Path) -> str:
    path = Path(path)
    if path.is_dir() and (path / "bundle.json").is_file():
        return "mixed"
    if path.is_dir() and (path / "scale.json").is_file():
        return "scale"
    if path.is_dir() and (path / "repeat.json").is_file():
        return "repeat"
    if path.is_dir() and store.hosts(path):
        return "monitor"
    if path.is_file() and path.suffix == ".json":
        try:
            data = json.loads(path.read_text())
        except ValueError:
            raise UsageError(f"{str(path)!r} is not valid JSON.") from None
        if isinstance(data, dict) and {"spec", "runs", "summary"} <= data.keys():
            return "iobench"
    raise UsageError(f"{str(path)!r} is not a result statgrid reports on: give a `bench mixed` bundle directory "
                     "(bundle.json), a `bench mixed --repeat` directory (repeat.json), a `bench scale` directory "
                     "(scale.json), an `iobench --json` file or a "
                     "`statgrid monitor --out` directory (<host>/node-*.parquet).")


def load_mixed(path: Path):
    from statgrid.bench.mixed import load_bundle

    meta, jobs = load_bundle(path)
    cpus = (meta.get("host") or {}).get("cpus") or 1
    embedded = bool((meta.get("grid") or {}).get("embedded"))
    s = series_mod.load(Path(path) / "grid" / "monitor", meta["workload_start_ts"], meta["end_ts"], embedded, cpus)
    return meta, jobs, s


def load_monitor(path: Path):
    """A capture's series over its whole span, and its summary figures."""
    s = series_mod.load(path)
    if s is None:
        raise StatgridError(f"{str(path)!r} holds no node samples the report can read (node-*.parquet files "
                            "empty or damaged); point at a `statgrid monitor --out` directory that has samples.")
    figures = tables.series_figures(s)
    figures.update({"span_s": s.span_s(), "samples": len(s.node_rows),
                    "hosts": sum(map(len, s.hosts_of.values())), "machines": len(s.machines)})
    return s, figures


def monitor_report(path: Path, loaded=None) -> tuple[Report, dict]:
    s, figures = loaded or load_monitor(path)
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(s.t0))
    sub = (f"monitor capture {Path(path).name}: {len(s.machines)} machine(s), hosts "
           f"{', '.join(h for hs in s.hosts_of.values() for h in hs)}; {figures['span_s']:.0f} s from {when}, "
           f"one sample every {s.interval_s:.3g} s")
    sizes = tables.io_sizes(s)
    ts = [tables.capture_summary(figures, f"Summary — monitor capture {Path(path).name}", s), tables.per_machine(s),
          sizes]
    return Report(f"statgrid report — monitor capture {Path(path).name}", sub, ts,
                  series_charts(s, sizes, "s from the first sample")), figures


def mixed_report(path: Path, loaded=None) -> tuple[Report, dict]:
    """The report of one bundle, and its summary figures (what a comparison lines up).
    loaded: what load_mixed(path) returned, if the caller has it."""
    meta, jobs, s = loaded or load_mixed(path)
    figures = tables.summary_figures(meta, jobs, s)
    w = meta["workload"]
    sizes = tables.io_sizes(s) if s is not None else None
    advice, findings = _findings(path, (meta, jobs, s))
    ts = [tables.workload_summary(meta, figures, s), tables.per_node(jobs)]
    if s is not None and len(s.machines) > 1:       # a grid of several machines: each one's own devices and CPUs
        ts.append(tables.per_machine(s))
    if sizes is not None:
        ts.append(sizes)
    # the findings beside the per-job table whose flags are the job findings (the HTML puts both after the charts)
    ts += [profile.jobs_by_type_and_size(jobs), profile.work_profile(jobs)]     # seed 000 Table 1, seed 004 Fig. 1
    ts += [tables.accounting(jobs, meta.get("groups")), findings,
           tables.per_job(jobs, advice.job_flags() if advice else None)]
    grid = meta.get("grid") or {}
    name = _workload_name(meta)
    sub = (f"{name}: {w['sessions']} sessions, {w['jobs']} jobs, scale {w['scale']:g}, seed {w['seed']}; "
           f"grid {'embedded, ' if grid.get('embedded') else ''}{grid.get('nodes') or '?'} hosts × "
           f"{grid.get('slots')} slots; machine {meta['host'].get('hostname')} ({meta['host'].get('cpus')} CPUs)")
    report = Report(f"statgrid report — {name}", sub, ts, charts(meta, jobs, s, sizes))
    return report, figures


FINDING_COLUMNS = [Column("severity", "severity", align="left"), Column("rule", "rule", align="left"),
                   Column("subject", "on", align="left"), Column("found", "found", align="left"),
                   Column("expected", "expected", align="left"), Column("advice", "advice", align="left"),
                   Column("source", "source", align="left")]


def advice(path: Path, loaded=None, site: dict | None = None):
    """`statgrid advise` on a bundle (statgrid.advise.evidence.Advice): its inventory and its run, with the
    run's figures computed here, as the report's summary computes them, so the report and advise agree.
    loaded: what load_mixed(path) returned, if the caller has it."""
    from statgrid.advise import evidence

    evidence.check_bundle(path)
    try:
        meta, jobs, s = loaded or load_mixed(path)
        summary = tables.summary_figures(meta, jobs, s)
        if s is not None:
            peaks = [tables.series_figures(s.only(m)).get("mb_s_peak") for m in s.machines]
            summary["mb_s_peak_per_machine"] = max((p for p in peaks if p is not None), default=None)
    except ValueError as exc:                    # json's JSONDecodeError: a file cut short or edited
        raise StatgridError(f"{str(path)!r}: bundle.json or jobs.jsonl is not valid JSON ({exc}); run the benchmark "
                            "again, or restore the file.") from None
    except (KeyError, TypeError, IndexError) as exc:
        raise StatgridError(f"{str(path)!r} is missing a field advise needs ({exc!r}); was it written by an older "
                            "statgrid? Run the benchmark again with this version.") from None
    return evidence.advise_bundle(path, (meta, jobs, s), summary, site)


def _findings(path: Path, loaded) -> tuple:
    """(Advice, its table): the failed checks of `statgrid advise` on this bundle — the same records the
    command prints, so the report and advise agree."""
    from statgrid.advise import rules

    try:
        advice_ = advice(path, loaded)
    except StatgridError as exc:
        return None, Table("findings", "Findings (statgrid advise)", FINDING_COLUMNS, [],
                           [f"advise could not read this bundle: {exc}"])
    failed = sorted((r for r in advice_.results if r.status == "failed"),
                    key=lambda r: -rules.SEVERITIES.index(r.rule.severity))
    rows = [{"severity": r.rule.severity, "rule": r.rule.id, "subject": r.subject, "found": rules.found_text(r),
             "expected": r.rule.expected, "advice": r.advice or r.rule.advice, "source": r.rule.source}
            for r in failed]
    counts = {st: sum(r.status == st for r in advice_.results) for st in rules.STATUSES}
    return advice_, Table("findings", "Findings (statgrid advise)", FINDING_COLUMNS, rows, [
        f"The checks that failed: {counts['failed']} of {len(advice_.results)} ({counts['passed']} passed, "
        f"{counts['not evaluated']} not evaluated, {counts['not applicable']} not applicable). Inventory from "
        f"{advice_.inventory_from}. `statgrid advise BUNDLE` prints every check with how to apply the advice and "
        "the effect its source reports; the jobs' flags in the next table are the job findings."])


def charts(meta: dict, jobs: list[dict], s, sizes: Table | None) -> list[Chart]:
    t0 = meta["workload_start_ts"]
    out = series_charts(s, sizes) if s is not None else []
    out.append(node_throughput(jobs, t0))
    out.append(timeline(jobs, t0))
    return out


def series_charts(s, sizes: Table, x_label: str | None = None) -> list[Chart]:
    """The monitor's charts: per library, per machine (when several), CPU stacked, request sizes."""
    out = []
    x = {"x_label": x_label} if x_label else {}
    lines = []
    for (machine, device), libs in s.libraries_by_device().items():
        rows = sorted(s.library_rows_of(machine, libs[0]), key=lambda r: r["ts"])
        where = device if len(s.machines) == 1 else f"{device} on {machine}"
        lines.append({"name": f"{'+'.join(libs)} ({where})", "x": [r["ts"] - s.t0 for r in rows],
                      "y": [mb_s(r) for r in rows]})
    out.append(Chart("throughput_library", "Throughput per library (device, NFS, GPFS or the jobs' own reads + writes)", "lines",
                     {"y_label": "MB/s", "series": lines, **x}, "Libraries on one device share its line (Figure 7)."))
    by_ts: dict[float, dict] = {}
    for r in s.node_rows:
        by_ts.setdefault(s.slot(r["ts"]), {"n": 0, "user": 0.0, "sys": 0.0, "wait": 0.0, "idle": 0.0})
        b = by_ts[s.slot(r["ts"])]
        cpus = s.cpus[r["host"]]
        b["n"] += cpus
        for k, col in (("user", "cpu_user_pct"), ("sys", "cpu_system_pct"), ("wait", "cpu_iowait_pct"),
                       ("idle", "cpu_idle_pct")):
            b[k] += (r[col] or 0) * cpus
    keys = sorted(by_ts)
    out.append(Chart("cpu", "CPU user / sys / wait / idle", "stacked",
                     {"y_label": "% of the grid's CPUs", "x": [k * s.interval_s for k in keys], **x,
                      "layers": [{"name": name, "y": [by_ts[k][name] / by_ts[k]["n"] for k in keys]}
                                 for name in ("user", "sys", "wait", "idle")]}, "Figure 9."))
    out.append(Chart("io_sizes", "I/O request size distribution", "bars",
                     {"y_label": "% of requests", "x_label": "request size", "labels": [r["size"] for r in sizes.rows],
                      "values": [r["share_pct"] or 0 for r in sizes.rows]}, "Figure 4."))
    if len(s.machines) > 1:
        lines = []
        for m in s.machines:
            per = s.per_slot([r for r in s.device_rows if r["host"] == m], mb_s)
            keys = sorted(per)
            lines.append({"name": m, "x": [k * s.interval_s for k in keys], "y": [per[k] for k in keys]})
        out.insert(1, Chart("throughput_machine", "Throughput per machine (its devices' reads + writes)", "lines",
                            {"y_label": "MB/s", "series": lines, **x}, "From each machine's monitor (Figure 8)."))
    return out


def node_throughput(jobs: list[dict], t0: float) -> Chart:
    """Jobs' logical MB/s per grid host over time: each job's bytes spread evenly over its run."""
    hosts = sorted({j["host"] for j in jobs if j.get("host")})
    end = max((j["end_ts"] or t0) for j in jobs) if jobs else t0
    nbins = max(1, int((end - t0) // BIN_S) + 1)
    series = []
    for h in hosts:
        bins = [0.0] * nbins
        for j in jobs:
            if j.get("host") != h or not j.get("start_ts") or not j.get("end_ts") or j["end_ts"] <= j["start_ts"]:
                continue
            ru = JobRusage.parse(j.get("rusage")) or JobRusage()
            rate = ru.logical_io_bytes / (j["end_ts"] - j["start_ts"])
            a, b = j["start_ts"] - t0, j["end_ts"] - t0
            for i in range(max(0, int(a // BIN_S)), min(nbins, int(b // BIN_S) + 1)):
                lo, hi = max(a, i * BIN_S), min(b, (i + 1) * BIN_S)
                if hi > lo:
                    bins[i] += rate * (hi - lo) / BIN_S / 1e6
        series.append({"name": h, "x": [i * BIN_S for i in range(nbins)], "y": bins})
    return Chart("throughput_node", "Jobs' logical I/O per grid host", "lines", {"y_label": "MB/s", "series": series},
                 "From the job records (Figure 8): reads + writes of each job spread over its run.")


def timeline(jobs: list[dict], t0: float) -> Chart:
    """One lane per host slot: jobs packed into the lowest free lane of their host."""
    bars, lanes = [], []
    free: dict[str, list[float]] = {}
    for j in sorted((j for j in jobs if j.get("start_ts") and j.get("end_ts") and j.get("host")),
                    key=lambda j: j["start_ts"]):
        ends = free.setdefault(j["host"], [])
        k = next((i for i, e in enumerate(ends) if e <= j["start_ts"] + 1e-6), None)
        if k is None:
            ends.append(0.0)
            k = len(ends) - 1
            lanes.append(f"{j['host']}/{k + 1}")
        ends[k] = j["end_ts"]
        bars.append({"lane": f"{j['host']}/{k + 1}", "start": j["start_ts"] - t0, "end": j["end_ts"] - t0,
                     "submit": (j.get("submit_ts") or j["start_ts"]) - t0, "kind": j.get("kind"),
                     "label": str(j["id"])})
    lanes.sort(key=lambda x: (x.split("/")[0], int(x.split("/")[1])))
    return Chart("timeline", "Job timeline (grey: waiting in the queue)", "timeline", {"lanes": lanes, "bars": bars},
                 "Jobs per host slot over time: queueing, ramp and trail-out.")


def _side(path: Path):
    """(report, summary figures, series) of one side of a comparison."""
    kind = kind_of(path)
    if kind == "mixed":
        loaded = load_mixed(path)
        return (*mixed_report(path, loaded), loaded[2])
    loaded = load_monitor(path)
    return (*monitor_report(path, loaded), loaded[0])


def _workload_name(meta: dict) -> str:
    """The workload's name, with "in SAS" when its jobs were the SAS twins (Python, the default, is not
    named: a bundle's report reads as before --lang existed)."""
    w = meta["workload"]
    return w["name"] + (" in SAS" if w.get("lang") == "sas" else "")


def _side_name(path: Path, kind: str) -> str:
    """A side's name in a comparison: the directory's, with a bench mixed bundle's job language."""
    if kind != "mixed":
        return Path(path).name
    from statgrid.bench.mixed import lang_label, load_bundle
    return f"{Path(path).name} ({lang_label(load_bundle(Path(path))[0])})"


def compare_report(path_a: Path, path_b: Path) -> Report:
    kind_a, kind_b = kind_of(path_a), kind_of(path_b)
    if kind_a == kind_b == "scale":
        return compare_scale(path_a, path_b)
    if not {kind_a, kind_b} <= {"mixed", "monitor"}:
        raise UsageError(f"--compare got a {kind_a} result ({str(path_a)!r}) and a {kind_b} result "
                         f"({str(path_b)!r}): it needs two `bench mixed` bundles or monitor captures (either side "
                         "may be either), or two `bench scale` directories.")
    (ra, fa, sa), (rb, fb, sb) = _side(path_a), _side(path_b)
    name_a, name_b = _side_name(path_a, kind_a), _side_name(path_b, kind_b)
    t = tables.comparison(name_a, fa, name_b, fb)
    t.notes += [f"{side}: {tables.devices_note(s)}" for side, s in (("A", sa), ("B", sb)) if s is not None]
    differed, inv_note = inventory_diff(path_a, path_b, name_a, name_b)
    t.notes.append(inv_note)
    overlay = []
    for name, s, style in ((name_a, sa, "-"), (name_b, sb, "--")):
        if s is None:
            continue
        per = s.per_slot(s.device_rows, mb_s)
        keys = sorted(per)
        overlay.append({"name": name, "x": [k * s.interval_s for k in keys], "y": [per[k] for k in keys],
                        "style": style})
    chart = Chart("compare_throughput", "Throughput of A and B (device reads + writes)", "lines",
                  {"y_label": "MB/s", "x_label": "s from the start", "series": overlay}, "Figure 12.")
    nodes = [replace(x, id=f"nodes_{side}", title=f"{x.title} — {side.upper()}: {name}")
             for side, name, r in (("a", name_a, ra), ("b", name_b, rb)) for x in r.tables if x.id == "nodes"]
    by_node = node_comparison(name_a, ra, name_b, rb)
    return Report(f"statgrid comparison — {name_a} vs {name_b}", f"A: {ra.subtitle}\nB: {rb.subtitle}",
                  [t, *([differed] if differed is not None else []), *([by_node] if by_node else []), *nodes],
                  [chart])


def node_comparison(name_a: str, ra: Report, name_b: str, rb: Report) -> Table | None:
    """Seed 002 Table 5: per host, each side's mean CPU/real and summed STIMER real time, and the real-time
    difference B − A; an average row over the hosts both sides have (None when they share none)."""
    def rows_of(r: Report) -> dict:
        t = next((x for x in r.tables if x.id == "nodes"), None)
        return {row["host"]: row for row in (t.rows if t else []) if row["host"] not in ("all",)
                and not str(row["host"]).startswith("spread")}
    a, b = rows_of(ra), rows_of(rb)
    hosts = sorted(set(a) & set(b))
    if not hosts:
        return None
    rows = [{"host": h, "cpu_real_a": a[h]["cpu_real_mean"], "real_min_a": a[h]["real_min"],
             "cpu_real_b": b[h]["cpu_real_mean"], "real_min_b": b[h]["real_min"],
             "diff_min": (b[h]["real_min"] or 0) - (a[h]["real_min"] or 0)} for h in hosts]
    if len(rows) > 1:
        n = len(rows)
        rows.append({"host": "average", "cpu_real_a": None, "real_min_a": sum(r["real_min_a"] or 0 for r in rows) / n,
                     "cpu_real_b": None, "real_min_b": sum(r["real_min_b"] or 0 for r in rows) / n,
                     "diff_min": sum(r["diff_min"] for r in rows) / n})
    cols = [Column("host", "host", align="left"), Column("cpu_real_a", "A CPU/real", 2),
            Column("real_min_a", "A real (min)", 2), Column("cpu_real_b", "B CPU/real", 2),
            Column("real_min_b", "B real (min)", 2), Column("diff_min", "real-time difference B − A (min)", 2)]
    return Table("compare_nodes", "Per node, A and B (seed 002 Table 5)", cols, rows,
                 [f"A: {name_a}; B: {name_b}. Per host, the mean CPU/real of its jobs and their summed STIMER real "
                  "time; hosts only one side has are left out."])


def inventory_diff(path_a: Path, path_b: Path, name_a: str, name_b: str) -> tuple[Table | None, str]:
    """What differed between two bundles' inventory.json (monitor/inventory.differences): node values,
    library values, session options, the grid — as a table (None when nothing differs or a side has no
    inventory), and a note for the comparison saying which."""
    from statgrid.monitor import inventory

    invs = {}
    for side, path in (("A", path_a), ("B", path_b)):
        try:
            invs[side] = inventory.load(path) if (Path(path) / "bundle.json").is_file() else None
        except StatgridError as exc:          # a damaged inventory.json: the figures are still compared
            return None, f"Inventories not compared: {exc}"
    missing = [side for side, inv in invs.items() if inv is None]
    if missing:
        return None, (f"{' and '.join(missing)} {'has' if len(missing) == 1 else 'have'} no {inventory.FILE} "
                      "(a monitor capture, or a bundle made before statgrid recorded one): what differed between "
                      "the runs' machines, storage and options is not known.")
    rows = inventory.differences(invs["A"], invs["B"])
    if not rows:
        return None, f"Inventories: identical ({inventory.FILE} of A and B: nodes, libraries, session options, grid)."
    table = Table("inventory_diff", f"What differed — A: {name_a}, B: {name_b}",
                  [Column("section", "section", align="left"),
                   Column("name", "node / library / host", align="left"), Column("key", "value", align="left"),
                   Column("a", "A", align="left"), Column("b", "B", align="left")],
                  rows, [f"From each bundle's {inventory.FILE}: every node value, library value, session option and "
                         "grid setting that is not the same in A and B ('—': not known on that side)."])
    return table, f"Inventories: {len(rows)} value(s) differ — see \"What differed\"."


def compare_scale(path_a: Path, path_b: Path) -> Report:
    """Two scalability tests: each step side by side, and both curves on one chart (Figure 10)."""
    from statgrid.bench.scale import load

    ma, mb = load(path_a), load(path_b)
    name_a, name_b = Path(path_a).name, Path(path_b).name
    t = tables.scale_comparison(name_a, ma, name_b, mb)
    # each step is a bench mixed bundle: the first steps' inventories say what differed between the tests
    step_a, step_b = (Path(p) / (m["steps"][0].get("bundle") or "") if m.get("steps") else Path(p)
                      for p, m in ((path_a, ma), (path_b, mb)))
    differed, inv_note = inventory_diff(step_a, step_b, name_a, name_b)
    t.notes.append(inv_note.replace("Inventories:", "Inventories (first steps):", 1))
    chart = Chart("scaling", "Scalability of A and B: throughput and efficiency by nodes", "scaling",
                  {"runs": [_scaling_run(name_a, ma, "-"), _scaling_run(name_b, mb, "--")]},
                  "Figure 10: solid A, dashed B; grey: linear from A's first step.")
    return Report(f"statgrid comparison — {name_a} vs {name_b}", f"A: {_scale_subtitle(ma)}\nB: {_scale_subtitle(mb)}",
                  [t, *([differed] if differed is not None else [])], [chart])


def _scaling_run(name: str, meta: dict, style: str = "-") -> dict:
    """One scalability test as a line of the scaling chart."""
    steps = meta["steps"]
    return {"name": name, "nodes": [s["nodes"] for s in steps], "jobs_per_h": [s["jobs_per_h"] or 0 for s in steps],
            "efficiency": [s["efficiency"] for s in steps], "style": style}


def _scale_subtitle(meta: dict) -> str:
    return (f"1 … {meta['max_nodes']} nodes, {meta['sessions_per_node']} sessions per node, {meta['slots']} slots per "
            f"node; machine {meta['host'].get('hostname')} ({meta['host'].get('cpus')} CPUs)")


def scale_report(path: Path) -> Report:
    from statgrid.bench.scale import load

    meta = load(path)
    chart = Chart("scaling", "Scalability: throughput and efficiency by nodes", "scaling",
                  {"runs": [_scaling_run("", meta)]}, "Figure 10.")
    return Report("statgrid report — scalability", _scale_subtitle(meta), [tables.scalability(meta)], [chart])


IOBENCH_SPEC_KEYS = ("dir", "mode", "pattern", "bs", "threads", "direct", "runs")


def load_iobench(path: Path) -> dict:
    """An `iobench --json` result, checked for what the report reads (the bad file and field named)."""
    data = json.loads(Path(path).read_text())
    missing = [f"spec.{k}" for k in IOBENCH_SPEC_KEYS if k not in (data.get("spec") or {})]
    summary = data.get("summary") or {}
    if not summary.get("nodes"):
        missing.append("summary.nodes (no node's figures)")
    total = summary.get("total") or {}
    missing += [f"summary.total.{d}" for d in ("read", "write") if "bw_bytes" not in (total.get(d) or {})]
    if not isinstance(data.get("runs"), list):
        missing.append("runs")
    if missing:
        raise StatgridError(f"{str(path)!r} lacks {', '.join(missing)}: it is not a whole `statgrid iobench --json` "
                            "result; run the test again with --json.")
    return data


def iobench_report(paths: list[Path]) -> Report:
    """One or more iobench results: seed 000 Table 2 (operations × configurations), the detail, a chart."""
    paths = [Path(p) for p in paths]
    stems = [p.stem for p in paths]
    results = [(p.stem if stems.count(p.stem) == 1 else f"{p.parent.name}/{p.stem}", load_iobench(p)) for p in paths]
    matrix, detail = tables.iobench_matrix(results), tables.iobench(results)
    configs = [c for c in matrix.columns if c.key.startswith("mean:")]
    labels, values = [], []
    for r in matrix.rows:
        for c in configs:
            if r.get(c.key) is not None:
                labels.append(r["operation"] + ("" if len(configs) == 1 else " · " + c.key[len("mean:"):]))
                values.append(r[c.key])
    chart = Chart("iobench", "I/O test: mean MB/s by operation and configuration", "bars",
                  {"y_label": "MB/s", "x_label": "operation", "labels": labels, "values": values},
                  "Seed 000 Table 2 as bars.")
    sub = detail.title if len(results) == 1 else f"{len(results)} I/O tests: {', '.join(n for n, _ in results)}"
    return Report("statgrid report — I/O test", sub, [matrix, detail], [chart])


def build(paths: Path | list[Path], compare: Path | None = None) -> Report:
    """The report of one result, or of several iobench results side by side (seed 000 Table 2)."""
    paths = [Path(p) for p in paths] if isinstance(paths, (list, tuple)) else [Path(paths)]
    if len(paths) > 1:
        return build_many(paths, compare)
    path = paths[0]
    if not path.exists():
        raise UsageError(f"{str(path)!r} does not exist; give a results bundle (e.g. <home>/bench/mixed-…).")
    if compare is not None and not Path(compare).exists():
        raise UsageError(f"--compare {str(compare)!r} does not exist; give another result of the same sort.")
    kind = kind_of(path)
    try:
        if compare is not None:
            return compare_report(path, compare)
        if kind == "mixed":
            return mixed_report(path)[0]
        if kind == "scale":
            return scale_report(path)
        if kind == "repeat":
            return repeat_report(path)
        if kind == "monitor":
            return monitor_report(path)[0]
        return iobench_report([path])
    except (KeyError, TypeError, IndexError) as exc:
        which = f"{str(path)!r}" + (f" or {str(compare)!r}" if compare is not None else "")
        raise StatgridError(f"{which} is missing a field the report needs ({exc!r}); was it written by an older "
                            "statgrid? Run the benchmark again with this version.") from None


def repeat_report(path: Path) -> Report:
    """`bench mixed --repeat N`: every summary figure as its mean with the runs' spread, and the first run's
    own report tables after it (the runs' bundles are reports of their own)."""
    from statgrid.bench import repeat as rp
    meta = rp.load(path)
    stats = {r["key"]: r for r in rp.spread(meta)}
    rows = []
    for r in tables.summary_rows({k: v["mean"] for k, v in stats.items()}):
        st = stats[r["key"]]
        rows.append({"section": r["section"], "figure": r["figure"], "unit": r["unit"], "mean": st["mean"],
                     "min": st["min"], "max": st["max"], "spread": st["spread"], "runs": st["runs"]})
    cols = [Column("section", "section", align="left"), Column("figure", "figure", align="left"),
            Column("mean", "mean"), Column("min", "min"), Column("max", "max"),
            Column("spread", "(max − min) ÷ mean", 3), Column("runs", "runs"), Column("unit", "unit", align="left")]
    n = len(meta["runs"])
    t = Table("repeat", f"Summary over {n} runs", cols, rows,
              [f"Each figure of the {n} runs' own reports (run-1 … run-{n}): mean, lowest and highest, and the "
               "spread (max − min) ÷ mean."])
    first = mixed_report(Path(path) / meta["runs"][0]["bundle"])[0] if meta["runs"] else None
    sub = f"{n} runs of one workload" + (f"; first run: {first.subtitle}" if first else "")
    return Report(f"statgrid report — {n} runs", sub, [t], first.charts if first else [])


def build_many(paths: list[Path], compare: Path | None) -> Report:
    if compare is not None:
        raise UsageError("--compare takes one RESULTS; several RESULTS are iobench files laid out side by side.")
    for p in paths:
        if not p.exists():
            raise UsageError(f"{str(p)!r} does not exist; give iobench --json files that exist.")
        if kind_of(p) != "iobench":
            raise UsageError(f"{str(p)!r} is a {kind_of(p)} result: several RESULTS must all be `iobench --json` "
                             "files (one table of operations × configurations); report other results one at a time.")
    return iobench_report(paths)
