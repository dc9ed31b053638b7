"""Library I/O sources other than a block device (monitor/libio.py): NFS mountstats, GPFS mmpmon
fs_io_s, and the jobs' own /proc/<pid>/io, over fake /proc trees written after the kernel's and
IBM's documented formats. Expected rates are worked out by hand from the fixture numbers."""
from __future__ import annotations

import dataclasses
import logging
import os
import stat
from pathlib import Path

import pytest

from statgrid.monitor import _fs, libio
from statgrid.monitor.metrics import KEYS, LIBRARY_METRICS
from statgrid.monitor.sampler import map_libraries

pytestmark = pytest.mark.unit

# /proc/self/mountstats as nfs_show_stats + rpc_clnt_show_stats print it (statvers=1.1): the bytes:
# line's 8 fields (normal read/write, direct read/write, server read/write, read/write pages); per-op
# lines: ops, transmissions, major timeouts, bytes sent, bytes received, queue ms, RTT ms, execute ms, errors.
MOUNTSTATS = """device rootfs mounted on / with fstype ext4
device proc mounted on /proc with fstype proc
device srv:/export/sas mounted on /sas\\040data with fstype nfs4 statvers=1.1
\topts:\trw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,nconnect=4,timeo=600,retrans=2,sec=sys
\tage:\t3600
\tcaps:\tcaps=0x3ffdf,wtmult=512,dtsize=1048576,bsize=0,namlen=255
\tsec:\tflavor=1,pseudoflavor=1
\tevents:\t0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
\tbytes:\t{nr} {nw} 0 0 {sr} {sw} 0 0
\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)
\txprt:\ttcp 0 0 1 0 12 300 300 0 600 0 2 100 200
\tper-op statistics
\t        NULL: 1 1 0 44 24 0 0 0 0
\t        READ: {ro} {ro} 0 {ro}00 {sr} 3 {rrtt} {rexe} 0
\t       WRITE: {wo} {wo} 0 {sw} {wo}00 5 {wrtt} {wexe} 0
\t      COMMIT: 0 0 0 0 0 0 0 0 0

device srv:/export/other mounted on /other with fstype nfs statvers=1.1
\tbytes:\t0 0 0 0 0 0 0 0
\tper-op statistics
\t        READ: 0 0 0 0 0 0 0 0
"""
# `mmpmon -p` answering fs_io_s: one line per file system (the third, with _rc_ 1, is not counted)
MMPMON = ("_fs_io_s_ _n_ 10.0.0.2 _nn_ node1 _rc_ 0 _t_ {t} _tu_ {tu} _cl_ grid.example _fs_ sasdata _d_ 4 "
          "_br_ {br} _bw_ {bw} _oc_ 10 _cc_ 8 _rdc_ {rdc} _wc_ {wc} _dir_ 1 _iu_ 3\n"
          "_fs_io_s_ _n_ 10.0.0.2 _nn_ node1 _rc_ 0 _t_ {t} _tu_ {tu} _cl_ grid.example _fs_ saswork _d_ 2 "
          "_br_ 7 _bw_ 7 _oc_ 1 _cc_ 1 _rdc_ 1 _wc_ 1 _dir_ 0 _iu_ 0\n"
          "_fs_io_s_ _n_ 10.0.0.2 _nn_ node1 _rc_ 1 _t_ {t} _tu_ {tu} _cl_ grid.example _fs_ broken _d_ 1 "
          "_br_ 0 _bw_ 0 _oc_ 0 _cc_ 0 _rdc_ 0 _wc_ 0 _dir_ 0 _iu_ 0\n")
MOUNTINFO = ("22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
             "30 22 0:50 / /sas\\040data rw - nfs4 srv:/export/sas rw,vers=4.2\n"
             "31 22 0:51 / /gpfs/sasdata rw - gpfs /dev/sasdata rw\n"
             "32 22 0:30 / /scratch rw - tmpfs tmpfs rw\n"
             "33 32 0:31 / /scratch/util rw - tmpfs tmpfs rw\n"
             "34 22 0:60 / /data rw - overlay overlay rw\n")
