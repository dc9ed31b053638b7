"""The inventory: what a grid and its storage are — per node (CPU, memory, huge pages, VM tunables,
kernel), per library (file system, mount, device stack, request queue, NFS and GPFS tunables),
the session options jobs run with, and the grid's shape. Saved in every `bench mixed` bundle as
inventory.json, printed by `statgrid inventory`, read by `statgrid advise` and `report --compare`.

The record (schema 1; a key whose value cannot be read is present with null; sizes in bytes
named *_bytes, or *_kb as the kernel gives them):

    {"schema": 1, "taken_ts": epoch s,
     "nodes": {machine: {"cpu_model", "sockets", "cores", "threads", "smt", "governor", "mem_bytes",
               "hugepages_total", "hugepage_bytes", "thp", "swappiness", "dirty_ratio",
               "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes", "kernel"}},
     "libraries": {LIBNAME: {"path", "host", "fs_type", "mount_point", "source", "mount_options",
               "block_bytes", "devices" (the stack, top first), "readahead_kb", "scheduler",
               "nr_requests", "max_sectors_kb", "rotational", "queue_device", "per_device",
               "gpfs": {...} | null, "nfs": {...} | null}},
     "session": {the session options by their record's field names, "threads_effective"},
     "grid": {"hosts": {host: {"slots", "cpus", "joins", "machine", "open", "memory_bytes",
              "max_load"}}, "master_host", "dispatch_interval_s", "queues": {...}, "embedded", "note"}}

Nodes are keyed by machine (host name), not by grid host: on the embedded grid of `bench mixed`
every grid host runs on this one machine, and the inventory says so (grid.hosts[h].machine and
grid.note) rather than repeat the machine once per grid host. A host that joins from its own machine
(`joins = true`) has machine null until its machine reports (`statgrid inventory --hosts`, merge_machines).

Library names are upper case as SAS writes them (DATA, WORK, UTIL and each [libname.x] as X);
UTIL is listed when its root differs from WORK's. Where a library's stack has several devices, the
readahead is the top device's (the one the file system reads ahead through) and scheduler,
nr_requests, max_sectors_kb and rotational the first bottom disk's (where requests queue and are
merged); per_device holds every device's values.
"""
from __future__ import annotations

import dataclasses
import json
import os
import platform
import socket
import time
from pathlib import Path
from typing import Mapping

from statgrid.monitor import _gpfs, _sysfs
from statgrid.errors import StatgridError
from statgrid.monitor import _linux, sampler

SCHEMA = 1
FILE = "inventory.json"
NODE_KEYS = ("cpu_model", "sockets", "cores", "threads", "smt", "governor", "mem_bytes", "hugepages_total",
             "hugepage_bytes", "thp", "swappiness", "dirty_ratio", "dirty_background_ratio", "dirty_bytes",
             "dirty_background_bytes", "kernel")
LIBRARY_KEYS = ("path", "host", "fs_type", "mount_point", "source", "mount_options", "block_bytes", "devices",
                "readahead_kb", "scheduler", "nr_requests", "max_sectors_kb", "rotational", "queue_device",
                "per_device", "gpfs", "nfs", "note")
# statgrid dispatches on events (a freed slot is refilled at once): no polling interval like LSF's
# MBD_SLEEP_TIME, whose shortening gave seed 000 its 7–15 % (DESIGN.md, "The seed system").
DISPATCH_INTERVAL_S = 0.0


def _roots(procfs: str | None, sysfs: str | None) -> tuple[str, str]:
    return procfs or _linux.PROCFS_PATH, sysfs or _linux.SYSFS_PATH


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def node_facts(procfs: str | None = None, sysfs: str | None = None) -> dict:
    """This machine's CPU, memory, huge pages, VM tunables and kernel (NODE_KEYS, null where unreadable)."""
    procfs, sysfs = _roots(procfs, sysfs)
    cpuinfo = _sysfs.parse_cpuinfo(_read(Path(procfs) / "cpuinfo") or "")
    thp = _sysfs.bracketed(_sysfs._text(Path(sysfs) / "kernel" / "mm" / "transparent_hugepage" / "enabled"))
    kernel = _sysfs._text(Path(procfs) / "sys" / "kernel" / "osrelease")
    out = {"cpu_model": cpuinfo["cpu_model"],
           **_sysfs.cpu_counts(_sysfs.read_cpu_topology(sysfs), cpuinfo),
           "governor": _sysfs.read_governor(sysfs),
           **_sysfs.memory_facts(_read(Path(procfs) / "meminfo")), "thp": thp, **_sysfs.vm_facts(procfs),
           "kernel": kernel or (platform.release() if procfs == _linux.PROCFS_PATH else None)}
    return {k: out.get(k) for k in NODE_KEYS}


