"""statgrid advise: the rule language (safe, lazy, missing values), every rule over hand-written inventories and
figures — one case that fires and one that passes, expected by hand from the numbers written here — and the
demo report's contradiction (CPU 99.9 % busy, 0 % wait, every job "starved for I/O") as a bundle-like fixture:
the finding must be CPU, never I/O."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from statgrid.advise import evidence, rules
from statgrid.advise.rules import Expr, Missing, RuleError, Rule, check_one
from statgrid.advise.rules_data import RULES
from statgrid.errors import UsageError

GIB, MIB, KIB = 1 << 30, 1 << 20, 1 << 10
RULE = {r.id: r for r in RULES}


# -- the language ------------------------------------------------------------------------------------
def test_expressions_read_names_lazily_and_refuse_anything_else():
    e = Expr("lib.gpfs.pagepool_bytes >= 4 * GiB and lib.fs_type in ('gpfs', 'x')")
    assert e.names == ["lib.gpfs.pagepool_bytes", "lib.fs_type"]
    assert e.eval({"lib.gpfs.pagepool_bytes": 8 * GIB, "lib.fs_type": "gpfs"}) is True
    assert e.eval({"lib.gpfs.pagepool_bytes": GIB}) is False            # and stops before the missing name
    with pytest.raises(Missing) as m:
        e.eval({"lib.fs_type": "gpfs"})
    assert m.value.name == "lib.gpfs.pagepool_bytes"
    assert Expr("a or b").eval({"a": 1}) is True                         # b never read
    assert Expr("first(site.x, run.y, 7) % 4").eval({"run.y": 10}) == 2
    assert Expr("max(1, a) - abs(-b) / 2 if c else 0").eval({"a": 5, "b": 4, "c": True}) == 3
    assert Expr("1 < a <= 3").eval({"a": 3}) is True and Expr("1 < a <= 3").eval({"a": 4}) is False
    for bad in ("__import__('os').system('true')", "a.b()", "(1).real", "a[0]", "lambda: 1", "open('x')",
                "[x for x in a]", "a ** 2", "f'{a}'", "a := 1", "(a, b)"):
        with pytest.raises(RuleError):
            Expr(bad)


def test_a_rule_with_an_unknown_scope_or_severity_is_refused_when_written():
    with pytest.raises(RuleError, match="scope 'node'"):
        Rule("x", "t", "node", "a > 1", "e", "info", "a", "b", "c", "d")
    with pytest.raises(RuleError, match="severity 'bad'"):
        Rule("x", "t", "grid", "a > 1", "e", "bad", "a", "b", "c", "d")


def test_every_rule_reads_only_names_of_its_scope_and_cites_a_source():
    assert len({r.id for r in RULES}) == len(RULES)
    for r in RULES:
        allowed = (*rules.COMMON_PREFIXES, *rules.SCOPE_PREFIXES[r.scope])
        assert all(n.split(".")[0] in allowed for n in r.reads), (r.id, r.reads)
        assert ("seed 00" in r.source or "Linux kernel" in r.source or "SAS Institute" in r.source), r.id
        assert r.advice and r.apply and r.effect and r.expected
        for name in rules._FIELD.findall(r.advice + r.label):
            assert name[0] in template_names_known(r), (r.id, name[0])


def template_names_known(r) -> set[str]:
    """What an advice or label template may fill: the rule's reads, constants, and values shown beside them."""
    return set(r.reads) | set(r.shows) | set(rules.CONSTANTS) | {"run.devices_mb_s_per_core", "run.psi_cpu_some_pct", "run.cpu_wait_pct", "run.cpu_busy_pct",
                                                  "run.psi_io_some_pct", "lib.devices", "machine.slots",
                                                  "node.threads", "host.jobs", "WORK.mount_point", "grid.machines",
                                                  "site.storage_mb_s", "node.dirty_background_ratio"}


# -- each rule, fired and passed --------------------------------------------------------------------
def status(rule_id: str, ns: dict, has_run: bool = True) -> str:
    return check_one(RULE[rule_id], ns, has_run)[0]


