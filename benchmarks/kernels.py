"""Notebook kernels the grid places against a local ipykernel (issue 28, "Measure"), in one run, interleaved:

- start → ready (kernel_info answered): a grid kernel (statgrid-python: an interactive job placed by the master,
  started on the node, connection fetched from the master) and a local ipykernel (jupyter_client's default);
  goal ≤ 2 s median for the grid's;
- a cell's round trip (`1+1`: execute_request → execute_reply and the iopub idle), p50 and p99 of each, and
  their ratio; goal ≤ 1.5× the local kernel's (CurveZMQ on the grid's, off on the local one, as each is used);
- memory of an idle grid kernel on its node (the kernel process's RSS; goal ≤ 80 MiB);
- with --many N: N grid kernels started at once (all ready? time to the last) and the master's CPU while they
  sit idle for --idle-s seconds (goal ≤ 2 % of a core with 50).

    python benchmarks/kernels.py [--runs 5] [--cells 200] [--many 50] [--idle-s 30]

It starts its own grid (an embedded engine, one host with enough slots) in a temporary home and stops it.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat, free_port, percentile  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _statgrid(env, *args, timeout=300):
    return subprocess.run([sys.executable, "-m", "statgrid", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


@contextlib.contextmanager
def grid(slots: int):
    from statgrid.kernels.specs import kernel_json

    root = Path(tempfile.mkdtemp(prefix="sgkbench-"))
    (root / "home").mkdir()
    (root / "grid.toml").write_text(f"[master]\nport = {free_port()}\n[hosts.node1]\nslots = {slots}\n"
                                    "[queues.normal]\n[queues.interactive]\n[monitor]\nenabled = false\n")
    spec = root / "jupyter" / "kernels" / "statgrid-python"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps(kernel_json("python")))
    env = {**os.environ, "STATGRID_HOME": str(root / "home"), "STATGRID_CONFIG": str(root / "grid.toml"),
           "JUPYTER_PATH": str(root / "jupyter")}
    up = _statgrid(env, "grid", "up", "--detach")
    if up.returncode != 0:
        raise SystemExit(f"grid up failed: {up.stderr}")
    saved = {k: os.environ.get(k) for k in ("STATGRID_HOME", "STATGRID_CONFIG", "JUPYTER_PATH")}
    os.environ.update({k: env[k] for k in saved})
    try:
        yield root
    finally:
        _statgrid(env, "grid", "down")
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


async def start(name: str):
    from jupyter_client.manager import AsyncKernelManager

    km = AsyncKernelManager(kernel_name=name)
    t0 = time.perf_counter()
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=300)
    return km, kc, time.perf_counter() - t0


async def round_trips(kc, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await kc.execute_interactive("1+1", timeout=60, output_hook=lambda msg: None)
        out.append(time.perf_counter() - t0)
    return out


async def stop(km, kc) -> None:
    await km.shutdown_kernel()
    kc.stop_channels()


def _rss_of_job(home: Path, job_id: int) -> int | None:
    """The kernel's RSS: the job's first process (the launcher's record of its pid), from /proc."""
    from statgrid.grid.interface.client import GridClient
    from statgrid.config import load_config

    pid = GridClient(load_config(None)).job(job_id)["pid"]
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _master_cpu_s(home: Path) -> float:
    pid = int(json.loads((home / "grid" / "master.json").read_text())["pid"])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def main_async(args) -> None:
    starts = {"grid": [], "local": []}
    p50 = {"grid": [], "local": []}
    p99 = {"grid": [], "local": []}
    rss_idle, rss_used = [], []
    with grid(slots=max(4, args.many + 2)) as root:
        for r in range(args.runs):
            for side in (("grid", "local") if r % 2 == 0 else ("local", "grid")):
                km, kc, took = await start("statgrid-python" if side == "grid" else "python3")
                starts[side].append(took)
                if side == "grid":
                    rss_idle.append(_rss_of_job(root / "home", km.provisioner.job_id))
                rt = await round_trips(kc, args.cells)
                p50[side].append(percentile(rt, 0.5))
                p99[side].append(percentile(rt, 0.99))
                if side == "grid":
                    rss_used.append(_rss_of_job(root / "home", km.provisioner.job_id))
                await stop(km, kc)
        print("kernels (statgrid-python on the grid vs a local ipykernel, same run, interleaved)")
        print(f"  start → ready, grid:          {fmt_stat(starts['grid'])} s   (goal ≤ 2 s median)")
        print(f"  start → ready, local:         {fmt_stat(starts['local'])} s")
        print(f"  start ratio grid/local:       {fmt_stat([g / l for g, l in zip(starts['grid'], starts['local'])])}")
        print(f"  1+1 p50, grid:                {fmt_stat([v * 1000 for v in p50['grid']])} ms")
        print(f"  1+1 p50, local:               {fmt_stat([v * 1000 for v in p50['local']])} ms")
        print(f"  1+1 p50 ratio grid/local:     {fmt_stat([g / l for g, l in zip(p50['grid'], p50['local'])])}"
              "   (goal ≤ 1.5)")
        print(f"  1+1 p99 ratio grid/local:     {fmt_stat([g / l for g, l in zip(p99['grid'], p99['local'])])}")
        print(f"  idle kernel RSS on its node:  {fmt_stat([v / 2**20 for v in rss_idle if v])} MiB   (goal ≤ 80; "
              "started, no cell run)")
        print(f"  RSS after the cells:          {fmt_stat([v / 2**20 for v in rss_used if v])} MiB   (its session open: "
              "DuckDB and Arrow loaded)")
        if args.many:
            t0 = time.perf_counter()
            started = await asyncio.gather(*(start("statgrid-python") for _ in range(args.many)),
                                           return_exceptions=True)
            ok = [s for s in started if not isinstance(s, BaseException)]
            last = time.perf_counter() - t0
            print(f"  {args.many} started at once:         {len(ok)} ready, the last after {last:.2f} s")
            cpu0, w0 = _master_cpu_s(root / "home"), time.perf_counter()
            await asyncio.sleep(args.idle_s)
            cpu = (_master_cpu_s(root / "home") - cpu0) / (time.perf_counter() - w0)
            print(f"  master CPU, {len(ok)} idle kernels:  {cpu * 100:.2f} % of a core over {args.idle_s:.0f} s "
                  "(goal ≤ 2 %)")
            await asyncio.gather(*(stop(km, kc) for km, kc, _ in ok))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cells", type=int, default=200)
    ap.add_argument("--many", type=int, default=0)
    ap.add_argument("--idle-s", type=float, default=30.0)
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
