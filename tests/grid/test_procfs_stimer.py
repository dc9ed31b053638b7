"""Parser tests over fake /proc content, and the STIMER block's exact text."""
from __future__ import annotations

import os
import resource

import pytest

from statgrid.host import procfs as _procfs
from statgrid.session.log import format_step_block
from statgrid.session.stimer import StepRecord, StepTimer

IO = """rchar: 1000
wchar: 2000
syscr: 3
syscw: 4
read_bytes: 8192
write_bytes: 16384
cancelled_write_bytes: 4096
"""
STATUS = """Name:\tpython
VmPeak:\t  500000 kB
VmHWM:\t  300000 kB
VmRSS:\t  120000 kB
Threads:\t3
"""
# the command name may hold spaces and parentheses
STAT = "4242 (my (odd) job) S 1 4242 4242 0 -1 4194304 100 0 0 0 5 6 0 0 20 0 3 0 987654 1000 200"


def fake_proc(root, io=IO, status=STATUS):
    d = root / "self"
    d.mkdir(parents=True, exist_ok=True)
    (d / "io").write_text(io)
    (d / "status").write_text(status)
    (d / "stat").write_text(STAT)
    return str(root)


def test_parse_io():
    assert _procfs.parse_io(IO) == {"rchar": 1000, "wchar": 2000, "syscr": 3, "syscw": 4, "read_bytes": 8192,
                                    "write_bytes": 16384, "cancelled_write_bytes": 4096}


def test_parse_status_memory_in_bytes():
    assert _procfs.parse_status_memory(STATUS) == {"VmHWM": 300000 * 1024, "VmRSS": 120000 * 1024}


def test_parse_stat_starttime_with_spaces_in_name():
    assert _procfs.parse_stat_starttime(STAT) == 987654


def test_real_proc_starttime_is_stable():
    assert _procfs.read_starttime() == _procfs.read_starttime(pid=os.getpid()) is not None


def test_step_timer_io_deltas_from_fake_proc(tmp_path):
    root = fake_proc(tmp_path / "proc")
    timer = StepTimer("sid", 1, "PROCEDURE X", procfs=root)
    assert timer.hwm_reset is False          # the fake tree has no clear_refs
    later = IO.replace("rchar: 1000", "rchar: 6000").replace("wchar: 2000", "wchar: 2500") \
              .replace("read_bytes: 8192", "read_bytes: 12288").replace("write_bytes: 16384", "write_bytes: 65536")
    fake_proc(tmp_path / "proc", io=later, status=STATUS.replace("300000", "400000").replace("120000", "150000"))
    rec = timer.finish(outputs=["work.x"], rows_out=5)
    assert rec.logical_read_bytes == 5000 and rec.logical_write_bytes == 500
    assert rec.read_bytes == 4096
    assert rec.write_bytes == 65536 - 16384                 # cancelled bytes unchanged → net new writes
    assert rec.os_memory_bytes == 400000 * 1024
    # no clear_refs here, so VmHWM is the lifetime peak: memory is the RSS the step added
    assert rec.memory_bytes == (150000 - 120000) * 1024
    assert rec.outputs == ["work.x"] and rec.rows_out == 5 and rec.status == "ok"


def test_step_timer_counts_cpu_of_the_step():
    timer = StepTimer("sid", 1, "BUSY")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    x = 0
    while resource.getrusage(resource.RUSAGE_SELF).ru_utime - before < 0.05:
        x += sum(range(1000))
    rec = timer.finish()
    assert rec.user_cpu_s >= 0.05
    # RUSAGE_SELF counts every thread of the process (an earlier test's BLAS/OpenMP pool may still
    # spin): user CPU can reach (cores × real), never more, whatever else the process runs
    assert rec.real_s * (os.cpu_count() or 1) >= rec.user_cpu_s * 0.9


def test_clear_refs_resets_peak_on_this_kernel():
    """Where the kernel allows it (it does here), a step's OS memory is its own peak."""
    big = bytearray(200 * 2**20)
    big[::4096] = b"x" * len(big[::4096])
    del big
    timer = StepTimer("sid", 1, "SMALL")
    rec = timer.finish()
    if not rec.os_memory_reset:
        pytest.skip("this kernel refuses /proc/self/clear_refs")
    assert rec.memory_bytes < 50 * 2**20
    assert rec.os_memory_bytes < _procfs.read_status_memory()["VmRSS"] + 50 * 2**20


RECORD = StepRecord(
    session_id="abc_1234", step=3, name="PROCEDURE SORT", status="ok", start_ts="2026-11-22T10:15:03.123+00:00",
    real_s=1.234, user_cpu_s=2.5, sys_cpu_s=0.25, memory_bytes=10 * 2**20, os_memory_bytes=300 * 2**20,
    os_memory_reset=True, page_faults=0, page_reclaims=12345, voluntary_ctx_switches=12,
    involuntary_ctx_switches=3, block_input_ops=0, block_output_ops=2048, read_bytes=0, write_bytes=1048576,
    logical_read_bytes=4096, logical_write_bytes=1048576, outputs=["work.sorted"], rows_out=100)


def test_step_block_exact_text():
    assert format_step_block(RECORD) == """\
NOTE: PROCEDURE SORT used (Total process time):
      real time                     1.23 seconds
      user cpu time                 2.50 seconds
      system cpu time               0.25 seconds
      memory                        10,240.00k
      OS Memory                     307,200.00k
      Timestamp                     2026-11-22T10:15:03.123+00:00
      Page Faults                   0
      Page Reclaims                 12,345
      Voluntary Context Switches    12
      Involuntary Context Switches  3
      Block Input Operations        0
      Block Output Operations       2,048
      Bytes Read                    0
      Bytes Written                 1,048,576
      Logical Bytes Read            4,096
      Logical Bytes Written         1,048,576"""


def test_json_record_has_units_in_names():
    d = RECORD.to_json_dict()
    assert d["record"] == "step"
    for key in ("real_s", "user_cpu_s", "sys_cpu_s", "memory_bytes", "os_memory_bytes", "read_bytes",
                "write_bytes", "logical_read_bytes", "logical_write_bytes"):
        assert key in d


def test_process_running_over_a_fake_proc(tmp_path):
    from statgrid.host.procfs import process_running

    for pid, state, cmd in ((10, "S", b"python\0-m\0statgrid.grid.execution.cluster\0"), (11, "Z", b""),
                            (12, "R", b"vim\0notes\0")):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (a (b) c) {state} 1 {pid} {pid} 0 -1\n")
        (tmp_path / str(pid) / "cmdline").write_bytes(cmd)
    root = str(tmp_path)
    assert process_running(10, b"statgrid.grid.execution.cluster", procfs=root)
    assert not process_running(11, procfs=root)                        # a zombie is not running
    assert process_running(12, procfs=root) and not process_running(12, b"statgrid", procfs=root)
    assert not process_running(13, procfs=root)                        # no such pid