def gpfs(**values) -> dict:
    ns = {"lib.fs_type": "gpfs", "session.bufsize_bytes": 256 * KIB}
    ns.update({f"lib.gpfs.{k}": v for k, v in values.items()})
    return ns


def job(**values) -> dict:
    """A job with CPU/real 0.30 on a quiet node (20 % busy, no wait, no pressure), with `values` over that."""
    ns = {"job.cpu_real": 0.3, "job.node_cpu_busy_pct": 20.0, "job.psi_cpu_some_pct": 5.0, "job.node_iowait_pct": 0.0,
          "job.psi_io_some_pct": 1.0, "job.dev_util_pct": 10.0, "job.psi_memory_some_pct": 0.0,
          "job.major_faults_per_s": 0.0}
    ns.update({f"job.{k}": v for k, v in values.items()})
    return ns


@pytest.mark.parametrize("rule_id, fires, passes", [
    ("gpfs.pagepool", gpfs(pagepool_bytes=GIB), gpfs(pagepool_bytes=8 * GIB)),
    # 1 MiB blocks on a 3 MiB stripe straddle stripes; on a 1 MiB stripe they match (000: XIV 1 MB, GPFS 1 MB)
    ("gpfs.blocksize_stripe", {**gpfs(blocksize_bytes=MIB), "site.stripe_bytes": 3 * MIB},
     {**gpfs(blocksize_bytes=4 * MIB), "site.stripe_bytes": MIB}),
    # 1 MiB ÷ 96 KiB leaves 64 KiB; 256 KiB divides 1 MiB
    ("fs.blocksize_bufsize", {**gpfs(blocksize_bytes=MIB), "session.bufsize_bytes": 96 * KIB},
     {**gpfs(blocksize_bytes=MIB), "session.bufsize_bytes": 256 * KIB}),
    ("fs.blocksize_bufsize", {"lib.block_bytes": 4096, "session.bufsize_bytes": 6000},
     {"lib.block_bytes": 4096, "session.bufsize_bytes": 8 * KIB}),
    # 2 × 600 MB/s = 1200 > 1000; 5000 ≥ 1200 (000's rule of thumb); the run's peak when no --set
    ("gpfs.maxmbps", {**gpfs(maxMBpS=1000), "site.required_mb_s": 600.0},
     {**gpfs(maxMBpS=5000), "site.required_mb_s": 600.0}),
    ("gpfs.maxmbps", {**gpfs(maxMBpS=1000), "run.mb_s_peak_per_machine": 700.0},
     {**gpfs(maxMBpS=1400), "run.mb_s_peak_per_machine": 700.0}),
    # 4 nodes × 6000 = 24000 > 2 × 10000; 4 × 5000 = 20000 ≤ 20000 (004: Σ maxMBpS ≤ 2 × the back end)
    ("gpfs.maxmbps_storage", {**gpfs(maxMBpS=6000), "grid.machines": 4, "site.storage_mb_s": 10000.0},
     {**gpfs(maxMBpS=5000), "grid.machines": 4, "site.storage_mb_s": 10000.0}),
    ("gpfs.prefetchpct", gpfs(prefetchPct=20), gpfs(prefetchPct=40)),
    ("gpfs.seqdiscard", gpfs(seqDiscardThreshold_bytes=MIB), gpfs(seqDiscardThreshold_bytes=GIB)),
    ("gpfs.scatterbuffers", gpfs(scatterBuffers="yes"), gpfs(scatterBuffers="no")),
    ("dev.readahead", {"lib.has_device": True, "lib.readahead_kb": 128},
     {"lib.has_device": True, "lib.readahead_kb": 8192}),
    ("dev.scheduler", {"lib.has_device": True, "lib.rotational": False, "lib.scheduler": "mq-deadline"},
     {"lib.has_device": True, "lib.rotational": False, "lib.scheduler": "none"}),
    ("dev.nr_requests", {"lib.has_device": True, "lib.nr_requests": 64},
     {"lib.has_device": True, "lib.nr_requests": 256}),
    # 512 KiB splits a 1 MiB block; 1024 KiB = 1 MiB ≥ max(1 MiB, 1 MiB, 256 KiB)
    ("dev.max_sectors_kb", {**gpfs(blocksize_bytes=MIB), "lib.has_device": True, "lib.max_sectors_kb": 512},
     {**gpfs(blocksize_bytes=MIB), "lib.has_device": True, "lib.max_sectors_kb": 1024}),
    ("dev.max_sectors_kb", {"lib.has_device": True, "lib.max_sectors_kb": 1024, "session.bufsize_bytes": 2 * MIB},
     {"lib.has_device": True, "lib.max_sectors_kb": 2048, "session.bufsize_bytes": 2 * MIB}),
    ("session.bufsize", {"session.bufsize_bytes": 8 * KIB}, {"session.bufsize_bytes": 256 * KIB}),
    ("storage.work_fast", {"WORK.fs_type": "ext4", "WORK.rotational": True},
     {"WORK.fs_type": "ext4", "WORK.rotational": False}),
    ("storage.work_fast", {"WORK.fs_type": "xfs", "WORK.rotational": 1}, {"WORK.fs_type": "tmpfs"}),
    ("storage.util_fast", {"UTIL.mount_point": "/u", "WORK.mount_point": "/w", "UTIL.fs_type": "ext4",
                           "UTIL.rotational": True},
     {"UTIL.mount_point": "/u", "WORK.mount_point": "/w", "UTIL.fs_type": "tmpfs"}),
    ("storage.work_apart", {"WORK.mount_point": "/", "DATA.mount_point": "/"},
     {"WORK.mount_point": "/scratch", "DATA.mount_point": "/"}),
    ("grid.slots_vs_cpus", {"machine.slots": 8, "node.threads": 2}, {"machine.slots": 2, "node.threads": 4}),
    ("grid.master_host", {"grid.machines": 2, "grid.master_runs_jobs": True, "grid.master_weighted_down": False},
     {"grid.machines": 2, "grid.master_runs_jobs": True, "grid.master_weighted_down": True}),
    ("grid.dispatch_interval", {"grid.dispatch_interval_s": 15.0}, {"grid.dispatch_interval_s": 0.0}),
    ("node.thp", {"node.thp": "always"}, {"node.thp": "never"}),
    ("node.governor", {"node.governor": "powersave"}, {"node.governor": "performance"}),
    ("node.swappiness", {"node.swappiness": 60}, {"node.swappiness": 10}),
    ("node.dirty_ratio", {"node.dirty_ratio": 20, "node.dirty_background_ratio": 10},
     {"node.dirty_ratio": 40, "node.dirty_background_ratio": 10}),
    # 800 MB/s ÷ 16 cores = 50 < 100; 3200 ÷ 16 = 200
    ("sizing.storage_per_core", {"site.storage_mb_s": 800.0, "grid.cores": 16},
     {"site.storage_mb_s": 3200.0, "grid.cores": 16}),
    ("sizing.mb_s_per_core", {"run.io_mb_s_per_core": 10.6}, {"run.io_mb_s_per_core": 93.0}),
    ("run.short_of_cpu", {"run.cpu_busy_pct": 99.9}, {"run.cpu_busy_pct": 45.0}),
    # 000 Table 3's 10 % wait is the line; PSI I/O reads where iowait does not (async I/O)
    ("run.short_of_io", {"run.cpu_wait_pct": 0.0, "run.psi_io_some_pct": 35.0},
     {"run.cpu_wait_pct": 0.0, "run.psi_io_some_pct": 0.8}),
    ("run.short_of_memory", {"run.psi_memory_some_pct": 25.0}, {"run.psi_memory_some_pct": 0.2}),
    # a job that waited (CPU/real 0.3 < 0.7), and what its node showed over its run
    ("job.short_of_cpu", job(node_cpu_busy_pct=99.9), job(node_cpu_busy_pct=40.0, psi_cpu_some_pct=10.0)),
    ("job.short_of_cpu", job(node_cpu_busy_pct=60.0, psi_cpu_some_pct=70.0), job(psi_cpu_some_pct=49.0)),
    ("job.short_of_io", job(node_iowait_pct=35.0), job()),
    ("job.short_of_io", job(psi_io_some_pct=45.0), job(dev_util_pct=89.0)),       # async I/O: iowait 0, PSI not
    ("job.short_of_io", job(dev_util_pct=97.0), job(dev_util_pct=50.0)),
    ("job.short_of_memory", job(psi_memory_some_pct=25.0), job()),
    ("job.short_of_memory", job(major_faults_per_s=400.0), job(major_faults_per_s=3.0)),
    ("job.waited_unexplained", job(), job(node_iowait_pct=12.0)),
])
def test_rule_fires_and_passes(rule_id, fires, passes):
    assert status(rule_id, fires) == "failed"
    assert status(rule_id, passes) == "passed"


