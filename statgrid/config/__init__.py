"""grid.toml → typed configuration, resolved once.

The package in parts: `units` (sizes, durations), `values` (one value's parser), `sections` (a
table → fields, and the messages), `records` (the typed records), `load` (finding and reading
grid.toml), `toml_text` (strings for the files statgrid writes). Import from `statgrid.config`.

Lookup order for the file: an explicit path, then ``$STATGRID_CONFIG``, then
``$STATGRID_HOME/grid.toml``, then ``./grid.toml``. With no file the defaults below make a
working grid whose home is ``$STATGRID_HOME`` or ``./statgrid-home``.

    [grid]
    home = "/srv/statgrid"          # job store, logs; default: the directory of grid.toml
    admins = ["gridadm"]            # grid administrators besides root: any job, hosts, grid down

    [libraries]                     # SASDATA / SASWORK / UTILLOC of the papers
    data = "/gpfs/sasdata"          # the permanent library `data`
    work = "/local/saswork"         # parent of each session's WORK directory
    util = "/local/utilloc"         # parent of each session's UTIL (spill) directory

    [libname.sales]                 # extra permanent libraries, like LIBNAME
    path = "/gpfs/sales"
    readonly = true

    [session]
    memsize = "2G"                  # engine memory cap (DuckDB memory_limit)
    threads = 0                     # engine threads; 0 = every CPU this process may use
    bufsize = "256k"                # SAS BUFSIZE: bytes of one data-set I/O request (a Parquet column
                                    # chunk of 8-byte numbers: bufsize/8 rows per row group; floor 16K)
    sortsize = "0"                  # SAS SORTSIZE: engine memory while a sort runs; "0" = memsize
    compress = "binary"             # SAS COMPRESS: "no" (uncompressed), "yes"/"char" (snappy), "binary" (zstd)
    utilsize = "0"                  # cap on UTIL spill bytes; 0 = engine default
    autoexec = ""                   # a SAS program run before every .sas job (SAS's AUTOEXEC); "" = none

    [master]
    port = 8642                     # the HTTPS/HTTP API for remote clients (tokens); local users
                                    # use the socket <home>/grid/master.sock (no secret needed)
    listen = "127.0.0.1"            # address of that port; beyond loopback only with api_tls
    api_tls = true                  # HTTPS with a certificate of the grid's CA; false only
                                    # with a loopback listen address
    names = ["grid1.example.com"]   # host names remote clients use, for the API's certificate
    engine_port = 8786              # the embedded engine's scheduler port, for nodes (default: any free one)
    fence_grace = "60s"             # a node that lost the master this long kills its jobs; the master
                                    # gives them to other hosts only after that
    scheduler = ""                  # address of an existing Dask scheduler; "" = embedded
    engine_tls = true               # mutual TLS with the grid's own CA between master, scheduler and
                                    # workers; false only for benchmarks and trusted single-user machines

    [hosts.node1]
    slots = 2                       # jobs at once (LSF MXJ); default: the CPUs the host's worker
                                    # sees (its cpus, or all this machine lets it use)
    open = true
    joins = false                   # true: a machine of its own, joined with `statgrid node up`
    memory = "64G"                  # memory jobs may reserve here; "0" = not tracked (default)
    max_load = 0                    # 1-minute load average (from the monitor) over which the host
                                    # takes no new jobs and shows busy; 0 = no threshold (LSF r1m)

    [queues.normal]
    priority = 30
    hosts = "node1+1 others+2"      # LSF lsb.queues HOSTS syntax
    user_limit = 0                  # running jobs per user in this queue; 0 = no limit (UJOB_LIMIT)
    job_limit = 0                   # running jobs of the whole queue; 0 = no limit (QJOB_LIMIT)
    host_limit = 0                  # running jobs of this queue per host; 0 = no limit (HJOB_LIMIT)
    runlimit = "0"                  # wall time after which a job is killed (EXIT); "0" = none (RUNLIMIT)
    fairshare = { risk = 40, marketing = 60, default = 1 }
                                    # shares of users and [groups] (LSF USER_SHARES); "default": every
                                    # user not named; no fairshare = first come, first served

    [queues.interactive]            # notebook kernels (statgrid kernels install) go here when it exists
    user_limit = 2                  # sessions (kernels) per user running at once; more wait (PEND)
    idle_timeout = "2h"             # a kernel that ran no cell this long is ended, after a warning; "0" = never
    runlimit = "12h"                # a session's longest life
    kernel_ports = "40000..40999"   # the TCP ports kernels bind on their node: open them from client hosts

    [groups]                        # user groups, for shares and limits
    risk = ["alice", "bob"]

    [limits]                        # running jobs over all queues (LSF lsb.users MAX_JOBS)
    user_jobs = 0                   # of any one user; 0 = no limit
    users = { alice = 40 }          # a user's own limit instead of user_jobs
    groups = { risk = 12 }          # of a group's members together

    [scheduling]
    half_life = "5h"                # fairshare usage decays by half over this time (LSF HIST_HOURS)
    memory_margin = 0.1             # a session job reserves its memsize plus this fraction plus 128M for its engine
    run_job_factor = 3.0            # weight of running jobs in the fairshare priority (LSF RUN_JOB_FACTOR)
    run_time_factor = 0.7           # weight of decayed usage, per slot-hour (LSF RUN_TIME_FACTOR)

    [monitor]                       # runs beside every grid worker while the grid is up
    enabled = true
    interval = "1s"
"""
from __future__ import annotations

from statgrid.config.load import (RESERVED_LIBRARY_NAMES, find_config_file, load_config, parse_host_preferences,
                                  parse_option_pairs)
from statgrid.config.records import (Config, HostConfig, HostPreference, LibraryRoots, Libname, LimitsConfig,
                                     MasterConfig, MonitorConfig, QueueConfig, SchedulingConfig, SessionOptions)
from statgrid.config.sections import NAME_RE
from statgrid.config.toml_text import toml_string
from statgrid.config.units import KIB, format_size, parse_duration_s, parse_limit_s, parse_size_bytes
from statgrid.config.values import (CPU_NUMBERS_MAX, DEFAULT_ROW_GROUP_ROWS, FENCE_GRACE_MIN_S, MIN_MEMSIZE_BYTES,
                                    SLOTS_MAX, is_loopback, parse_cpus)
from statgrid.errors import ConfigError

__all__ = ["CPU_NUMBERS_MAX", "DEFAULT_ROW_GROUP_ROWS", "FENCE_GRACE_MIN_S", "KIB", "MIN_MEMSIZE_BYTES", "NAME_RE",
           "RESERVED_LIBRARY_NAMES", "SLOTS_MAX", "Config", "ConfigError", "HostConfig", "HostPreference",
           "LibraryRoots", "Libname", "LimitsConfig", "MasterConfig", "MonitorConfig", "QueueConfig",
           "SchedulingConfig", "SessionOptions", "find_config_file", "format_size", "is_loopback", "load_config",
           "parse_cpus", "parse_duration_s", "parse_host_preferences", "parse_limit_s", "parse_option_pairs",
           "parse_size_bytes", "toml_string"]