DISKSTATS = "   8       1 sda1 1 0 8 1 1 0 8 1 0 2 2 0 0 0 0 0 0\n"
PROC_IO = ("rchar: {rchar}\nwchar: {wchar}\nsyscr: {syscr}\nsyscw: {syscw}\nread_bytes: {rb}\n"
           "write_bytes: {wb}\ncancelled_write_bytes: {cw}\n")


def test_mountstats_parser_reads_bytes_and_ops():
    text = MOUNTSTATS.format(nr=11, nw=22, sr=33, sw=44, ro=5, wo=6, rrtt=7, rexe=8, wrtt=9, wexe=10)
    m = _fs.parse_mountstats(text)
    assert sorted(m) == ["/other", "/sas data"]           # \040 is a space; mounts without bytes: left out
    s = m["/sas data"]
    assert (s.source, s.fstype, s.server_read_bytes, s.server_write_bytes, s.app_read_bytes, s.app_write_bytes) == \
        ("srv:/export/sas", "nfs4", 33, 44, 11, 22)
    assert s.read == _fs.NfsOp(5, 5, 0, 500, 33, 3, 7, 8) and s.write == _fs.NfsOp(6, 6, 0, 44, 600, 5, 9, 10)
    assert m["/other"].write is None


def test_nfs_rates_by_hand():
    a = _fs.parse_mountstats(MOUNTSTATS.format(nr=0, nw=0, sr=104857600, sw=52428800, ro=100, wo=50,
                                               rrtt=400, rexe=500, wrtt=900, wexe=1000))["/sas data"]
    b = _fs.parse_mountstats(MOUNTSTATS.format(nr=0, nw=0, sr=104857600 + 8388608, sw=52428800 + 4194304, ro=108,
                                               wo=54, rrtt=430, rexe=540, wrtt=970, wexe=1080))["/sas data"]
    got = libio.nfs_metrics(a, b, 2.0)
    # 8 MiB read and 4 MiB written in 2 s by 8 READs and 4 WRITEs; execute +40 ms and +80 ms
    assert got["read_bytes_per_s"] == 4194304 and got["write_bytes_per_s"] == 2097152
    assert got["read_iops"] == 4 and got["write_iops"] == 2
    assert got["avg_request_bytes"] == 1048576                      # 12 MiB / 12 ops
    assert got["read_await_ms"] == 5 and got["write_await_ms"] == 20 and got["await_ms"] == 10   # 120 ms / 12
    assert got["avg_queue_size"] == pytest.approx(0.06)             # 120 ms of requests in 2000 ms
    assert got["util_pct"] is None and got["storage_read_bytes_per_s"] is None
    remounted = dataclasses.replace(b, server_read_bytes=5)
    assert libio.nfs_metrics(a, remounted, 2.0)["read_bytes_per_s"] is None


def test_mmpmon_parser_and_gpfs_rates_by_hand():
    a = _fs.parse_mmpmon_fs_io_s(MMPMON.format(t=1700000000, tu=250000, br=1000000, bw=2000000, rdc=100, wc=200))
    b = _fs.parse_mmpmon_fs_io_s(MMPMON.format(t=1700000002, tu=750000, br=6000000, bw=4500000, rdc=150, wc=225))
    assert sorted(a) == ["sasdata", "saswork"]                       # _rc_ 1: not counted
    assert a["sasdata"] == _fs.GpfsFs("sasdata", 1700000000.25, 1000000, 2000000, 100, 200)
    got = libio.gpfs_metrics(a["sasdata"], b["sasdata"], 1.0)         # mmpmon's own clock: 2.5 s, not 1.0
    assert got["read_bytes_per_s"] == 2000000 and got["write_bytes_per_s"] == 1000000
    assert got["read_iops"] == 20 and got["write_iops"] == 10
    assert got["avg_request_bytes"] == 100000                         # 7.5 MB / 75 calls
    assert got["await_ms"] is None
    assert _fs.parse_proc_io(PROC_IO.format(rchar=1, wchar=2, syscr=3, syscw=4, rb=5, wb=4096, cw=1000)) == \
        _fs.ProcIo(1, 2, 3, 4, 5, 3096)                               # write_bytes − cancelled_write_bytes


