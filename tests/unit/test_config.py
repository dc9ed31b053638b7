"""grid.toml → typed config: defaults, lookup, and errors that name key, value and what is allowed."""
from __future__ import annotations

import pytest

from statgrid.config import (HostPreference, SessionOptions, load_config, parse_option_pairs,
                             parse_size_bytes)
from statgrid.errors import ConfigError


def write(tmp_path, text):
    p = tmp_path / "grid.toml"
    p.write_text(text)
    return p


def test_defaults_without_file(home):
    cfg = load_config()
    assert cfg.source is None
    assert cfg.home == home
    assert cfg.libraries.work == home / "work"
    assert cfg.libraries.util == home / "util"
    assert cfg.session == SessionOptions()
    assert list(cfg.hosts) == ["node1", "node2", "node3", "node4"]
    assert all(h.slots is None and h.open for h in cfg.hosts.values())    # slots: the CPUs each worker sees
    assert cfg.queues["normal"].hosts == (HostPreference("all"),)


def test_home_defaults_to_cwd_statgrid_home(tmp_path, monkeypatch):
    monkeypatch.delenv("STATGRID_HOME", raising=False)
    monkeypatch.delenv("STATGRID_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    assert load_config().home == tmp_path / "statgrid-home"


def test_full_file(tmp_path, home, monkeypatch):
    monkeypatch.delenv("STATGRID_HOME")
    p = write(tmp_path, """
[libraries]
data = "/gpfs/sasdata"
work = "scratch/work"
[libname.sales]
path = "/srv/sales"
readonly = true
[session]
memsize = "1.5G"
threads = 1
bufsize = "512k"
sortsize = "1G"
compress = "no"
[master]
port = 9000
[hosts.a]
slots = 4
[hosts.b]
slots = 2
open = false
cpus = "0-2,5"
[hosts.c]
cpus = [1, 0]
[queues.high]
priority = 50
hosts = "a+1 others+2"
user_limit = 3
""")
    cfg = load_config(p)
    assert cfg.source == p
    assert cfg.home == tmp_path                       # the directory of grid.toml
    assert str(cfg.libraries.data) == "/gpfs/sasdata"
    assert cfg.libraries.work == tmp_path / "scratch/work"
    assert cfg.libnames["sales"].readonly is True
    assert cfg.session.memsize_bytes == int(1.5 * 2**30)
    assert cfg.session.threads == 1 and cfg.session.bufsize_bytes == 512 * 1024
    assert cfg.session.bufsize_rows == 65536          # 512 KiB of 8-byte numbers per column chunk
    assert (cfg.session.sortsize_bytes, cfg.session.compress) == (2**30, "no")
    assert cfg.master.port == 9000
    assert cfg.hosts["b"].open is False and cfg.hosts["a"].slots == 4
    assert cfg.hosts["a"].cpus == () and cfg.hosts["b"].cpus == (0, 1, 2, 5) and cfg.hosts["c"].cpus == (0, 1)
    q = cfg.queues["high"]
    assert (q.priority, q.user_limit) == (50, 3)
    assert q.hosts == (HostPreference("a", 1), HostPreference("others", 2))


@pytest.mark.parametrize("text, message", [
    ("[session]\nmemsize = '1M'\n",
     "session.memsize = '1M' is not allowed: expected at least 64M (the engine needs that much to run a step); "
     "use memsize=512M or more."),
    ("[session]\nmemsize = 'lots'\n",
     "session.memsize = 'lots' is not allowed: expected a size such as 512M, 2G or a number of bytes."),
    ("[session]\nthreads = -1\n", "session.threads = -1 is not allowed: expected a whole number ≥ 0."),
    ("[session]\nbufsize = 65536\n",
     "session.bufsize = 65536 is not allowed: expected a size in bytes with its unit, e.g. \"256k\" (bufsize is SAS's "
     "BUFSIZE in bytes now, not rows per row group; 65536 rows of 8-byte numbers is \"512K\": write bufsize = "
     "\"512K\", or \"256k\" as seed 004 advises)."),
    ("[session]\ncompress = 'rle'\n",
     "session.compress = 'rle' is not allowed: expected one of \"no\", \"yes\", \"char\", \"binary\" (SAS's "
     "COMPRESS=: YES/CHAR → snappy, BINARY → zstd, NO → uncompressed)."),
    ("[session]\nmemsiz = '2G'\n", "unknown key 'session.memsiz'; allowed in [session]: autoexec, bufsize, compress, memsize, "
                                   "sortsize, threads, utilsize."),
    ("[sesion]\n", "unknown key 'sesion'; allowed at the top level: grid, groups, hosts, libname, libraries, limits, master, "
                    "monitor, queues, scheduling, session."),
    ("[queues.q]\nfairshare = { alice = 0 }\n", "queues.q.fairshare = {'alice': 0} is not allowed: expected shares of at "
                                                 "least 1 (alice = 0: leave alice out instead)."),
    ("[queues.q]\nrunlimit = 'soon'\n", "queues.q.runlimit = 'soon' is not allowed: expected a duration like 30s, 500ms, "
                                         "5m or 1h, not 'soon'."),
    ("[hosts.n1]\nmemory = 'lots'\n", "hosts.n1.memory = 'lots' is not allowed: expected a size such as 512M, 2G "
                                       "or a number of bytes."),
    ("[groups]\nrisk = 'alice'\n", "groups.risk = 'alice' is not allowed: expected a list of names in quotes, e.g. "
                                    "[\"alice\", \"bob\"]."),
    ("[limits]\ngroups = { risk = 3 }\n", "limits.groups names 'risk', which is not a group of [groups] (none "
                                           "defined); define it there or remove the limit."),
    ("[groups]\na = ['x', 'y']\nb = ['y']\n[queues.q]\nfairshare = { a = 1, b = 1 }\n",
     "queues.q.fairshare names groups 'a' and 'b', which share the member(s) y: a user's jobs must count against one "
     "share; give them one group of the two."),
    ("[scheduling]\nhalf_life = 0\n", "scheduling.half_life = 0 is not allowed: expected a positive duration, not 0."),
    ("[hosts.n1]\nslots = 0\n", "hosts.n1.slots = 0 is not allowed: expected a whole number ≥ 1."),
    ("[hosts.n1]\ncpus = '3-1'\n", "hosts.n1.cpus = '3-1' is not allowed: expected a CPU list such as \"0-3,6\" "
                                    "or [0, 1]."),
    ("[master]\nport = 70000\n", "master.port = 70000 is not allowed: expected a TCP port 1–65535."),
    ("[hosts.n1]\n[queues.q]\nhosts = 'n2+1'\n",
     "queues.q.hosts: host 'n2' is not a configured host; known hosts: n1 (or 'all', 'others')."),
    ("[hosts.n1]\n[queues.q]\nhosts = 'n1+x'\n",
     "queues.q.hosts: 'n1+x' is not allowed: expected HOST or HOST+N (N a whole number), e.g. 'node1+1 others+2'."),
    ("[libname.work]\npath = '/x'\n", "library name 'work' is reserved; choose another name."),
    ("[libname.bad-name]\npath = '/x'\n", "library name 'bad-name' is not allowed"),
    ("[session\n", "not valid TOML"),
])
def test_bad_values_name_key_value_and_fix(tmp_path, home, text, message):
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert message in str(err.value)
    assert str(p) in str(err.value)


def test_missing_explicit_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml")


def test_config_found_via_env(tmp_path, monkeypatch):
    p = write(tmp_path, "[session]\nthreads = 1\n")
    monkeypatch.setenv("STATGRID_CONFIG", str(p))
    assert load_config().session.threads == 1


@pytest.mark.parametrize("raw, expected", [("2G", 2 * 2**30), ("512M", 512 * 2**20), ("1.5GiB", int(1.5 * 2**30)),
                                           ("4096", 4096), (4096, 4096), ("64k", 65536), ("1TB", 2**40)])
def test_sizes(raw, expected):
    assert parse_size_bytes(raw) == expected


def test_option_overrides():
    opts = SessionOptions().with_overrides(parse_option_pairs(["memsize=1G", "threads=1"]))
    assert (opts.memsize_bytes, opts.threads) == (2**30, 1)
    with pytest.raises(ConfigError, match=r"--option 'memsize' is not KEY=VALUE"):
        parse_option_pairs(["memsize"])
    with pytest.raises(ConfigError, match=r"--option: unknown key 'session.colour'"):
        SessionOptions().with_overrides({"colour": "red"})


def test_paths_statgrid_writes_into_grid_toml_mean_the_same_when_read_back(tmp_path, monkeypatch):
    # Issue 14 item 2: `bench mixed --out bundle` wrote home = "bundle/grid" into bundle/grid.toml,
    # which reads relative to the file: the grid went to bundle/bundle/grid, the report found no
    # monitor series. The writer now writes absolute paths, quoted as TOML wants.
    from pathlib import Path

    from statgrid.bench.mixed import grid_toml

    odd = tmp_path / 'odd "lib" \\ ü\x7f'
    # in TOML: a quote, a backslash, a non-ASCII letter and DEL (which TOML wants escaped)
    src = write(tmp_path, f'[libraries]\ndata = "d"\n[libname.odd]\npath = "{tmp_path}/odd \\"lib\\" \\\\ ü\\u007f"\n')
    cfg = load_config(src, {})
    assert cfg.libnames["odd"].path == odd
    cwd = tmp_path / "cwd"
    (cwd / "bundle").mkdir(parents=True)
    monkeypatch.chdir(cwd)
    text = grid_toml(cfg, Path("bundle") / "grid", 2, 2, 8642, "512M", 0)
    (cwd / "bundle" / "grid.toml").write_text(text)
    monkeypatch.chdir(tmp_path)                       # read back from elsewhere: same meaning
    back = load_config(cwd / "bundle" / "grid.toml", {})
    assert back.home == cwd / "bundle" / "grid"
    assert back.libraries == cfg.libraries and back.libraries.data == tmp_path / "d"
    assert back.libnames["odd"].path == odd
    assert sorted(back.hosts) == ["node1", "node2"] and back.session.memsize_bytes == 512 << 20


def test_toml_string_round_trips_every_character_toml_can_hold():
    """statgrid writes grid.toml itself (bench mixed, demo, bench scale): any path must read back as
    written. JSON's escapes were used and wrote 😀 as a surrogate pair, which TOML refuses."""
    import tomllib

    from statgrid.config import toml_string

    texts = ["/tmp/data 😀", 'q"\\uote', "tab\there\nnl\r\x00\x1f\x7f", "é ü 中文 \U0001f600\U0010ffff", ""]
    for text in texts:
        assert tomllib.loads(f"x = {toml_string(text)}\n")["x"] == text, text
    with pytest.raises(ConfigError, match=r"path '/tmp/caf\\udce9' is not valid UTF-8"):
        toml_string("/tmp/caf\udce9", "path")


def test_scheduling_sections(tmp_path):
    """[groups], [limits], [scheduling], a queue's fairshare and limits, a host's memory and load threshold."""
    path = tmp_path / "grid.toml"
    path.write_text("[hosts.n1]\nslots = 4\nmemory = '8G'\nmax_load = 3.5\n"
                    "[groups]\nrisk = ['alice', 'bob']\nmkt = ['carol']\n"
                    "[queues.normal]\nfairshare = { risk = 2, mkt = 1, default = 1 }\nrunlimit = '2h'\n"
                    "job_limit = 10\nhost_limit = 3\n"
                    "[limits]\nuser_jobs = 5\nusers = { alice = 8 }\ngroups = { risk = 6 }\n"
                    "[scheduling]\nhalf_life = '1h'\nmemory_margin = 0.2\n")
    cfg = load_config(path, {})
    q = cfg.queues["normal"]
    assert q.fairshare == (("risk", 2), ("mkt", 1), ("default", 1))
    assert (q.runlimit_s, q.job_limit, q.host_limit) == (7200.0, 10, 3)
    assert (cfg.hosts["n1"].memory_bytes, cfg.hosts["n1"].max_load) == (8 * 2**30, 3.5)
    assert cfg.groups == {"risk": ("alice", "bob"), "mkt": ("carol",)}
    assert cfg.groups_of("bob") == ("risk",) and cfg.groups_of("dave") == ()
    assert (cfg.limits.user_jobs, cfg.limits.users, cfg.limits.groups) == (5, (("alice", 8),), (("risk", 6),))
    assert (cfg.scheduling.half_life_s, cfg.scheduling.memory_margin) == (3600.0, 0.2)
    defaults = load_config(None, {"STATGRID_HOME": str(tmp_path / "h")})
    assert defaults.queues["normal"].fairshare == () and defaults.groups == {} and defaults.scheduling.half_life_s == 18000
