"""The inventory (statgrid/monitor/inventory.py): parsers over fake /proc and /sys trees and over GPFS
command output written after IBM's documented formats (expected values worked out by hand from the
fixture text); the real machine against independent tools (lscpu, findmnt, stat -f, lsblk, sysconf);
the differences between two inventories; `statgrid inventory` through the real CLI (in process)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from statgrid.errors import StatgridError
from statgrid.monitor import _gpfs, _sysfs, inventory
from typer.testing import CliRunner

from statgrid.cli.app import app


# -- a fake machine: 1 socket, 2 cores, 2 threads per core (cpu4 offline), LVM on sda2 -----------------
CPUINFO = "".join(f"processor\t: {i}\nvendor_id\t: GenuineIntel\nmodel name\t: Fake Xeon 9999 @ 2.00GHz\n"
                  f"physical id\t: 0\ncore id\t\t: {i // 2}\ncpu cores\t: 2\n\n" for i in range(4))
MEMINFO = ("MemTotal:       16000000 kB\nMemFree:         8000000 kB\nHugePages_Total:     512\n"
           "HugePages_Free:      512\nHugepagesize:       2048 kB\n")
MOUNTINFO = (
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
    "30 22 253:0 / /data rw,noatime shared:2 - xfs /dev/mapper/vg-data rw,attr2,inode64\n"
    "31 22 0:50 / /nfs/sas rw,relatime shared:3 - nfs4 filer:/export/sas "
    "rw,vers=4.2,rsize=1048576,wsize=524288,namlen=255,hard,proto=tcp,nconnect=8,timeo=600\n"
    "32 22 0:51 / /nfs/old rw - nfs filer:/old rw,vers=3,rsize=65536,wsize=65536\n"
    "33 22 0:60 / /scratch rw,nosuid - tmpfs tmpfs rw,size=8g\n"
    "34 22 0:70 / /gpfs/sasdata rw,relatime - gpfs sasdata rw\n")


def _put(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def fake_tree(tmp_path: Path) -> tuple[str, str]:
    proc, sys_ = tmp_path / "proc", tmp_path / "sys"
    _put(proc, "cpuinfo", CPUINFO)
    _put(proc, "meminfo", MEMINFO)
    _put(proc, "self/mountinfo", MOUNTINFO)
    _put(proc, "sys/kernel/osrelease", "5.14.0-fake.el9\n")
    for k, v in (("swappiness", 10), ("dirty_ratio", 40), ("dirty_background_ratio", 5), ("dirty_bytes", 0),
                 ("dirty_background_bytes", 0)):
        _put(proc, f"sys/vm/{k}", f"{v}\n")
    for i in range(4):                       # cpu i: package 0, core i // 2 (two threads each)
        _put(sys_, f"devices/system/cpu/cpu{i}/topology/physical_package_id", "0\n")
        _put(sys_, f"devices/system/cpu/cpu{i}/topology/core_id", f"{i // 2}\n")
        _put(sys_, f"devices/system/cpu/cpu{i}/cpufreq/scaling_governor", "performance\n")
    (sys_ / "devices/system/cpu/cpu4").mkdir(parents=True)      # offline: no topology directory
    _put(sys_, "kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n")
    _put(sys_, "block/sda/dev", "8:0\n")
    _put(sys_, "block/sda/sda1/dev", "8:1\n")
    _put(sys_, "block/sda/sda1/partition", "1\n")
    _put(sys_, "block/sda/sda2/dev", "8:2\n")
    _put(sys_, "block/sda/sda2/partition", "2\n")
    (sys_ / "block/sda/sda2/holders/dm-0").mkdir(parents=True)
    for k, v in (("read_ahead_kb", 128), ("scheduler", "mq-deadline kyber [bfq] none"), ("nr_requests", 64),
                 ("max_sectors_kb", 1280), ("rotational", 1)):
        _put(sys_, f"block/sda/queue/{k}", f"{v}\n")
    _put(sys_, "block/dm-0/dev", "253:0\n")
    _put(sys_, "block/dm-0/dm/name", "vg-data\n")
    _put(sys_, "block/dm-0/dm/uuid", "LVM-abc\n")
    (sys_ / "block/dm-0/slaves/sda2").mkdir(parents=True)
    for k, v in (("read_ahead_kb", 4096), ("scheduler", "none"), ("nr_requests", 128), ("max_sectors_kb", 512),
                 ("rotational", 1)):
        _put(sys_, f"block/dm-0/queue/{k}", f"{v}\n")
    # a multipath device over two paths (sdb, sdc), mounted at /mpath
    _put(proc, "self/mountinfo", MOUNTINFO + "35 22 253:1 / /mpath rw - xfs /dev/mapper/mpatha rw\n")
    _put(sys_, "block/dm-1/dev", "253:1\n")
    _put(sys_, "block/dm-1/dm/uuid", "mpath-3600a\n")
    for disk, sched in (("sdb", "[mq-deadline] none"), ("sdc", "mq-deadline [none]")):
        _put(sys_, f"block/{disk}/dev", "8:16\n" if disk == "sdb" else "8:32\n")
        _put(sys_, f"block/{disk}/queue/scheduler", sched + "\n")
        (sys_ / f"block/dm-1/slaves/{disk}").mkdir(parents=True)
    return str(proc), str(sys_)


def test_node_facts_over_a_fake_tree(tmp_path):
    proc, sys_ = fake_tree(tmp_path)
    node = inventory.node_facts(proc, sys_)
    assert node == {"cpu_model": "Fake Xeon 9999 @ 2.00GHz", "sockets": 1, "cores": 2, "threads": 4, "smt": True,
                    "governor": "performance", "mem_bytes": 16000000 * 1024, "hugepages_total": 512,
                    "hugepage_bytes": 2048 * 1024, "thp": "never", "swappiness": 10, "dirty_ratio": 40,
                    "dirty_background_ratio": 5, "dirty_bytes": 0, "dirty_background_bytes": 0,
                    "kernel": "5.14.0-fake.el9"}


def test_node_facts_without_cpufreq_thp_or_sysfs_topology(tmp_path):
    """A VM without cpufreq or THP files: null, not a guess; topology then from /proc/cpuinfo."""
    proc, sys_ = fake_tree(tmp_path)
    shutil.rmtree(Path(sys_) / "devices")
    shutil.rmtree(Path(sys_) / "kernel")
    two_sockets = "".join(f"processor\t: {i}\nmodel name\t: X\nphysical id\t: {i % 2}\ncore id\t\t: {i // 2}\n\n"
                          for i in range(4))          # 4 CPUs on 2 sockets × 2 cores, one thread each
    _put(Path(proc), "cpuinfo", two_sockets)
    node = inventory.node_facts(proc, sys_)
    assert (node["governor"], node["thp"]) == (None, None)
    assert (node["sockets"], node["cores"], node["threads"], node["smt"]) == (2, 4, 4, False)


def test_cpu_model_of_power_and_unknown_topology():
    power = "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\nclock\t\t: 2300.000000MHz\n\n" \
            "processor\t: 1\ncpu\t\t: POWER9 (raw), altivec supported\n\ntimebase\t: 512000000\n"
    info = _sysfs.parse_cpuinfo(power)
    assert info["cpu_model"] == "POWER9 (raw), altivec supported"
    # POWER's cpuinfo has no physical id / core id: threads known, the rest not
    assert _sysfs.cpu_counts(None, info) == {"sockets": None, "cores": None, "threads": 2, "smt": None}


def test_libraries_over_a_fake_tree(tmp_path):
    proc, sys_ = fake_tree(tmp_path)
    libs = inventory.library_facts({"DATA": "/data/sas", "HOME": "/home/u", "NFS": "/nfs/sas/lib",
                                    "OLD": "/nfs/old", "WORK": "/scratch/work"}, proc, sys_, host="n1")
    data = libs["DATA"]
    assert (data["fs_type"], data["mount_point"], data["source"]) == ("xfs", "/data", "/dev/mapper/vg-data")
    assert data["mount_options"] == ["rw", "noatime", "attr2", "inode64"]
    assert data["devices"] == ["dm-0", "sda2", "sda"]             # LVM volume → its partition → the disk
    # readahead of the top device (dm-0: 4096), the queue of the bottom disk (sda)
    assert (data["readahead_kb"], data["scheduler"], data["nr_requests"], data["max_sectors_kb"],
            data["rotational"], data["queue_device"]) == (4096, "bfq", 64, 1280, True, "sda")
    assert data["per_device"]["sda2"]["readahead_kb"] == 128      # a partition has no queue: its disk's
    assert (data["nfs"], data["gpfs"], data["host"], data["block_bytes"]) == (None, None, "n1", None)
    home = libs["HOME"]                                           # on / (sda1): longest prefix
    assert (home["mount_point"], home["devices"], home["readahead_kb"], home["scheduler"]) == \
        ("/", ["sda1", "sda"], 128, "bfq")
    assert libs["NFS"]["nfs"] == {"version": "4.2", "rsize": 1048576, "wsize": 524288, "nconnect": 8}
    assert libs["NFS"]["devices"] == [] and libs["NFS"]["readahead_kb"] is None
    assert libs["OLD"]["nfs"] == {"version": "3", "rsize": 65536, "wsize": 65536, "nconnect": 1}
    mp = inventory.library_facts({"MP": "/mpath/x"}, proc, sys_)["MP"]
    assert (mp["devices"], mp["queue_device"], mp["scheduler"]) == (["dm-1", "sdb", "sdc"], "sdb", "mq-deadline")
    assert mp["per_device"]["sdc"]["scheduler"] == "none"            # each path's own, in per_device
    work = libs["WORK"]
    assert (work["fs_type"], work["mount_options"], work["devices"], work["nfs"]) == \
        ("tmpfs", ["rw", "nosuid", "size=8g"], [], None)


# -- GPFS: mmlsconfig / mmlsfs text as IBM documents it --------------------------------------------------
MMLSCONFIG = """Configuration data for cluster sasgrid.example.com:
-------------------------------------------------
clusterName sasgrid.example.com
clusterId 680752107138921233
autoload yes
minReleaseLevel 5.1.9.0
pagepool 4G
maxMBpS 5000
prefetchPct 40
seqDiscardThreshold 1G
worker1Threads 48
maxFilesToCache 20000
[gridn1,gridn2]
pagepool 8G
maxMBpS 10000
[common]
scatterBuffers no