def _tree(root: Path) -> Path:
    (root / "self").mkdir(parents=True, exist_ok=True)
    (root / "self" / "mountinfo").write_text(MOUNTINFO)
    (root / "self" / "mountstats").write_text(MOUNTSTATS.format(nr=0, nw=0, sr=0, sw=0, ro=0, wo=0, rrtt=0, rexe=0,
                                                                wrtt=0, wexe=0))
    (root / "diskstats").write_text(DISKSTATS)
    return root


def _job(root: Path, pid: int, io: dict, files: list[str], cwd: str) -> None:
    """A fake /proc/<pid>: io, fd/ links (a pipe among them) and cwd, as the kernel shows them."""
    d = root / str(pid)
    (d / "fd").mkdir(parents=True, exist_ok=True)
    for link in d.joinpath("fd").iterdir():
        link.unlink()
    (d / "io").write_text(PROC_IO.format(**{"rb": 0, "wb": 0, "cw": 0, **io}))
    for n, target in enumerate(["pipe:[4242]", "/dev/null", *files]):
        os.symlink(target, d / "fd" / str(n))
    if (d / "cwd").is_symlink():
        (d / "cwd").unlink()
    os.symlink(cwd, d / "cwd")


def _launcher(root: Path, children: list[int]) -> None:
    (root / "100" / "task" / "100").mkdir(parents=True, exist_ok=True)
    (root / "100" / "task" / "100" / "children").write_text(" ".join(map(str, children)) + " ")