def _existing(path: str) -> str:
    """The path, or its nearest existing parent (a library not created yet lives on that mount)."""
    p = Path(os.path.realpath(path))
    while not p.exists() and p != p.parent:
        p = p.parent
    return str(p)


def library_facts(paths: Mapping[str, str | os.PathLike], procfs: str | None = None, sysfs: str | None = None,
                  host: str | None = None, commands: bool | None = None) -> dict[str, dict]:
    """name → the library's mount, device stack, request queue and file-system tunables (LIBRARY_KEYS).
    block_bytes is os.statvfs's f_bsize of the path on this machine (None with a fake procfs).
    commands: run mmlsconfig/mmlsfs for GPFS libraries (default: only over the real /proc)."""
    procfs, sysfs = _roots(procfs, sysfs)
    host = host or socket.gethostname()
    mounts = _sysfs.parse_mountinfo_options(_read(Path(procfs) / "self" / "mountinfo") or "")
    topology = _linux.read_block_topology(sysfs) or {}
    numbers = _sysfs.device_numbers(sysfs)
    real_tree = procfs == _linux.PROCFS_PATH
    gpfs_config: dict | None = None
    gpfs_asked = False
    gpfs_by_fs: dict[str, dict | None] = {}
    out = {}
    for name, path in paths.items():
        where = _existing(str(path)) if real_tree else os.path.normpath(str(path))
        m = _linux.mount_of(where, [mt for mt, _ in mounts])
        opts = next((o for mt, o in reversed(mounts) if mt is m), []) if m else []
        rec = dict.fromkeys(LIBRARY_KEYS)
        rec.update(path=str(path), host=host, mount_options=opts, devices=[], per_device={})
        if real_tree and where != os.path.realpath(str(path)):     # a typo, or a mount that is not mounted
            rec["note"] = (f"{path} does not exist: these are the facts of {where}, its nearest existing directory "
                           "(create the library, or mount its file system, and take the inventory again)")
        if m is not None:
            rec.update(fs_type=m.fstype, mount_point=m.mount_point, source=m.source)
            top = sampler.mount_device(m, numbers)   # the block device the mount is on
            if top is not None:
                stack = _sysfs.device_stack(top, topology) if top in topology else [top]
                per = {d: _sysfs.queue_facts(sysfs, d, topology) for d in stack}
                bottom = next((d for d in stack if topology.get(d) and topology[d].layer == "disk"), stack[-1])
                rec.update(devices=stack, per_device=per, readahead_kb=per[top]["readahead_kb"], queue_device=bottom,
                           **{k: per[bottom][k] for k in ("scheduler", "nr_requests", "max_sectors_kb", "rotational")})
            rec["nfs"] = _sysfs.nfs_facts(m.fstype, opts)
            if m.fstype == "gpfs" and (real_tree if commands is None else commands):
                if not gpfs_asked:
                    gpfs_config, gpfs_asked = _gpfs.cluster_config(host), True
                if m.source not in gpfs_by_fs:          # libraries on one file system: mmlsfs once
                    gpfs_by_fs[m.source] = _gpfs.gpfs_facts(m.source, gpfs_config)
                rec["gpfs"] = gpfs_by_fs[m.source]
        if real_tree:
            try:
                rec["block_bytes"] = os.statvfs(where).f_bsize
            except OSError:
                pass
        out[name] = rec
    return out


def library_paths(cfg) -> dict[str, str]:
    """The libraries a grid.toml defines, by their SAS names: DATA, each libname, WORK, and UTIL when
    its root differs from WORK's."""
    libs = {"DATA": str(cfg.libraries.data)}
    libs.update({name.upper(): str(lib.path) for name, lib in cfg.libnames.items()})
    libs["WORK"] = str(cfg.libraries.work)
    if os.path.realpath(cfg.libraries.util) != os.path.realpath(cfg.libraries.work):
        libs["UTIL"] = str(cfg.libraries.util)
    return libs