def test_a_waited_job_is_unexplained_exactly_when_no_cause_rule_fires():
    """job.waited_unexplained is the negation of the three cause rules: a busy device alone (no iowait, no PSI)
    is a cause (job.short_of_io), so such a job is not also 'waited with no pressure' (found by review)."""
    causes = ("job.short_of_cpu", "job.short_of_io", "job.short_of_memory")
    for ev in (job(), job(dev_util_pct=99.0), job(node_cpu_busy_pct=95.0), job(psi_memory_some_pct=30.0),
               job(node_iowait_pct=12.0, dev_util_pct=20.0), job(major_faults_per_s=150.0)):
        fired = any(status(r, ev) == "failed" for r in causes)
        assert (status("job.waited_unexplained", ev) == "failed") == (not fired), ev


def test_a_job_that_did_not_wait_is_not_concerned():
    for rule_id in ("job.short_of_cpu", "job.short_of_io", "job.short_of_memory", "job.waited_unexplained"):
        assert status(rule_id, job(cpu_real=0.95, node_cpu_busy_pct=99.9, node_iowait_pct=50.0)) == "not applicable"


def test_rules_that_do_not_concern_the_item_or_lack_a_value_say_so():
    assert status("gpfs.pagepool", {"lib.fs_type": "ext4"}) == "not applicable"
    assert status("dev.scheduler", {"lib.has_device": True, "lib.rotational": True, "lib.scheduler": "bfq"}) \
        == "not applicable"                                    # a spinning disk keeps its elevator
    assert status("dev.readahead", {"lib.has_device": False}) == "not applicable"       # tmpfs, NFS
    assert status("grid.master_host", {"grid.machines": 1, "grid.master_runs_jobs": True}) == "not applicable"
    st, found, reason = check_one(RULE["gpfs.blocksize_stripe"], gpfs(blocksize_bytes=MIB), True)
    assert st == "not evaluated" and "--set stripe_bytes=VALUE" in reason
    st, _, reason = check_one(RULE["run.short_of_cpu"], {}, False)
    assert st == "not evaluated" and reason.startswith("needs a bundle")
    st, _, reason = check_one(RULE["job.short_of_cpu"], {}, False)
    assert st == "not evaluated" and reason.startswith("needs a bundle")
    st, _, reason = check_one(RULE["node.governor"], {}, True)     # VMs often have no cpufreq
    assert (st, reason) == ("not evaluated", "needs node.governor (not in the inventory: unreadable here, or an "
                                             "inventory without it)")


