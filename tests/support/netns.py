"""Hosts on one machine for tests of a grid of several machines (issue 16): Linux network namespaces,
one per host, each with a veth into a bridge that lives in a namespace of its own (the "switch"),
addresses 10.<n>.0.0/24 that exist only inside those namespaces. Nothing is added to the test
machine's own network: no route, no address, no bridge there.

    with Network(["grid1", "node1", "node2", "node3", "client"]) as net:
        net.run("client", ["curl", f"https://{net.ip('grid1')}:8642/health"])
        proc = net.popen("node1", ["statgrid", "node up"])
        net.link_down("node2")

The file system is shared by every namespace (only the network is separate), as a grid's GPFS
would be. Processes left in a namespace are killed, and every namespace deleted, on exit.
Tests skip, with the reason, where namespaces cannot be made (not root, no `ip`, no veth/bridge).
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import time
from typing import Sequence

import pytest


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def skip_unless_possible() -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    if shutil.which("ip") is None:
        pytest.skip("no `ip` (iproute2) on this machine")
    probe = f"sgprobe{secrets.token_hex(2)}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot create a network namespace: {made.stderr.strip()}")
    try:
        veth = _ip("-n", probe, "link", "add", "a0", "type", "veth", "peer", "name", "b0", check=False)
        if veth.returncode != 0:
            pytest.skip(f"cannot create veth pairs in a namespace: {veth.stderr.strip()}")
        bridge = _ip("-n", probe, "link", "add", "br0", "type", "bridge", check=False)
        if bridge.returncode != 0:
            pytest.skip(f"cannot create a bridge in a namespace: {bridge.stderr.strip()}")
    finally:
        _ip("netns", "del", probe, check=False)


class Network:
    """Namespaces for `hosts` on one bridge; host i gets 10.<net>.0.<i+1>."""

    def __init__(self, hosts: Sequence[str]):
        self.tag = secrets.token_hex(2)
        self.net = 100 + int(self.tag, 16) % 100            # 10.100.0.0 … 10.199.0.0: unlikely to clash
        self.hosts = list(hosts)
        self.switch = f"sg{self.tag}sw"
        self.ns = {h: f"sg{self.tag}{h}" for h in hosts}
        self.ips = {h: f"10.{self.net}.0.{i + 1}" for i, h in enumerate(hosts)}
        self.made: list[str] = []

    # -- life ---------------------------------------------------------------------------------------
    def __enter__(self) -> "Network":
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _build(self) -> None:
        _ip("netns", "add", self.switch)
        self.made.append(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for i, host in enumerate(self.hosts):
            ns = self.ns[host]
            _ip("netns", "add", ns)
            self.made.append(ns)
            # The pair is made inside the switch namespace and one end moved: the test machine's own
            # namespace never holds either end.
            _ip("-n", self.switch, "link", "add", f"p{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("-n", self.switch, "link", "set", f"p{i}", "master", "br0", "up")
            _ip("-n", ns, "addr", "add", f"{self.ips[host]}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")

    def pids(self, host: str) -> list[int]:
        done = _ip("netns", "pids", self.ns[host], check=False)
        return [int(p) for p in done.stdout.split()]

    def close(self) -> list[str]:
        """Kill what runs in the namespaces and delete them; returns what was still running."""
        left: list[str] = []
        for host in self.hosts:
            if self.ns[host] not in self.made:
                continue
            pids = self.pids(host)
            if pids:
                left.append(f"{host}: {pids}")
            for _ in range(50):
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                pids = self.pids(host)
                if not pids:
                    break
                time.sleep(0.1)
        for ns in reversed(self.made):
            _ip("netns", "del", ns, check=False)
        self.made.clear()
        return left

    # -- use ----------------------------------------------------------------------------------------
    def ip(self, host: str) -> str:
        return self.ips[host]

    def argv(self, host: str, argv: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", self.ns[host], *map(str, argv)]

    def run(self, host: str, argv: Sequence[str], timeout: float = 120, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(host, argv), capture_output=True, text=True, timeout=timeout, **kw)

    def popen(self, host: str, argv: Sequence[str], **kw) -> subprocess.Popen:
        return subprocess.Popen(self.argv(host, argv), **kw)

    def link_down(self, host: str) -> None:
        _ip("-n", self.ns[host], "link", "set", "eth0", "down")

    def link_up(self, host: str) -> None:
        _ip("-n", self.ns[host], "link", "set", "eth0", "up")
