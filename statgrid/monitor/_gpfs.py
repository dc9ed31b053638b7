"""GPFS (IBM Storage Scale) tunables for the inventory: `mmlsconfig` and `mmlsfs` run when they
are installed (on PATH or in /usr/lpp/mmfs/bin, where IBM installs them), with a timeout, and
their text parsed by pure functions.

Output formats, after IBM's documentation of the commands:
- `mmlsconfig` (no attribute): "Configuration data for cluster X:", a rule, then `name value` lines;
  a `[node1,node2]` line starts values for those nodes only, `[common]` returns to the cluster's.
- `mmlsconfig attr1,attr2`: `name value` lines; a value that applies to some nodes only is followed
  by those nodes in brackets: `pagepool 8G [c5n97g]`.
- `mmlsfs Device -B`: a `flag value description` table; `-B  1048576  Block size` (bytes; with
  several pools the line says "(system pool)" and a second line "(other pools)": the data pools').
An attribute mmlsconfig does not show has its default (mmchconfig's documentation); the
inventory says null for it rather than carry a default that changed between releases.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess

MM_DIR = "/usr/lpp/mmfs/bin"
TIMEOUT_S = 10.0
# mmlsconfig names → the inventory's keys (sizes in bytes, the rest as GPFS counts them).
CONFIG_KEYS = {"pagepool": "pagepool_bytes", "maxMBpS": "maxMBpS", "prefetchPct": "prefetchPct",
               "seqDiscardThreshold": "seqDiscardThreshold_bytes", "worker1Threads": "worker1Threads",
               "maxFilesToCache": "maxFilesToCache", "prefetchThreads": "prefetchThreads",
               "scatterBuffers": "scatterBuffers", "maxblocksize": "maxblocksize_bytes"}
SIZE_UNITS = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3, "t": 1024 ** 4}


def parse_size(text: str | None) -> int | None:
    """'4G', '3500m', '1048576', '256K', '1M' → bytes (GPFS's K/M/G are powers of 1024); None if not a size."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", text or "", re.I)
    return None if not m else int(float(m.group(1)) * SIZE_UNITS[m.group(2).lower()])


def _value(key: str, raw: str):
    if key.endswith("_bytes"):
        return parse_size(raw)
    try:
        return int(raw)
    except ValueError:
        return raw


def _names(node: str) -> set[str]:
    return {node, node.split(".")[0]}


def parse_mmlsconfig(text: str, node: str) -> dict:
    """The values in effect on `node` (a host name; its short name matches too): a node-specific
    value beats the cluster's. Returns the inventory's keys present in the text."""
    mine, common = _names(node), {}
    specific: dict[str, str] = {}
    section: set[str] | None = None            # None: the cluster-wide [common] part
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(("Configuration data", "File systems in", "---", "/dev/")):
            continue
        m = re.fullmatch(r"\[([^\]]*)\]", s)
        if m:
            nodes = {n.strip() for n in m.group(1).split(",") if n.strip()}
            section = None if nodes == {"common"} else nodes
            continue
        parts = s.split(None, 1)
        if len(parts) < 2:
            continue
        name, rest = parts
        bm = re.fullmatch(r"(.*?)\s*\[([^\]]*)\]", rest)     # attribute form: value [node1,node2]
        value, nodes = (bm.group(1), {n.strip() for n in bm.group(2).split(",")}) if bm else (rest.strip(), section)
        if nodes is None:
            common.setdefault(name, value)
        elif nodes & mine:
            specific[name] = value
    merged = {**common, **specific}
    return {key: _value(key, merged[name]) for name, key in CONFIG_KEYS.items() if name in merged}


def parse_mmlsfs_blocksize(text: str) -> int | None:
    """The data block size in bytes from `mmlsfs Device -B`: the "(other pools)" line when the file
    system has several pools (data lives there), else the one -B line."""
    values: list[tuple[str, int]] = []
    for line in text.splitlines():
        f = line.split(None, 2)
        if len(f) >= 2 and f[0] == "-B":
            size = parse_size(f[1])
            if size is not None:
                values.append((f[2] if len(f) > 2 else "", size))
        elif len(f) >= 1 and values and parse_size(f[0]) is not None and "pool" in line:
            values.append((" ".join(f[1:]), parse_size(f[0])))           # continuation line of -B
    for desc, size in values:
        if "other pools" in desc:
            return size
    return values[0][1] if values else None


def command(name: str) -> str | None:
    return shutil.which(name, path=os.environ.get("PATH", "") + os.pathsep + MM_DIR)


def run(argv: list[str], timeout_s: float = TIMEOUT_S) -> str | None:
    """A command's stdout, or None when it fails, times out or is missing (the inventory says null)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def cluster_config(node: str | None = None) -> dict | None:
    """This node's mmlsconfig values, or None when mmlsconfig is not installed or does not answer."""
    exe = command("mmlsconfig")
    if exe is None:
        return None
    text = run([exe, ",".join(CONFIG_KEYS)])
    if text is None:
        text = run([exe])                               # releases that take no attribute list
    return None if text is None else parse_mmlsconfig(text, node or socket.gethostname())


def gpfs_facts(source: str, config: dict | None) -> dict | None:
    """A GPFS library's tunables: the cluster's config for this node and the file system's block
    size (`mmlsfs <device> -B`; the mount's source is the device, with or without /dev/)."""
    exe = command("mmlsfs")
    block = None
    if exe is not None:
        text = run([exe, source.removeprefix("/dev/"), "-B"])
        block = parse_mmlsfs_blocksize(text) if text else None
    if config is None and block is None:
        return None
    out = {key: None for key in CONFIG_KEYS.values()}
    out.update(config or {})
    out["blocksize_bytes"] = block
    return out