File systems in cluster sasgrid.example.com:
-------------------------------------------
/dev/sasdata
"""
MMLSCONFIG_ATTRS = "pagepool 4G\npagepool 16G [gridn3.example.com]\nmaxMBpS 6000\nworker1Threads 512\n"
MMLSFS_B = """flag                value                    description
------------------- ------------------------ -----------------------------------
 -B                 262144                   Block size (system pool)
                    1048576                  Block size (other pools)
"""


def test_mmlsconfig_node_sections_and_attribute_form():
    gib = 1024 ** 3
    assert _gpfs.parse_mmlsconfig(MMLSCONFIG, "gridn3") == {
        "pagepool_bytes": 4 * gib, "maxMBpS": 5000, "prefetchPct": 40, "seqDiscardThreshold_bytes": gib,
        "worker1Threads": 48, "maxFilesToCache": 20000, "scatterBuffers": "no"}
    on_n1 = _gpfs.parse_mmlsconfig(MMLSCONFIG, "gridn1.example.com")     # short name matches [gridn1,…]
    assert (on_n1["pagepool_bytes"], on_n1["maxMBpS"]) == (8 * gib, 10000)
    attrs = _gpfs.parse_mmlsconfig(MMLSCONFIG_ATTRS, "gridn3.example.com")
    assert (attrs["pagepool_bytes"], attrs["maxMBpS"], attrs["worker1Threads"]) == (16 * gib, 6000, 512)
    assert _gpfs.parse_mmlsconfig(MMLSCONFIG_ATTRS, "gridn1")["pagepool_bytes"] == 4 * gib


def test_mmlsfs_block_size():
    assert _gpfs.parse_mmlsfs_blocksize(MMLSFS_B) == 1048576            # the data pools' size
    one = "flag                value                    description\n -B                 4194304     Block size\n"
    assert _gpfs.parse_mmlsfs_blocksize(one) == 4 * 1024 * 1024
    assert _gpfs.parse_mmlsfs_blocksize("mmlsfs: file system not found\n") is None
    assert [_gpfs.parse_size(s) for s in ("3500m", "256K", "1048576", "2g", "lots")] == \
        [3500 * 1024 ** 2, 256 * 1024, 1048576, 2 * 1024 ** 3, None]


def test_gpfs_library_runs_the_commands_it_finds(tmp_path, monkeypatch):
    """Fake mmlsconfig / mmlsfs on PATH print the documented text; mmlsfs answers only for the mount's
    device given as IBM's synopsis says (`mmlsfs sasdata -B`)."""
    proc, sys_ = fake_tree(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "cfg.txt").write_text(MMLSCONFIG)
    (tmp_path / "fs.txt").write_text(MMLSFS_B)
    for name, body in (("mmlsconfig", f"cat {tmp_path / 'cfg.txt'}"),
                       ("mmlsfs", f'[ "$1" = sasdata ] && [ "$2" = -B ] && cat {tmp_path / "fs.txt"} || exit 1')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    gpfs = inventory.library_facts({"DATA": "/gpfs/sasdata/lib"}, proc, sys_, host="gridn2", commands=True)["DATA"]
    assert gpfs["fs_type"] == "gpfs"
    assert gpfs["gpfs"]["blocksize_bytes"] == 1048576
    assert (gpfs["gpfs"]["pagepool_bytes"], gpfs["gpfs"]["maxMBpS"], gpfs["gpfs"]["prefetchPct"]) == \
        (8 * 1024 ** 3, 10000, 40)
    assert gpfs["gpfs"]["prefetchThreads"] is None                    # not in the output: null, not a default
    monkeypatch.setenv("PATH", "/nonexistent")
    none = inventory.library_facts({"DATA": "/gpfs/sasdata/lib"}, proc, sys_, commands=True)["DATA"]
    assert none["gpfs"] is None and none["fs_type"] == "gpfs"


# -- this machine, held against independent tools ------------------------------------------------------
def _tool(argv: list[str]) -> str:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed")
    return subprocess.run(argv, capture_output=True, text=True, check=True, env={**os.environ, "LC_ALL": "C"}).stdout


def test_this_machine_against_lscpu_sysconf_and_uname():
    node = inventory.node_facts()
    lscpu = dict(line.split(":", 1) for line in _tool(["lscpu"]).splitlines() if ":" in line)
    sockets, per_socket, per_core = (int(lscpu[k].strip()) for k in ("Socket(s)", "Core(s) per socket",
                                                                      "Thread(s) per core"))
    assert node["threads"] == os.sysconf("SC_NPROCESSORS_ONLN")
    assert (node["sockets"], node["cores"]) == (sockets, sockets * per_socket)
    assert node["smt"] is (per_core > 1)
    assert node["mem_bytes"] == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert node["kernel"] == os.uname().release


def test_this_machines_library_against_findmnt_stat_and_lsblk(tmp_path):
    lib = inventory.library_facts({"WORK": str(tmp_path)})["WORK"]
    fstype, target, source, options = _tool(["findmnt", "-n", "-o", "FSTYPE,TARGET,SOURCE,OPTIONS", "-T",
                                             str(tmp_path)]).split()
    assert (lib["fs_type"], lib["mount_point"]) == (fstype, target)
    assert set(options.split(",")) <= set(lib["mount_options"])
    assert lib["block_bytes"] == int(_tool(["stat", "-f", "-c", "%s", str(tmp_path)]))
    if not lib["devices"]:
        return                                              # not on a block device here (tmpfs, overlay…)
    rows = json.loads(_tool(["lsblk", "-J", "-o", "NAME,RA,SCHED,RQ-SIZE,ROTA"]))
    flat, todo = {}, list(rows["blockdevices"])
    while todo:
        d = todo.pop()
        flat[d["name"]] = d
        todo += d.get("children") or []
    top, bottom = flat[lib["devices"][0]], flat[lib["queue_device"]]
    assert lib["readahead_kb"] == int(top["ra"])
    assert (lib["scheduler"], lib["nr_requests"], lib["rotational"]) == \
        (bottom["sched"], int(bottom["rq-size"]), bottom["rota"] in (True, "1", 1))


# -- the whole record, the differences, the CLI ---------------------------------------------------------
def test_collect_shape_and_the_differences_of_two(tmp_path):
    proc, sys_ = fake_tree(tmp_path)
    a = inventory.collect(None, {"DATA": "/data/x", "WORK": "/scratch"}, procfs=proc, sysfs=sys_, host="n1")
    assert set(a) == {"schema", "taken_ts", "nodes", "libraries", "session", "grid"} and a["schema"] == 1
    assert set(a["nodes"]["n1"]) == set(inventory.NODE_KEYS)
    assert set(a["libraries"]["DATA"]) == set(inventory.LIBRARY_KEYS)
    _put(Path(proc), "sys/vm/swappiness", "60\n")
    _put(Path(sys_), "block/dm-0/queue/read_ahead_kb", "8192\n")
    b = inventory.collect(None, {"DATA": "/data/x", "WORK": "/scratch"}, procfs=proc, sysfs=sys_, host="n1")
    assert inventory.differences(a, a) == []
    assert inventory.differences(a, b) == [
        {"section": "node", "name": "n1", "key": "swappiness", "a": 10, "b": 60},
        {"section": "library", "name": "DATA", "key": "readahead_kb", "a": 4096, "b": 8192}]
    c = inventory.collect(None, {"DATA": "/data/x", "WORK": "/scratch"}, procfs=proc, sysfs=sys_, host="n2")
    rows = inventory.differences(b, c)                       # another machine: its name, and library hosts
    assert rows[0] == {"section": "node", "name": "", "key": "machine", "a": "n1", "b": "n2"}
    assert {(r["name"], r["key"]) for r in rows[1:]} == {("DATA", "host"), ("WORK", "host")}


def run_cli(argv: list[str]):
    return CliRunner().invoke(app, argv)


def test_statgrid_inventory_cli(tmp_path):
    grid_toml = tmp_path / "grid.toml"
    grid_toml.write_text(f'[grid]\nhome = "{tmp_path}"\n[libname.sales]\npath = "{tmp_path / "sales"}"\n'
                         '[session]\nmemsize = "1G"\n[hosts.a]\nslots = 3\n[hosts.b]\nslots = 1\n')
    r = run_cli(["-c", str(grid_toml), "inventory", "--json"])
    assert r.exit_code == 0, r.output
    inv = json.loads(r.stdout)
    assert list(inv["libraries"]) == ["DATA", "SALES", "WORK", "UTIL"]
    assert inv["libraries"]["SALES"]["path"] == str(tmp_path / "sales")
    assert inv["session"]["memsize_bytes"] == 1024 ** 3
    assert {h: v["slots"] for h, v in inv["grid"]["hosts"].items()} == {"a": 3, "b": 1}
    assert "a, b all run on one machine" in inv["grid"]["note"]
    text = run_cli(["-c", str(grid_toml), "inventory"])
    assert text.exit_code == 0 and "memsize_bytes      1073741824 (1 GiB)" in text.stdout
    (tmp_path / "b").mkdir()
    inventory.write(tmp_path / "b", inv)
    again = run_cli(["-c", str(grid_toml), "inventory", "--bundle", str(tmp_path / "b"), "--json"])
    assert json.loads(again.stdout) == inv
    bad = run_cli(["-c", str(grid_toml), "inventory", "--bundle", str(tmp_path / "sales")])
    assert bad.exit_code == 2 and "holds no inventory.json" in bad.output
    both = run_cli(["-c", str(grid_toml), "inventory", "--bundle", str(tmp_path / "b"), "--hosts", "all"])
    assert both.exit_code == 2 and "takes no --hosts or --library" in both.output
    lib = run_cli(["-c", str(grid_toml), "inventory", "--library", "sales"])
    assert lib.exit_code == 2 and "--library 'sales' is not NAME=PATH" in lib.output
    extra = json.loads(run_cli(["-c", str(grid_toml), "inventory", "--json", "--library", f"x={tmp_path}"]).stdout)
    assert extra["libraries"]["X"]["path"] == str(tmp_path) and "DATA" in extra["libraries"]
    (tmp_path / "b" / "inventory.json").write_text('{"schema": 99}')
    newer = run_cli(["-c", str(grid_toml), "inventory", "--bundle", str(tmp_path / "b")])
    assert newer.exit_code == 1 and "schema 99" in newer.output


def test_report_compare_lists_what_differed(tmp_path):
    """report --compare of two copies of a real bundle (tests/data/bundle_ma2): with inventories that
    differ in two values, a "What differed" table of exactly those; identical ones, a note and no table;
    a side without inventory.json (bundles made before it existed), a note saying it is not known."""
    from statgrid.report import build

    bundle = Path(__file__).parent.parent / "data" / "bundle_ma2"
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(bundle, a)
    shutil.copytree(bundle, b)
    proc, sys_ = fake_tree(tmp_path)
    libs = {"DATA": "/data/x", "WORK": "/scratch"}
    inv = inventory.collect(None, libs, procfs=proc, sysfs=sys_, host="n1")
    inv["session"] = {"memsize_bytes": 2 * 1024 ** 3, "threads": 0}
    inv["grid"] = {"hosts": {"node1": {"slots": 2, "machine": "n1"}}, "master_host": "n1", "dispatch_interval_s": 0.0}

    def compare():
        rep = build.compare_report(a, b)
        return next((t for t in rep.tables if t.id == "inventory_diff"), None), rep.tables[0].notes[-1]

    table, note = compare()
    assert table is None and note.startswith("A and B have no inventory.json")
    inventory.write(a, inv)
    inventory.write(b, inv)
    table, note = compare()
    assert table is None and note.startswith("Inventories: identical")
    other = json.loads(json.dumps(inv))
    other["session"]["memsize_bytes"] = 4 * 1024 ** 3
    other["grid"]["hosts"]["node2"] = {"slots": 2, "machine": "n1"}
    inventory.write(b, other)
    table, note = compare()
    assert note == 'Inventories: 2 value(s) differ — see "What differed".'
    assert table.rows == [
        {"section": "session", "name": "", "key": "memsize_bytes", "a": 2 * 1024 ** 3, "b": 4 * 1024 ** 3},
        {"section": "grid", "name": "host node2", "key": "present", "a": False, "b": True}]


@pytest.mark.grid   # starts a real grid: not the one-process unit layer
def test_inventory_hosts_runs_a_job_on_each_host(tmp_path):
    """`statgrid inventory --hosts all` on a real grid of two hosts (both on this machine): a job on
    each reports its machine, so both hosts name this machine and the nodes hold it once; the jobs
    are ordinary grid jobs (DONE, named inventory-<host>); an unknown host is a usage error."""
    import socket

    from tests.support.gridtest import Grid, running
    from tests.support.gridtoml import toml_text

    with running(Grid(tmp_path, toml_text({"node1": 1, "node2": 1}))) as g:
        r = g.cli("inventory", "--hosts", "all", "--json")
        assert r.returncode == 0, r.stderr
        inv = json.loads(r.stdout)
        me = socket.gethostname()
        assert list(inv["nodes"]) == [me]
        assert {h: v["machine"] for h, v in inv["grid"]["hosts"].items()} == {"node1": me, "node2": me}
        assert "by_host" not in inv["libraries"]["DATA"]           # the same machine: no second view
        jobs = {j["name"]: j for j in g.client.jobs(states=["DONE", "EXIT", "KILLED"])}
        assert {n: (j["state"], j["host"]) for n, j in jobs.items() if n.startswith("inventory-")} == \
            {"inventory-node1": ("DONE", "node1"), "inventory-node2": ("DONE", "node2")}
        bad = g.cli("inventory", "--hosts", "node1,nodeX")
        assert bad.returncode == 2 and "'nodeX' is not a host of this grid" in bad.stderr


def test_scale_compare_lists_what_differed_in_the_first_steps(tmp_path):
    """Two bench scale directories: the first step's bundle of each (1-nodes/) holds the inventory."""
    from statgrid.report import build

    proc, sys_ = fake_tree(tmp_path)
    inv = inventory.collect(None, {"DATA": "/data/x"}, procfs=proc, sysfs=sys_, host="n1")
    for name, governor in (("a", "performance"), ("b", "powersave")):
        d = tmp_path / name
        (d / "1-nodes").mkdir(parents=True)
        (d / "1-nodes" / "bundle.json").write_text("{}")
        step = {"nodes": 1, "sessions": 10, "jobs": 36, "done": 36, "exit": 0, "clock_s": 60.0, "jobs_per_h": 2160.0,
                "summed_real_s": 180.0, "io_mb_per_s": 12.5, "efficiency": 1.0, "bundle": "1-nodes"}
        (d / "scale.json").write_text(json.dumps({"kind": "statgrid-bench-scale", "max_nodes": 1,
                                                  "sessions_per_node": 10, "slots": 2, "note": "",
                                                  "host": {"hostname": "h", "cpus": 2}, "steps": [step]}))
        inventory.write(d / "1-nodes", {**inv, "nodes": {"n1": {**inv["nodes"]["n1"], "governor": governor}}})
    rep = build.compare_report(tmp_path / "a", tmp_path / "b")
    table = next(t for t in rep.tables if t.id == "inventory_diff")
    assert table.rows == [{"section": "node", "name": "n1", "key": "governor", "a": "performance", "b": "powersave"}]
    assert rep.tables[0].notes[-1].startswith("Inventories (first steps): 1 value(s) differ")


def test_report_compare_with_a_damaged_inventory_still_compares(tmp_path):
    from statgrid.report import build

    bundle = Path(__file__).parent.parent / "data" / "bundle_ma2"
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(bundle, a)
    shutil.copytree(bundle, b)
    (a / "inventory.json").write_text("{not json")
    rep = build.compare_report(a, b)
    assert rep.tables[0].rows and not any(t.id == "inventory_diff" for t in rep.tables)
    assert rep.tables[0].notes[-1].startswith(f"Inventories not compared: {str(a / 'inventory.json')!r} is not valid JSON")


def test_a_damaged_shape_and_a_missing_library_path_are_said(tmp_path):
    """inventory.json whose parts are not tables is a clear error (not a traceback in advise); a library path
    that does not exist is inventoried as its nearest existing directory, with a note saying so (review)."""
    (tmp_path / "inventory.json").write_text(json.dumps({"schema": inventory.SCHEMA, "nodes": "x", "libraries": {},
                                                          "session": {}, "grid": {}}))
    with pytest.raises(StatgridError, match="its 'nodes' is not a table of records"):
        inventory.load(tmp_path)
    missing = tmp_path / "not" / "there"
    rec = inventory.library_facts({"X": str(missing)})["X"]
    assert rec["path"] == str(missing) and str(tmp_path) in rec["note"] and "does not exist" in rec["note"]
    assert inventory.library_facts({"Y": str(tmp_path)})["Y"]["note"] is None