# -- the inventory's shape → the rules' items -------------------------------------------------------------
def inventory() -> dict:
    """Two machines, GPFS for DATA and WORK (one file system), UTIL on local flash; the shape of COMMON.md's
    contract, values written by hand."""
    lib = {"host": "m1", "fs_type": "gpfs", "mount_point": "/gpfs/sas", "source": "sasfs", "mount_options": ["rw"],
           "block_bytes": 4 * MIB, "devices": [], "readahead_kb": None, "scheduler": None, "nr_requests": None,
           "max_sectors_kb": None, "rotational": None, "nfs": None,
           "gpfs": {"pagepool_bytes": 2 * GIB, "maxMBpS": 2000, "blocksize_bytes": 4 * MIB, "prefetchPct": 20,
                    "seqDiscardThreshold_bytes": MIB, "worker1Threads": 48, "maxFilesToCache": 20000}}
    util = {"host": "m1", "fs_type": "xfs", "mount_point": "/flash", "source": "/dev/nvme0n1", "block_bytes": 4096,
            "devices": ["nvme0n1"], "readahead_kb": 128, "scheduler": "none", "nr_requests": 1023,
            "max_sectors_kb": 512, "rotational": False, "gpfs": None, "nfs": None}
    node = {"threads": 16, "cores": 8, "thp": "always", "governor": "performance", "swappiness": 10,
            "dirty_ratio": 40, "dirty_background_ratio": 10}
    return {"schema": 1, "nodes": {"m1": node, "m2": {**node, "thp": "never"}},
            "libraries": {"DATA": {**lib, "path": "/gpfs/sas/data"}, "WORK": {**lib, "path": "/gpfs/sas/work"},
                          "UTIL": {**util, "path": "/flash/util"}},
            "session": {"memsize_bytes": 2 * GIB, "bufsize_bytes": 256 * KIB},
            "grid": {"hosts": {"g1": {"slots": 8, "machine": "m1", "open": True},
                               "g2": {"slots": 32, "machine": "m2", "open": True}},
                     "master_host": "m1", "dispatch_interval_s": 0.0,
                     "queues": {"normal": {"priority": 30, "hosts": "g1+1 others+2"}}}}