def session_facts(cfg) -> dict:
    """The session options by the names of their record's fields (config.SessionOptions: memsize_bytes,
    threads, bufsize_…, whatever units the names carry), plus the threads a session really gets."""
    if cfg is None:
        return {}
    s = cfg.session
    out = {f.name: getattr(s, f.name) for f in dataclasses.fields(s)}
    try:
        out["threads_effective"] = s.effective_threads
    except (AttributeError, OSError):
        pass
    return out


def grid_facts(cfg, machine: str, embedded: bool | None = None) -> dict:
    """The grid's shape as grid.toml gives it: hosts (slots: grid.toml's, or the CPUs a worker started
    here would see, as the master counts a host without slots), the queues' host preferences, the
    master's machine and the dispatch interval."""
    if cfg is None:
        return {}
    usable = os.sched_getaffinity(0)
    hosts = {}
    for h in cfg.hosts.values():
        slots = h.slots if h.slots is not None else (None if h.joins else len(set(h.cpus) & usable) or len(usable))
        hosts[h.name] = {"slots": slots, "cpus": list(h.cpus), "joins": h.joins,
                         "machine": None if h.joins else machine, "open": h.open, "memory_bytes": h.memory_bytes,
                         "max_load": h.max_load}
    return {"hosts": hosts, "master_host": machine, "dispatch_interval_s": DISPATCH_INTERVAL_S,
            "queues": {q.name: {"priority": q.priority,
                                "hosts": " ".join(f"{p.host}+{p.weight}" if p.weight else p.host for p in q.hosts)}
                       for q in cfg.queues.values()},
            "embedded": embedded, "note": shared_machines_note(hosts)}


def shared_machines_note(hosts: Mapping[str, dict]) -> str | None:
    """Says which grid hosts run on one machine (the embedded grid's all do), or None."""
    by_machine: dict[str, list[str]] = {}
    for name, h in hosts.items():
        if h.get("machine"):
            by_machine.setdefault(h["machine"], []).append(name)
    shared = [f"grid hosts {', '.join(names)} all run on one machine ({m}): they share its CPUs, memory and storage, "
              "and its node entry is theirs" for m, names in by_machine.items() if len(names) > 1]
    return "; ".join(shared) or None


def collect(cfg=None, libraries: Mapping[str, str | os.PathLike] | None = None, *, embedded: bool | None = None,
            procfs: str | None = None, sysfs: str | None = None, host: str | None = None,
            commands: bool | None = None) -> dict:
    """The inventory of this machine (schema above). cfg: a Config (libraries, session options and grid
    come from it) or None (this machine and `libraries` only). libraries: name → path; default: the
    config's (library_paths). procfs/sysfs/host/commands: for tests over fake trees (library_facts)."""
    host = host or socket.gethostname()
    if libraries is None:
        libraries = library_paths(cfg) if cfg is not None else {}
    return {"schema": SCHEMA, "taken_ts": time.time(), "nodes": {host: node_facts(procfs, sysfs)},
            "libraries": library_facts(libraries, procfs, sysfs, host, commands), "session": session_facts(cfg),
            "grid": grid_facts(cfg, host, embedded)}


def merge_machines(inv: dict, machines: list[tuple[str, dict]]) -> dict:
    """Merge what each grid host's machine reported (grid host, that machine's inventory: its "nodes"
    holds the one machine): the machine's node entry is added, the grid host's machine set, and the
    libraries as that machine sees them kept under libraries[name]["by_host"][machine] when it is not
    this machine (a library may be another mount, or none, there). Returns inv."""
    here = inv["grid"].get("master_host") if inv.get("grid") else None
    for host, other in machines:
        for machine, node in (other.get("nodes") or {}).items():
            inv["nodes"].setdefault(machine, node)
            if inv.get("grid"):
                inv["grid"]["hosts"].setdefault(host, {})["machine"] = machine
            if machine == here:
                continue
            for name, rec in (other.get("libraries") or {}).items():
                if name in inv["libraries"]:
                    inv["libraries"][name].setdefault("by_host", {})[machine] = rec
    if inv.get("grid"):
        inv["grid"]["note"] = shared_machines_note(inv["grid"]["hosts"])
    return inv


# -- what differs between two inventories (report --compare) -------------------------------------------
NOT_COMPARED = {"per_device", "by_host", "note", "queue_device"}     # detail, or text that restates other keys


def _value(v):
    if isinstance(v, list):
        return ",".join(map(str, v)) or None
    return v


