"""The kernels' parts that need no grid: the provisioner found through its entry point as Jupyter finds it, the kernel
specs `statgrid kernels install` writes, the log's colours, the queue options, a kernel job's checks."""
from __future__ import annotations

import json
import time

import pytest

from statgrid.config import ConfigError, load_config
from statgrid.errors import UsageError
from statgrid.kernels import render
from statgrid.kernels.specs import install, kernel_json


def test_the_provisioner_is_found_by_its_entry_point_from_the_kernel_spec(tmp_path):
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.provisioning import KernelProvisionerFactory

    from statgrid.kernels.provisioner import GridProvisioner

    spec = KernelSpec(resource_dir=str(tmp_path), **kernel_json("sas", queue="night"))
    factory = KernelProvisionerFactory.instance()
    assert factory.is_provisioner_available(spec)
    prov = factory.create_provisioner_instance("kid-1", spec, parent=None)
    assert isinstance(prov, GridProvisioner) and (prov.language, prov.queue) == ("sas", "night")
    assert not prov.has_process and prov.get_shutdown_wait_time() >= 10


def test_kernels_install_writes_both_specs_where_asked(tmp_path):
    from jupyter_client.kernelspec import KernelSpecManager

    paths = install(prefix=str(tmp_path))
    assert sorted(p.rsplit("/", 1)[1] for p in paths) == ["statgrid-python", "statgrid-sas"]
    ksm = KernelSpecManager(kernel_dirs=[str(tmp_path / "share" / "jupyter" / "kernels")])
    sas = ksm.get_kernel_spec("statgrid-sas")
    assert sas.language == "sas" and sas.interrupt_mode == "signal"
    assert sas.metadata["kernel_provisioner"]["provisioner_name"] == "statgrid-provisioner"
    assert "{connection_file}" not in json.dumps(sas.argv)       # the connection is made on the node


def test_log_lines_take_the_colour_of_their_message_level():
    log = ("NOTE: one\n      continued\nWARNING: two\nERROR: three\n  more of it\n1          data x;\n"
           "plain line")
    levels = [lvl for lvl, _ in render.log_lines(log)]
    assert levels == ["NOTE", "NOTE", "WARNING", "ERROR", "ERROR", None, None]
    html = render.log_html(log + "\n<b>&")
    assert html.count('style="color:#0000d0"') == 2 and html.count('style="color:#d00000"') == 2
    assert "&lt;b&gt;&amp;" in html and "<b>" not in html                 # the log's text is escaped
    assert render.log_ansi("NOTE: x").startswith("\x1b[34mNOTE: x")


def _config(tmp_path, queue: str):
    (tmp_path / "grid.toml").write_text(f"[hosts.node1]\nslots = 1\n[queues.normal]\n[queues.interactive]\n{queue}\n")
    return load_config(tmp_path / "grid.toml", {"STATGRID_HOME": str(tmp_path / "home")})


def test_interactive_queue_options_are_read_and_bad_ones_named(tmp_path):
    cfg = _config(tmp_path, 'idle_timeout = "90m"\nkernel_ports = "40000..40999"\nuser_limit = 2')
    q = cfg.queues["interactive"]
    assert (q.idle_timeout_s, q.kernel_ports, q.user_limit) == (5400.0, (40000, 40999), 2)
    for bad in ('kernel_ports = "40000"', 'kernel_ports = "40000..40003"', 'kernel_ports = "1..70000"',
                'idle_timeout = "soon"'):
        with pytest.raises(ConfigError, match="queues.interactive"):
            _config(tmp_path, bad)


def test_a_kernel_job_goes_to_the_interactive_queue_and_reserves_a_sessions_memory(tmp_path):
    from statgrid.grid.master.jobspec import JobRequest, validate

    cfg = _config(tmp_path, "")
    job = validate(JobRequest(argv=[], cwd=str(tmp_path), kernel="sas"), cfg, time.time())
    assert (job.kind, job.argv, job.queue, job.name) == ("kernel", ["sas"], "interactive", "sas kernel")
    session_job = validate(JobRequest(argv=["x.sas"], cwd=str(tmp_path)), cfg, time.time(), check_files=False)
    assert job.mem_bytes == session_job.mem_bytes > 0
    with pytest.raises(UsageError, match="kernel 'r' is not one of sas, python"):
        validate(JobRequest(argv=[], cwd=str(tmp_path), kernel="r"), cfg, time.time())
    with pytest.raises(UsageError, match="takes no command"):
        validate(JobRequest(argv=["rm"], cwd=str(tmp_path), kernel="sas"), cfg, time.time())


def test_a_pending_kernel_can_be_modified_and_stays_a_kernel(tmp_path):
    """bmod of a pending kernel: checked as a kernel (not as the command "sas"), options kept."""
    from tests.support.harness import MasterHarness

    with MasterHarness(tmp_path, slots=1, extra="[queues.normal]\n[queues.interactive]\n") as h:
        h.submit("sleep", "60")                                       # takes the only slot
        kernel = h.submit(kernel="sas", options={"memsize": "1G"})
        assert (kernel.kind, kernel.state.value, kernel.queue) == ("kernel", "PEND", "interactive")
        changed = h.master.modify(kernel.id, h.caller, {"name": "my session", "priority": 5, "queue": "normal"})
        assert (changed.kind, changed.argv, changed.name, changed.queue, changed.options) == \
            ("kernel", ["sas"], "my session", "normal", {"memsize": "1G"})