def results_by(advice_results) -> dict:
    return {(r.rule.id, r.subject): r for r in advice_results}


def test_an_inventory_checked_rule_by_rule(tmp_path):
    out = rules.evaluate(RULES, evidence.items(inventory(), None, {"stripe_bytes": MIB}), has_run=False)
    by = results_by(out)
    gp = "DATA, WORK on sasfs (gpfs)"
    fl = "UTIL on /dev/nvme0n1 (xfs, nvme0n1)"
    # libraries sharing one mount are checked once; GPFS rules only on GPFS
    assert {s for (_, s) in by if s.startswith(("DATA", "UTIL"))} == {gp, fl}
    assert by[("gpfs.pagepool", gp)].status == "failed"               # 2 GiB < 4 GiB
    assert by[("gpfs.pagepool", gp)].found == {"lib.gpfs.pagepool_bytes": 2 * GIB}
    assert by[("gpfs.blocksize_stripe", gp)].status == "passed"       # 4 MiB = 4 × 1 MiB
    assert by[("fs.blocksize_bufsize", gp)].status == "passed"        # 4 MiB = 16 × 256 KiB
    assert by[("gpfs.prefetchpct", gp)].status == "failed" and by[("gpfs.seqdiscard", gp)].status == "failed"
    assert by[("gpfs.maxmbps", gp)].status == "not evaluated"         # no run, no --set required_mb_s
    assert by[("gpfs.scatterbuffers", gp)].status == "not evaluated"  # the inventory does not read it
    assert by[("gpfs.pagepool", fl)].status == "not applicable"
    assert by[("dev.scheduler", fl)].status == "passed" and by[("dev.nr_requests", fl)].status == "passed"
    assert by[("dev.readahead", fl)].status == "failed"               # 128 KiB < 8192 KiB
    assert by[("dev.max_sectors_kb", fl)].status == "failed"          # 512 KiB < 1 MiB
    assert by[("dev.readahead", gp)].status == "not applicable"       # GPFS: no block device under the mount
    assert by[("storage.work_fast", "grid")].status == "not evaluated"   # GPFS on ? storage: rotational unknown
    assert by[("storage.util_fast", "grid")].status == "passed"       # non-rotational flash
    assert by[("storage.work_apart", "grid")].status == "failed"      # WORK and DATA on /gpfs/sas
    # m1 runs g1 (the master's machine), and the queue prefers the others (g1+1 others+2)
    assert by[("grid.master_host", "grid")].status == "passed"
    assert by[("grid.dispatch_interval", "grid")].status == "passed"
    assert by[("session.bufsize", "grid")].status == "passed"
    assert by[("grid.slots_vs_cpus", "m1")].status == "passed"        # 8 ≤ 16
    assert by[("grid.slots_vs_cpus", "m2")].status == "failed"        # 32 > 16
    assert by[("node.thp", "m1")].status == "failed" and by[("node.thp", "m2")].status == "passed"
    assert by[("job.short_of_cpu", "jobs")].status == "not evaluated"