def _mmpmon(tmp_path: Path, answer: Path) -> str:
    """A stand-in mmpmon: refuses anything but `-p -s` and an fs_io_s request, then answers from a file."""
    path = tmp_path / "mmpmon"
    path.write_text(f'#!/bin/sh\n[ "$1 $2" = "-p -s" ] || exit 2\nread req\n[ "$req" = fs_io_s ] || exit 3\n'
                    f'cat "{answer}"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


LIBS = {"home": "/srv/home", "nfs": "/sas data/lib", "gpfs": "/gpfs/sasdata/x", "work": "/scratch/w",
        "util": "/scratch/util/u", "data": "/data/d"}


def test_each_library_gets_its_source_and_rates_by_hand(tmp_path):
    root = _tree(tmp_path / "proc")
    answer = tmp_path / "mmpmon.out"
    answer.write_text(MMPMON.format(t=1700000000, tu=0, br=0, bw=0, rdc=0, wc=0))
    mmpmon = _mmpmon(tmp_path, answer)
    libs = map_libraries(LIBS, str(root), mmpmon=mmpmon)
    assert [(x.library, x.source, x.where) for x in libs] == [
        ("home", "block", "sda1"), ("nfs", "nfs", "srv:/export/sas"), ("gpfs", "gpfs", "sasdata"),
        ("work", "process", "tmpfs /scratch"), ("util", "process", "tmpfs /scratch/util"),
        ("data", "process", "overlay /data")]
    assert [x.device for x in libs] == ["sda1", None, None, None, None, None]     # the diskstats name, or None
    assert [x.unmeasured_note() is None for x in libs] == [True, True, True, False, False, False]
    assert "its rows (source 'process') are the grid jobs' own I/O" in libs[3].unmeasured_note()

    # Interval start: job 200 writes under work; job 300 has files open on util and data.
    _launcher(root, [200, 300])
    _job(root, 200, dict(rchar=1000, wchar=2000, syscr=10, syscw=20, wb=4096), ["/scratch/w/j1/a.parquet"], "/home/u")
    _job(root, 300, dict(rchar=0, wchar=0, syscr=0, syscw=0), ["/scratch/util/u/t.tmp", "/data/d/x.parquet (deleted)"],
         "/")
    src = libio.FsSources(libs, str(root), job_parents=lambda: [100], mmpmon=mmpmon)
    a = dataclasses.replace(src.snapshot(), mono_s=10.0)
    assert a.procs[300][1] == {"/scratch/util", "/data"} and a.procs[200][1:] == ({"/scratch"}, set())

    # Interval end (2 s): 200 went on under work; 300 closed its files (it keeps the mounts it was last
    # seen on); 400 started in the interval in a WORK directory with no file open (its cwd counts).
    _launcher(root, [200, 300, 400])
    _job(root, 200, dict(rchar=4001000, wchar=8002000, syscr=14, syscw=28, wb=4096 + 1048576),
         ["/scratch/w/j1/a.parquet"], "/home/u")
    _job(root, 300, dict(rchar=6000000, wchar=0, syscr=6, syscw=0, rb=2000000), [], "/elsewhere")
    _job(root, 400, dict(rchar=500, wchar=0, syscr=1, syscw=0), [], "/scratch/w/j2")
    (root / "self" / "mountstats").write_text(MOUNTSTATS.format(nr=0, nw=0, sr=2000, sw=1000, ro=2, wo=1, rrtt=0,
                                                                rexe=6, wrtt=0, wexe=3))
    answer.write_text(MMPMON.format(t=1700000004, tu=0, br=4000, bw=8000, rdc=4, wc=8))
    b = dataclasses.replace(src.snapshot(), mono_s=12.0)
    out = {r["library"]: r for r in src.rows(a, b, 1_700_000_000.0, "n1")}
    assert sorted(out) == ["data", "gpfs", "nfs", "util", "work"]          # home: the block rows' (sampler.rows)
    assert all(list(r) == [*KEYS["library"], *(m.name for m in LIBRARY_METRICS)] for r in out.values())
    assert out["nfs"]["read_bytes_per_s"] == 1000 and out["nfs"]["write_bytes_per_s"] == 500
    assert out["nfs"]["await_ms"] == 3 and out["nfs"]["source"] == "nfs"     # 9 ms over 3 ops
    assert out["gpfs"]["read_bytes_per_s"] == 1000 and out["gpfs"]["write_iops"] == 2      # 4 s by mmpmon's clock
    w = out["work"]                 # 200: +4 MB read, +8 MB written, 4 + 8 calls; 400 (new): 500 B in 1 call
    assert w["read_bytes_per_s"] == 2000250 and w["write_bytes_per_s"] == 4000000
    assert w["read_iops"] == 2.5 and w["write_iops"] == 4
    assert w["avg_request_bytes"] == pytest.approx(12000500 / 13)
    assert w["storage_write_bytes_per_s"] == 524288 and w["storage_read_bytes_per_s"] == 0
    assert w["await_ms"] is None and w["util_pct"] is None and w["device"] == "tmpfs /scratch"
    for lib in ("util", "data"):    # 300's 6 MB in 6 calls, split between the two mounts it was seen on
        r = out[lib]
        assert (r["read_bytes_per_s"], r["read_iops"], r["write_bytes_per_s"]) == (1500000, 1.5, 0)
        assert r["avg_request_bytes"] == 1000000 and r["storage_read_bytes_per_s"] == 500000


def test_no_jobs_is_zero_unknown_jobs_is_null_and_a_failing_mmpmon_is_skipped(tmp_path, caplog):
    root = _tree(tmp_path / "proc")
    answer = tmp_path / "missing"                   # cat fails: mmpmon exits non-zero
    mmpmon = _mmpmon(tmp_path, answer)
    libs = map_libraries({"work": "/scratch/w", "gpfs": "/gpfs/sasdata"}, str(root), mmpmon=mmpmon)
    _launcher(root, [])
    with caplog.at_level(logging.WARNING, logger="statgrid.monitor"):
        known = libio.FsSources(libs, str(root), job_parents=lambda: [100], mmpmon=mmpmon)
        rows = known.rows(known.snapshot(), dataclasses.replace(known.snapshot(), mono_s=1e9), 1.0, "n1")
    work, gpfs = rows
    assert work["read_bytes_per_s"] == 0 and work["write_iops"] == 0            # no job ran: nothing moved
    assert gpfs["read_bytes_per_s"] is None
    assert len([r for r in caplog.records if "mmpmon fs_io_s failed" in r.message]) == 1   # once, not per sample
    unknown = libio.FsSources(libs, str(root), job_parents=None, mmpmon=mmpmon)
    assert unknown.rows(unknown.snapshot(), unknown.snapshot(), 1.0, "n1")[0]["read_bytes_per_s"] is None


def test_sources_can_be_limited_and_bad_names_are_refused(tmp_path):
    from statgrid.errors import UsageError
    from statgrid.monitor.sampler import Sampler

    root = _tree(tmp_path / "proc")
    libs = map_libraries(LIBS, str(root), sources=("block", "nfs"))
    assert [x.source for x in libs] == ["block", "nfs", None, None, None, None]
    assert "no per-library I/O rows for it" in libs[3].unmeasured_note()
    with pytest.raises(UsageError, match="library source 'disk' is not one of block, nfs, gpfs, process"):
        Sampler("n1", LIBS, str(root), sources=("block", "disk"))


def test_a_library_under_dev_shm_is_charged_and_dev_null_is_not(tmp_path):
    """/dev/shm is a tmpfs libraries live on: a job's file there counts; /dev/null (on devtmpfs, no
    library's mount) does not pull its bytes anywhere."""
    root = _tree(tmp_path / "proc")
    (root / "self" / "mountinfo").write_text(MOUNTINFO + "40 22 0:5 / /dev rw - devtmpfs udev rw\n"
                                             "41 40 0:32 / /dev/shm rw - tmpfs tmpfs rw\n")
    libs = map_libraries({"work": "/dev/shm/w"}, str(root))
    assert [(x.source, x.mount_point) for x in libs] == [("process", "/dev/shm")]
    _launcher(root, [200])
    _job(root, 200, dict(rchar=0, wchar=0, syscr=0, syscw=0), ["/dev/shm/w/f"], "/")
    src = libio.FsSources(libs, str(root), job_parents=lambda: [100])
    a = dataclasses.replace(src.snapshot(), mono_s=0.0)
    _job(root, 200, dict(rchar=0, wchar=3000, syscr=0, syscw=3), ["/dev/shm/w/f"], "/")
    b = dataclasses.replace(src.snapshot(), mono_s=1.0)
    (row,) = src.rows(a, b, 1.0, "n1")
    assert (row["write_bytes_per_s"], row["write_iops"], row["avg_request_bytes"]) == (3000, 3, 1000)


def test_jobs_of_another_user_are_null_not_zero_and_said_once(tmp_path, caplog, monkeypatch):
    """A monitor that may not read the jobs' /proc/<pid>/io (another user's, the monitor not root)
    gives null rows, not 0 MB/s, and says why once; the interval after one it could not read has no
    delta either (a job's whole past would count as one second's)."""
    root = _tree(tmp_path / "proc")
    libs = map_libraries({"work": "/scratch/w"}, str(root))
    _launcher(root, [200])
    _job(root, 200, dict(rchar=0, wchar=0, syscr=0, syscw=0), ["/scratch/w/f"], "/")
    src = libio.FsSources(libs, str(root), job_parents=lambda: [100])
    ok = src.snapshot()
    real_read = libio._linux.read

    def denied(name, procfs=None):
        if name.endswith("/io"):
            raise PermissionError(13, "Permission denied", name)
        return real_read(name, procfs)

    monkeypatch.setattr(libio._linux, "read", denied)
    with caplog.at_level(logging.WARNING, logger="statgrid.monitor"):
        no = [src.snapshot(), src.snapshot()]
    monkeypatch.setattr(libio._linux, "read", real_read)
    assert [s.jobs_known for s in (ok, *no)] == [True, False, False]
    assert src.rows(ok, no[0], 1.0, "n1")[0]["write_bytes_per_s"] is None
    assert len([r for r in caplog.records if "of another user" in r.message]) == 1
    _job(root, 200, dict(rchar=0, wchar=10 ** 9, syscr=0, syscw=1), ["/scratch/w/f"], "/")
    back = src.snapshot()
    assert src.rows(no[1], back, 1.0, "n1")[0]["write_bytes_per_s"] is None
