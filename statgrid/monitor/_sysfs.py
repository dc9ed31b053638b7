"""Private parsers for the inventory: /proc and /sys text in, values out, nothing run.

The roots are arguments (`procfs`, `sysfs`) so tests point them at fake trees, as the monitor's
_linux.py does (its PROCFS_PATH / SYSFS_PATH are the defaults here too). Every reader returns None
for what the kernel does not show (no cpufreq in most VMs, no THP on old kernels): the inventory
keeps the key with null rather than guess. Sources: Documentation/ABI/stable/sysfs-devices-system-cpu
(topology), admin-guide/pm/cpufreq.rst (scaling_governor), admin-guide/mm/transhuge.rst (THP),
admin-guide/sysctl/vm.rst (swappiness, dirty_*), filesystems/proc.rst 3.5 (mountinfo),
ABI/stable/sysfs-block (queue/*), nfs(5) (mount options).
"""
from __future__ import annotations

import re
from pathlib import Path

from statgrid.monitor import _linux


def _text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def bracketed(text: str | None) -> str | None:
    """The value in brackets of a sysfs choice file: 'always [madvise] never' → 'madvise'
    (transparent_hugepage/enabled, queue/scheduler); a file of one bare word ('none') → that word."""
    if text is None:
        return None
    m = re.search(r"\[([^\]]+)\]", text)
    if m:
        return m.group(1)
    words = text.split()
    return words[0] if len(words) == 1 else None


# -- CPU -------------------------------------------------------------------------------------------
def parse_cpuinfo(text: str) -> dict:
    """/proc/cpuinfo → {"cpu_model", "by_cpu": {cpu: (physical id, core id)}}. The model is x86's
    'model name', POWER's 'cpu', or ARM's 'Hardware'/'Processor'; topology keys exist on x86 only."""
    model = None
    by_cpu: dict[int, tuple[int | None, int | None]] = {}
    cpu = phys = core = None
    for block in text.split("\n\n"):
        fields = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields.setdefault(key.strip(), value.strip())
        if model is None:
            model = fields.get("model name") or fields.get("cpu") or fields.get("Hardware") or fields.get("Processor")
        cpu, phys, core = _int(fields.get("processor")), _int(fields.get("physical id")), _int(fields.get("core id"))
        if cpu is not None:
            by_cpu[cpu] = (phys, core)
    return {"cpu_model": model or None, "by_cpu": by_cpu}


def read_cpu_topology(sysfs: str) -> dict[int, tuple[int, int, int]] | None:
    """cpu number → (physical_package_id, die_id, core_id) of every CPU with a topology directory
    (online CPUs; an offline one has none). None when sysfs shows no CPU at all."""
    root = Path(sysfs) / "devices" / "system" / "cpu"
    out = {}
    for d in sorted(root.glob("cpu[0-9]*")):
        topo = d / "topology"
        package, core = _int(_text(topo / "physical_package_id")), _int(_text(topo / "core_id"))
        if package is None or core is None:
            continue
        out[int(d.name[3:])] = (package, _int(_text(topo / "die_id")) or 0, core)
    return out or None


def cpu_counts(topology: dict[int, tuple[int, int, int]] | None, cpuinfo: dict) -> dict:
    """sockets, cores, threads and smt from sysfs topology (cores = distinct (package, die, core)),
    else from /proc/cpuinfo's physical id / core id; threads alone when neither has the topology."""
    if topology:
        places = topology.values()
        sockets, cores, threads = len({p for p, _, _ in places}), len(set(places)), len(topology)
    else:
        by_cpu = cpuinfo.get("by_cpu") or {}
        threads = len(by_cpu) or None
        known = [v for v in by_cpu.values() if None not in v]
        if known and len(known) == len(by_cpu):
            sockets, cores = len({p for p, _ in known}), len(set(known))
        else:
            sockets = cores = None
    return {"sockets": sockets, "cores": cores, "threads": threads,
            "smt": None if cores is None or threads is None else threads > cores}


def read_governor(sysfs: str) -> str | None:
    """cpufreq's scaling_governor of the online CPUs: one name when they agree, 'a,b' when not;
    None without cpufreq (most VMs and containers)."""
    root = Path(sysfs) / "devices" / "system" / "cpu"
    names = {g for d in root.glob("cpu[0-9]*") if (g := _text(d / "cpufreq" / "scaling_governor"))}
    if not names:
        names = {g for d in root.glob("cpufreq/policy*") if (g := _text(d / "scaling_governor"))}
    return ",".join(sorted(names)) or None