def test_master_weighting_read_from_the_queues():
    inv = inventory()
    assert evidence.grid_values(inv)["grid.master_weighted_down"] is True
    inv["grid"]["queues"]["normal"]["hosts"] = "all"
    assert evidence.grid_values(inv)["grid.master_weighted_down"] is False
    inv["grid"]["queues"]["normal"]["hosts"] = "g2+3 g1+3"
    assert evidence.grid_values(inv)["grid.master_weighted_down"] is False      # equal is not lower
    inv["grid"]["hosts"]["g1"]["open"] = False                                  # master kept free of jobs
    v = evidence.grid_values(inv)
    assert (v["grid.master_runs_jobs"], v["grid.machines"], v["grid.cores"], v["grid.slots_total"]) == (False, 2, 16, 40)


def test_site_facts_from_set():
    assert evidence.parse_site(["stripe_bytes=1M", "required_mb_s=1600", "storage_mb_s=4000.5"]) == \
        {"stripe_bytes": MIB, "required_mb_s": 1600.0, "storage_mb_s": 4000.5}
    for bad, says in (("stripe=1M", "NAME one of stripe_bytes"), ("stripe_bytes=big", "'big' is not a positive size"),
                      ("required_mb_s=-3", "'-3' is not a positive number"), ("storage_mb_s", "NAME=VALUE")):
        with pytest.raises(UsageError, match=says):
            evidence.parse_site([bad])


# -- the run's evidence: a bundle-like fixture -----------------------------------------------------------
T0 = 1_800_000_000.0


def write_bundle(root: Path, busy_pct: float, iowait_pct: float, psi_cpu: float, psi_io: float) -> Path:
    """A bench mixed bundle as the report reads it: bundle.json, jobs.jsonl and one machine's monitor series
    (grid/monitor/node1, written by the monitor's own MonitorWriter), 1 s samples from T0+1 to T0+20.
    Job 1 (io) ran 10 s with 1 s of CPU (CPU/real 0.10: it waited); job 2 (cpu) 10 s with 9.5 s (0.95)."""
    from statgrid.monitor import store
    from statgrid.monitor.metrics import DISK_METRICS, NODE_METRICS

    root.mkdir()
    meta = {"kind": "statgrid-bench-mixed", "version": 1,
            "workload": {"name": "MA1", "lang": "python", "sessions": 1, "jobs": 2, "scale": 0.0001, "seed": 1},
            "grid": {"embedded": True, "nodes": 2, "slots": 2}, "groups": {}, "start_ts": T0, "end_ts": T0 + 20,
            "workload_start_ts": T0, "host": {"hostname": "m", "cpus": 2, "mem_bytes": 8 * GIB}}
    (root / "bundle.json").write_text(json.dumps(meta))
    jobs = []
    for jid, kind, host, cpu in ((1, "io", "node1", 1.0), (2, "cpu", "node2", 9.5)):
        jobs.append({"id": jid, "state": "DONE", "host": host, "kind": kind, "template": f"{kind}_t",
                     "submit_ts": T0 + 1, "start_ts": T0 + 2, "end_ts": T0 + 12,
                     "stimer_total": {"real_s": 10.0, "user_cpu_s": cpu, "sys_cpu_s": 0.0, "memory_bytes": 1},
                     "rusage": {"user_cpu_s": cpu, "sys_cpu_s": 0.0, "max_rss_bytes": 100 * MIB, "page_faults": 0}})
    (root / "jobs.jsonl").write_text("".join(json.dumps(j) + "\n" for j in jobs))
    mon = root / "grid" / "monitor"
    store.write_machine(mon, "node1", {"machine_id": "k", "cpus": 2})
    w = store.MonitorWriter(mon, "node1", flush_every=10_000)
    for t in range(1, 21):
        node = {"ts": T0 + t, "host": "node1", "interval_s": 1.0, **{m.name: None for m in NODE_METRICS},
                "cpu_user_pct": busy_pct, "cpu_system_pct": 0.0, "cpu_iowait_pct": iowait_pct,
                "cpu_idle_pct": 100.0 - busy_pct - iowait_pct, "cpu_busy_cores": busy_pct / 50,
                "mem_used_bytes": GIB, "psi_cpu_some_pct": psi_cpu, "psi_io_some_pct": psi_io,
                "psi_io_full_pct": 0.0, "psi_memory_some_pct": 0.0, "psi_memory_full_pct": 0.0}
        disk = {"ts": T0 + t, "host": "node1", "device": "vda", **{m.name: 0.0 for m in DISK_METRICS},
                "read_bytes_per_s": 5e6, "read_iops": 20.0, "avg_request_bytes": 250e3, "util_pct": 5.0}
        w.append({"node": [node], "disk": [disk], "library": []})
    w.flush()
    return root