def flatten(inv: dict) -> list[tuple[str, str, str, object]]:
    """(section, name, key, value) of every compared value: node values per machine, library values
    per library (gpfs.* and nfs.* one key each), session options, grid hosts, queues and settings."""
    out: list[tuple[str, str, str, object]] = []
    for machine, node in sorted((inv.get("nodes") or {}).items()):
        out += [("node", machine, k, _value(v)) for k, v in node.items()]
    for lib, rec in (inv.get("libraries") or {}).items():
        for k, v in rec.items():
            if k in NOT_COMPARED:
                continue
            if isinstance(v, dict):
                out += [("library", lib, f"{k}.{kk}", _value(vv)) for kk, vv in v.items()]
            else:
                out.append(("library", lib, k, _value(v)))
    out += [("session", "", k, _value(v)) for k, v in (inv.get("session") or {}).items()]
    grid = inv.get("grid") or {}
    for host, rec in (grid.get("hosts") or {}).items():
        out += [("grid", f"host {host}", k, _value(v)) for k, v in rec.items()]
    for q, rec in (grid.get("queues") or {}).items():
        out += [("grid", f"queue {q}", k, _value(v)) for k, v in rec.items()]
    out += [("grid", "", k, _value(v)) for k, v in grid.items() if k not in {"hosts", "queues"} | NOT_COMPARED]
    return out


def differences(a: dict, b: dict) -> list[dict]:
    """Rows {section, name, key, a, b} for every value that differs between inventories a and b (a key
    one side lacks counts as null there; a node, library, grid host or queue only one side has is one row,
    key "present"). When each side has one machine under another name (two runs on two machines), those
    two are compared with each other, and the names make a row of their own."""
    na, nb = sorted(a.get("nodes") or {}), sorted(b.get("nodes") or {})
    rename = {}
    rows: list[dict] = []
    if len(na) == len(nb) == 1 and na != nb:
        rename = {nb[0]: na[0]}
        rows.append({"section": "node", "name": "", "key": "machine", "a": na[0], "b": nb[0]})

    def keyed(inv: dict, names: dict) -> dict:
        return {(s, names.get(n, n) if s == "node" else n, k): v for s, n, k, v in flatten(inv)}

    fa, fb = keyed(a, {}), keyed(b, rename)
    # a node, library, grid host or queue on one side only: one row saying so, not one per value
    ents_a, ents_b = {(s, n) for s, n, _ in fa if n}, {(s, n) for s, n, _ in fb if n}
    said: set[tuple[str, str]] = set()
    for key in list(fa) + [k for k in fb if k not in fa]:
        section, name, k = key
        ent = (section, name)
        if name and (ent in ents_a) != (ent in ents_b):
            if ent not in said:
                said.add(ent)
                rows.append({"section": section, "name": name, "key": "present", "a": ent in ents_a,
                             "b": ent in ents_b})
            continue
        va, vb = fa.get(key), fb.get(key)
        if va != vb:
            shown = f"{name} / {nb[0]}" if section == "node" and rename and name == na[0] else name
            rows.append({"section": section, "name": shown, "key": k, "a": va, "b": vb})
    return rows


def write(bundle: Path, inv: dict) -> Path:
    path = Path(bundle) / FILE
    path.write_text(json.dumps(inv, indent=1, default=str))
    return path


def load(bundle: Path) -> dict | None:
    """A bundle's inventory.json, or None when it has none (bundles made before statgrid wrote one).
    Raises StatgridError on one this statgrid cannot read (damaged, or a newer schema)."""
    path = Path(bundle) / FILE
    if not path.is_file():
        return None
    try:
        inv = json.loads(path.read_text())
    except ValueError as exc:
        raise StatgridError(f"{str(path)!r} is not valid JSON ({exc}); remove it or run the benchmark again.") from None
    schema = inv.get("schema") if isinstance(inv, dict) else None
    if schema != SCHEMA:
        raise StatgridError(f"{str(path)!r} has inventory schema {schema!r}; this statgrid reads schema {SCHEMA}: "
                            "use the statgrid that wrote it.")
    for part in ("nodes", "libraries", "session", "grid"):       # the shape every reader walks
        value = inv.get(part)
        if value is not None and not (isinstance(value, dict) and all(isinstance(v, dict) or part in ("session", "grid")
                                                                      for v in value.values())):
            raise StatgridError(f"{str(path)!r} is damaged: its {part!r} is not a table of records; remove it or "
                                "run the benchmark again (`statgrid inventory --json` writes a good one).")
    return inv