# -- memory and the VM tunables ----------------------------------------------------------------------
def memory_facts(meminfo_text: str | None) -> dict:
    """MemTotal in bytes, the static huge pages (HugePages_Total is a count, Hugepagesize their size)."""
    m = _linux.parse_meminfo(meminfo_text) if meminfo_text else {}
    return {"mem_bytes": m.get("MemTotal"), "hugepages_total": m.get("HugePages_Total"),
            "hugepage_bytes": m.get("Hugepagesize")}


def vm_facts(procfs: str) -> dict:
    vm = Path(procfs) / "sys" / "vm"
    return {k: _int(_text(vm / k)) for k in ("swappiness", "dirty_ratio", "dirty_background_ratio", "dirty_bytes",
                                            "dirty_background_bytes")}


# -- mounts -----------------------------------------------------------------------------------------
def parse_mountinfo_options(text: str) -> list[tuple[_linux.Mount, list[str]]]:
    """Each mountinfo line as the monitor's Mount (its own parser) with the line's options: the
    per-mount options (field 6: rw, noatime…) then the super block's (after the fstype and source:
    rsize=…, vers=…), each once, in that order."""
    out = []
    for line in text.splitlines():
        mounts = _linux.parse_mountinfo(line)
        if not mounts:
            continue
        left, _, right = line.partition(" - ")
        fields, super_fields = left.split(), right.split()
        opts: list[str] = []
        for o in (fields[5].split(",") if len(fields) > 5 else []) + \
                 (super_fields[2].split(",") if len(super_fields) > 2 else []):
            if o and o not in opts:
                opts.append(o)
        out.append((mounts[0], opts))
    return out


def option_value(options: list[str], name: str) -> str | None:
    for o in options:
        key, sep, value = o.partition("=")
        if key == name and sep:
            return value
    return None


def nfs_facts(fstype: str | None, options: list[str]) -> dict | None:
    """NFS's version, rsize, wsize (bytes) and nconnect from the mount options, None for other file
    systems. nconnect is shown only when set; absent it is one connection (nfs(5): the default is 1)."""
    if not fstype or not fstype.startswith("nfs"):
        return None
    vers = option_value(options, "vers") or option_value(options, "nfsvers")
    return {"version": vers or ("4" if fstype == "nfs4" else None),
            "rsize": _int(option_value(options, "rsize")), "wsize": _int(option_value(options, "wsize")),
            "nconnect": _int(option_value(options, "nconnect")) or 1}


# -- block devices ----------------------------------------------------------------------------------
def device_numbers(sysfs: str) -> dict[tuple[int, int], str]:
    """(major, minor) → device name, from <sysfs>/block/<disk>/dev and <disk>/<part>/dev (the tree
    _linux.read_block_topology walks)."""
    out = {}
    root = Path(sysfs) / "block"
    if not root.is_dir():
        return out
    for d in root.iterdir():
        for p in [d, *(c for c in d.iterdir() if c.name.startswith(d.name) and (c / "partition").is_file())]:
            dev = _text(p / "dev")
            if dev and ":" in dev:
                major, _, minor = dev.partition(":")
                out[(int(major), int(minor))] = p.name.replace("!", "/")
    return out


def device_stack(top: str, topology: dict[str, _linux.BlockDevice]) -> list[str]:
    """The devices under `top`, top first: each device, then what it is built on — a partition's
    disk, a dm/md device's slaves (the devices that list it as holder) — depth first, each once."""
    below: dict[str, list[str]] = {}
    for name, b in topology.items():
        for h in b.holders:
            below.setdefault(h, []).append(name)
    out: list[str] = []

    def walk(name: str) -> None:
        if name in out:
            return
        out.append(name)
        b = topology.get(name)
        if b is not None and b.parent:
            walk(b.parent)
        for lower in sorted(below.get(name, ())):
            walk(lower)

    walk(top)
    return out


QUEUE_KEYS = ("read_ahead_kb", "scheduler", "nr_requests", "max_sectors_kb", "rotational")


def queue_facts(sysfs: str, name: str, topology: dict[str, _linux.BlockDevice]) -> dict:
    """A device's request queue (sysfs-block queue/*); a partition has none, so its disk's is read."""
    b = topology.get(name)
    disk = b.parent if b is not None and b.parent else name
    q = Path(sysfs) / "block" / disk.replace("/", "!") / "queue"
    return {"readahead_kb": _int(_text(q / "read_ahead_kb")), "scheduler": bracketed(_text(q / "scheduler")),
            "nr_requests": _int(_text(q / "nr_requests")), "max_sectors_kb": _int(_text(q / "max_sectors_kb")),
            "rotational": None if (r := _int(_text(q / "rotational"))) is None else bool(r)}