def test_demo_contradiction_cpu_saturated_jobs_are_short_of_cpu_not_io(tmp_path):
    from statgrid.report import build

    b = write_bundle(tmp_path / "b", busy_pct=99.9, iowait_pct=0.0, psi_cpu=98.0, psi_io=0.5)
    adv = build.advice(b)
    by = results_by(adv.results)
    cpu, io = by[("job.short_of_cpu", "2 jobs")], by[("job.short_of_io", "2 jobs")]
    # job 1: CPU/real 1 ÷ 10 = 0.10 < 0.7, its node's CPUs 99.9 % busy over its run; job 2 (0.95) did not wait
    assert cpu.status == "failed" and cpu.found == {"checked": 1, "failed": 1, "not_applicable": 1,
                                                    "not_evaluated": 0}
    assert [(i["id"], i["label"]) for i in cpu.items] == \
        [(1, "short of CPU (the node's CPUs were busy 99.9 %; CPU/real 0.10)")]
    assert io.status == "passed" and by[("job.waited_unexplained", "2 jobs")].status == "passed"
    assert by[("run.short_of_cpu", "grid")].status == "failed" and by[("run.short_of_io", "grid")].status == "passed"
    assert adv.job_flags() == {1: "short of CPU (the node's CPUs were busy 99.9 %; CPU/real 0.10)"}
    # the report says the same: its per-job flag and findings come from these records
    rep, _ = build.mixed_report(b)
    jobs = next(t for t in rep.tables if t.id == "jobs").rows
    assert [r["flag"] for r in jobs] == ["short of CPU (the node's CPUs were busy 99.9 %; CPU/real 0.10)", ""]
    findings = next(t for t in rep.tables if t.id == "findings").rows
    assert {"run.short_of_cpu", "job.short_of_cpu"} <= {r["rule"] for r in findings}
    assert not any("I/O" in r["found"] or r["rule"] in ("run.short_of_io", "job.short_of_io") for r in findings)
    assert not any("I/O" in r["flag"] for r in jobs)


def test_io_bound_jobs_are_short_of_io_not_cpu(tmp_path):
    from statgrid.report import build

    b = write_bundle(tmp_path / "b", busy_pct=25.0, iowait_pct=60.0, psi_cpu=5.0, psi_io=70.0)
    by = results_by(build.advice(b).results)
    io = by[("job.short_of_io", "2 jobs")]
    assert io.status == "failed" and [i["id"] for i in io.items] == [1]
    # the node's figures are machine-wide, and say so; the fixture's job records carry no read/write bytes
    assert io.items[0]["label"] == ("short of I/O (its machine, all processes: I/O wait 60.0 %, I/O pressure 70 %, "
                                    "busiest device 5 % busy, devices 5.0 MB/s; the job's own reads and writes not "
                                    "in its record; CPU/real 0.10)")
    assert by[("job.short_of_cpu", "2 jobs")].status == "passed"
    assert by[("run.short_of_io", "grid")].status == "failed" and by[("run.short_of_cpu", "grid")].status == "passed"
    # the bundle has no inventory.json: bundle.json gives the machine's CPUs and the embedded grid's slots
    assert by[("grid.slots_vs_cpus", "m")].found == {"machine.slots": 4, "node.threads": 2}
    assert by[("grid.slots_vs_cpus", "m")].status == "failed"


def test_host_imbalance_names_the_host_off_the_mean():
    figures = evidence.RunFigures({"hosts": 4, "host_real_mean": 125.0},
                                  {h: {"jobs": 3, "real_s": r} for h, r in
                                   (("a", 100.0), ("b", 100.0), ("c", 100.0), ("d", 200.0))})
    # mean 125; ±25 % = ±31.25 s: a, b, c are 25 s off (pass), d is 75 s off
    (r,) = [x for x in rules.evaluate([RULE["host.imbalance"]], evidence.items({}, figures), True)]
    assert r.status == "failed" and [i["subject"] for i in r.items] == ["d"]
    assert r.items[0]["label"] == "summed real time 200 s against its share of 125 s (3 jobs)"
    assert rules.found_text(r) == "1 of 4 hosts checked flagged: d"


def test_bad_bundle_and_damaged_inventory_are_clear_errors(tmp_path):
    from statgrid.errors import StatgridError
    from statgrid.report import build

    with pytest.raises(UsageError, match="is not a `bench mixed` results bundle"):
        build.advice(tmp_path)
    with pytest.raises(UsageError, match="does not exist"):
        build.advice(tmp_path / "nope")
    (tmp_path / "scale.json").write_text("{}")
    (tmp_path / "1-nodes").mkdir()
    (tmp_path / "1-nodes" / "bundle.json").write_text("{}")
    with pytest.raises(UsageError, match=f"is a `bench scale` directory: give one of its steps' bundles, e.g. "
                                         f"'{tmp_path / '1-nodes'}'"):
        build.advice(tmp_path)
    b = write_bundle(tmp_path / "b", 50.0, 0.0, 0.0, 0.0)
    (b / "jobs.jsonl").write_text('{"id": 1, "sta')                   # cut short
    with pytest.raises(StatgridError, match="is not valid JSON"):
        build.advice(b)
    b = write_bundle(tmp_path / "c", 50.0, 0.0, 0.0, 0.0)
    (b / "inventory.json").write_text("{not json")
    with pytest.raises(StatgridError, match="inventory.json"):
        build.advice(b)


def test_verify_lines_and_findings_text():
    r = rules.evaluate([RULE["gpfs.pagepool"]], {"library": [("DATA on sasfs (gpfs)", gpfs(pagepool_bytes=GIB))]},
                       has_run=False)
    text = rules.render(r)
    assert text.splitlines()[0] == ("verify: failed         gpfs.pagepool              DATA on sasfs (gpfs): GPFS "
                                    "pagepool at least 4 GB … expected ≥ 4 GiB, found gpfs.pagepool_bytes 1 GiB")
    assert "\n[warning] gpfs.pagepool — DATA on sasfs (gpfs): GPFS pagepool at least 4 GB\n" in text
    assert "  apply: mmchconfig pagepool=8G -i" in text and "  source: seed 000, 'GPFS' (pagepool)" in text
    assert "0 passed, 1 failed, 0 not evaluated, 0 not applicable" in text
    rec = r[0].to_json()
    assert (rec["rule"], rec["status"], rec["severity"], rec["reads"]) == \
        ("gpfs.pagepool", "failed", "warning", ["lib.fs_type", "lib.gpfs.pagepool_bytes"])
    assert rec["advice"] == ("The pagepool (GPFS's pinned cache for data and metadata, and its prefetch buffers) is "
                             "1 GiB.")


def test_values_shown_with_the_unit_their_name_carries():
    show = rules.show
    assert [show("site.required_mb_s", 1600.0), show("run.mb_s_peak_per_machine", 182.0),
            show("run.mb_s_per_core", 10.64), show("grid.dispatch_interval_s", 0.0), show("job.cpu_real", 0.1),
            show("lib.gpfs.pagepool_bytes", 3 * 2**29), show("session.bufsize_bytes", 8192),
            show("lib.readahead_kb", 128), show("run.cpu_busy_pct", 99.94), show("lib.rotational", True),
            show("lib.devices", None)] == \
        ["1,600 MB/s", "182 MB/s", "10.6 MB/s per core", "0 s", "0.1", "1.5 GiB", "8 KiB", "128 KiB", "99.9 %",
         "yes", "—"]
