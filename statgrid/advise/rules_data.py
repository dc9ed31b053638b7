"""The rules of `statgrid advise`, one record each (statgrid.advise.rules.Rule): what is checked, on what
(scope), the condition (in rules.py's expression language), the severity, the advice and how to apply it,
the effect the source reports, and the source — a seed paper (../shared/seeds/: 000 = SAS 9.3 grid on
Power 780 + XIV + GPFS, 002 = SAS on Spectrum Scale + FlashSystem A9000R, 003 = SAS 9.4 on Power10 +
FlashSystem 9200, 004 = Humana's SAS grid) and its section, or a public document.

What the names mean (evidence.py builds them; units in the names):
  grid.*     the grid's shape: machines, cores, threads, slots_total, master_runs_jobs, master_weighted_down,
             dispatch_interval_s
  session.*  the session options jobs run with (memsize_bytes, bufsize_bytes, …)
  DATA.* WORK.* UTIL.*   that library's record (fs_type, mount_point, rotational, …; UTIL only when apart)
  site.*     facts of the site no machine can read, given with `--set` (stripe_bytes, required_mb_s,
             storage_mb_s)
  node.*     a machine's inventory (threads, cores, thp, governor, swappiness, dirty_ratio, …);
  machine.*  its grid hosts: slots (summed), hosts
  lib.*      a library mount's record (fs_type, block_bytes, readahead_kb, scheduler, nr_requests,
             max_sectors_kb, rotational, has_device, gpfs.*, nfs.*), libraries sharing a mount checked once
  run.*      the run's figures (report.tables.summary_figures + PSI means): mb_s_per_core, mb_s_peak_per_machine,
             cpu_busy_pct, cpu_wait_pct, psi_*_pct, host_real_mean, hosts; and (ownio.py) io_mb_s_per_core with
             io_figure (the jobs' own I/O where their records have it, else the devices' machine-wide figure),
             jobs_mb_s_per_core, devices_mb_s_per_core, jobs_io_share_pct, pressure_figure
  host.*     a grid host's jobs: jobs, real_s (summed STIMER real), cpu_real_mean, slots, share_real_s (its
             slots' share of every host's real_s; the grid's open hosts with slots, jobs or not)
  job.*      a job: cpu_real, wall_s, own_io_bytes, own_io_mb_s, own_io (its own read + write bytes), and over its run
             on its machine (machine-wide): node_cpu_busy_pct, node_iowait_pct, psi_cpu_some_pct,
             psi_io_some_pct, psi_memory_some_pct, dev_util_pct, node_dev_mb_s; major_faults_per_s
"""
from __future__ import annotations

from statgrid.advise.rules import Rule

# A job whose CPU/real is below this waited for something (002: "If the ratio is less than 1, the CPU is
# spending time waiting on resources (usually IO)"; threaded steps push healthy jobs above 1, so 0.7
# leaves room for start-up). What it waited for is what the job rules below decide, from the evidence.
WAITED_BELOW = 0.7
CPU_BUSY_PCT = 90          # the node's CPUs busy (user + sys) over the job's run: no CPU to spare
PSI_CPU_PCT = 50           # some task waited for a CPU half of the time (psi.rst: cpu "some")
IOWAIT_PCT = 10            # 000 Table 3: the I/O-bound 40-session run showed 10 % wait
PSI_IO_PCT = 20            # some task stalled on I/O a fifth of the time (reads when iowait does not: async I/O)
DEV_UTIL_PCT = 90          # the busiest device busy nearly all the time
PSI_MEM_PCT = 10           # some task stalled on memory (reclaim, swap-in, thrashing) a tenth of the time
MAJOR_FAULTS_PER_S = 100   # pages read back from disk per second of the job
IMBALANCE = 0.25           # a host's summed real time this far from the hosts' mean

_WAITED = f"job.cpu_real < {WAITED_BELOW}"
_CPU_SHORT = f"job.node_cpu_busy_pct >= {CPU_BUSY_PCT} or job.psi_cpu_some_pct >= {PSI_CPU_PCT}"
# The node's I/O figures are machine-wide (a shared disk's other I/O counts in them): a job that read and wrote
# nothing itself (its own read_bytes + write_bytes, where its record has them) was not the one short of I/O.
_IO_SHORT = (f"(job.node_iowait_pct >= {IOWAIT_PCT} or job.psi_io_some_pct >= {PSI_IO_PCT} "
             f"or job.dev_util_pct >= {DEV_UTIL_PCT}) and first(job.own_io_bytes, 1) > 0")
_MEM_SHORT = f"job.psi_memory_some_pct >= {PSI_MEM_PCT} or job.major_faults_per_s >= {MAJOR_FAULTS_PER_S}"
_PSI_DOC = "Linux kernel, Documentation/accounting/psi.rst (pressure stall information)"

RULES: tuple[Rule, ...] = (
    # -- the grid and its scheduler ---------------------------------------------------------------
    Rule("grid.dispatch_interval", "jobs dispatched without a polling delay", "grid",
         "grid.dispatch_interval_s <= 2", "≤ 2 s (LSF MBD_SLEEP_TIME = 2)", "warning",
         "Dispatch as soon as a slot frees: a long scheduling cycle leaves slots idle between jobs.",
         "statgrid dispatches on events (a freed slot is refilled at once, interval 0). On LSF: lsb.params "
         "MBD_SLEEP_TIME = 2, SBD_SLEEP_TIME = 1, MBD_REFRESH_TIME = 15, NEWJOB_REFRESH = Y; badmin reconfig.",
         "7 % to 15 % better workload performance in the benchmark.",
         "seed 000, 'Platform LSF configuration' (lsb.params)"),
    Rule("grid.master_host", "the master's machine weighted down or kept free of jobs", "grid",
         "not grid.master_runs_jobs or grid.master_weighted_down", "no jobs on the master's machine, or its hosts "
         "preferred last", "info",
         "The machine running the master (and the file system's manager) carries extra load: give its hosts a "
         "lower queue preference than the others, or run no jobs there.",
         "grid.toml: [queues.normal] hosts = \"<master host>+1 others+2\" (LSF lsb.queues HOSTS), or "
         "[hosts.<master host>] open = false.",
         "None measured; 000 weights Grid Node 1 down because it is also Grid Control Server and GPFS cluster "
         "manager, and recommends running no workload on the Grid Control Server.",
         "seed 000, 'Platform LSF configuration' (lsb.queues HOSTS = p7_gridn1+1 others+2)",
         applies="grid.machines > 1"),
    Rule("grid.slots_vs_cpus", "job slots against the machine's CPUs (LSF MXJ)", "machine",
         "machine.slots <= node.threads", "slots ≤ logical CPUs (LSF's default MXJ = ncpus)", "info",
         "{machine.slots} slots on {node.threads} logical CPUs: more jobs than CPUs pays only when jobs wait "
         "for I/O; when the run shows jobs short of CPU (job.short_of_cpu), lower the slots to the CPUs.",
         "grid.toml: [hosts.<name>] slots = N (LSF lsb.hosts MXJ); leave slots unset for one per CPU.",
         "000 ran 32 slots per node on 3–5 POWER7 cores with SMT4 (12–20 logical CPUs), found it optimal for "
         "its I/O-heavy workload, and still recommends the default (slots = CPUs) unless the workload needs more.",
         "seed 000, 'Platform LSF configuration' (lsb.hosts MXJ)"),
    # -- storage layout ---------------------------------------------------------------------------
    Rule("storage.work_fast", "WORK on fast storage (flash or memory)", "grid",
         "WORK.fs_type == 'tmpfs' or WORK.rotational == 0", "WORK on non-rotational storage or tmpfs", "warning",
         "WORK gets most of a SAS workload's I/O (temporary files created, rewritten and deleted many times): put "
         "it on the fastest storage, the permanent data may stay on disk.",
         "grid.toml: [libraries] work = \"/flash/saswork\" (and util); a dedicated flash file system or array.",
         "004's SAS 9.4 grid put SASWORK and SASUTIL on Pure flash arrays and sustained > 30 GB/s (peaks "
         "> 75 GB/s) in SAS's benchmark, with 39 % of its CPUs at 75 GB/s.",
         "seed 004, 'Introduction' and 'Hardware migration' item 2 (Filesystem Layout); seed 000, 'SAS I/O "
         "characteristics' (SASWORK gets the majority of the I/O)"),
    Rule("storage.util_fast", "UTIL on fast storage (flash or memory)", "grid",
         "UTIL.fs_type == 'tmpfs' or UTIL.rotational == 0", "UTIL on non-rotational storage or tmpfs", "warning",
         "UTIL holds the sorts' and procedures' spill files: put it with WORK on the fastest storage.",
         "grid.toml: [libraries] util = \"/flash/sasutil\".",
         "As storage.work_fast: 004 moved SASWORK and SASUTIL together onto flash.",
         "seed 004, 'Hardware migration' item 2 (Filesystem Layout)",
         applies="UTIL.mount_point != WORK.mount_point"),
    Rule("storage.work_apart", "WORK on a file system of its own, apart from DATA", "grid",
         "WORK.mount_point != DATA.mount_point", "WORK and DATA on different file systems", "info",
         "WORK and DATA share {WORK.mount_point}: their mixed streams hide each one's sequential pattern from the "
         "storage's prefetch. Give WORK (and UTIL) a file system of their own.",
         "grid.toml: [libraries] work = / util = paths on their own file system (mkfs on separate LUNs or arrays).",
         "In 004's first grid, one file system for everything kept the DS8870 from recognising sequential "
         "requests (poor prefetch, high cache-miss rate); the new grid split SASWORK/SASUTIL out.",
         "seed 004, 'Hardware migration' item 2 (Filesystem Layout)"),
    # -- session options --------------------------------------------------------------------------
    Rule("session.bufsize", "BUFSIZE large enough for sequential I/O", "grid",
         "session.bufsize_bytes >= 256 * KiB", "≥ 256 KiB", "warning",
         "BUFSIZE {session.bufsize_bytes} sets the size of a session's reads and writes: small requests raise "
         "IOPS and the CPU spent per MB.",
         "grid.toml: [session] bufsize = \"256k\" (or -o bufsize=256k on a run). 002 used 64 KiB only to match "
         "a 64 KiB volume stripe.",
         "004: SAS's default left requests at 8 KiB; 256 KiB reduced the IOPS and improved the CPU-to-I/O ratio "
         "(000 and 003 also ran BUFSIZE 256 KiB).",
         "seed 004, 'SAS software review' (bufsize 8K → 256K); seed 000, 'SAS configuration'; seed 003, 'IBM "
         "Spectrum Scale shared file system'"),
    # -- throughput per core ----------------------------------------------------------------------
    Rule("sizing.mb_s_per_core", "sustained MB/s per core of the run", "grid",
         "run.io_mb_s_per_core >= 90", "≥ 90 MB/s per core (000: 90–100; SAS: 100–150)", "info",
         "The run moved {run.io_mb_s_per_core:.1f} MB/s per core ({run.io_figure}; the machine's devices: "
         "{run.devices_mb_s_per_core:.1f} MB/s per core) with the CPUs {run.cpu_busy_pct:.0f} % busy and "
         "{run.cpu_wait_pct:.0f} % waiting. With the CPUs saturated the workload, not the storage, set this rate "
         "(see run.short_of_cpu); with jobs short of I/O the storage cannot give the seeds' rate.",
         "Measure what the storage can give with `statgrid iobench` on each library, and size it at 100–150 "
         "MB/s per core (`statgrid advise --set storage_mb_s=N` checks it).",
         "000's 40-session run sustained about 90 MB/s per core (1300 MB/s on 14 cores), the 80-session run "
         "over 100; 004 sized its grid at 100 MB/s per core.",
         "seed 000, '40 session benchmark results summary' and '80 session benchmark'; seed 004, 'SAS software "
         "review'",
         shows=("run.io_mb_s_per_core", "run.io_figure", "run.devices_mb_s_per_core")),
    Rule("sizing.storage_per_core", "storage throughput per core", "grid",
         "site.storage_mb_s / grid.cores >= 100", "≥ 100 MB/s per core (SAS: 100–150)", "warning",
         "The storage gives {site.storage_mb_s} MB/s to {grid.cores} cores: below SAS's guidance the CPUs will "
         "wait for I/O under a SAS workload.",
         "Add storage bandwidth (arrays, FC/NVMe paths, file-system servers) or run fewer cores per MB/s.",
         "004 targeted 100 MB/s per core and after the redesign reached 7.5 GB/s on 48 cores (156 MB/s per core).",
         "SAS Institute, M. Crevar, 'How To Maintain Happy SAS 9 Users' (SAS1480-2015), cited by seed 004; "
         "seed 004, 'SAS software review' (100 MB/s per core target)"),
    # -- the run's own evidence, the grid as a whole ------------------------------------------------
    Rule("run.short_of_cpu", "the grid's CPUs had room", "grid",
         f"run.cpu_busy_pct < {CPU_BUSY_PCT}", f"< {CPU_BUSY_PCT} % busy (user + sys)", "warning",
         "The grid's CPUs were {run.cpu_busy_pct:.1f} % busy (CPU pressure {run.psi_cpu_some_pct:.0f} %): jobs "
         "queued for CPUs, so their CPU/real fell for want of CPU (run.short_of_io says whether they waited for "
         "I/O as well).",
         "Fewer slots per CPU (grid.slots_vs_cpus), more or faster cores, or fewer concurrent sessions.",
         "000's tuned 40-session run kept the CPUs 45 % busy with 10 % wait; 003 added nodes once CPU use "
         "approached 75 %.",
         f"seed 000, Table 3 (processor user+sys / wait / idle); seed 003, 'Single node 30-session'; {_PSI_DOC}"),
    Rule("run.short_of_io", "the grid seldom waited for I/O", "grid",
         f"run.cpu_wait_pct < {IOWAIT_PCT} and first(run.psi_io_some_pct, 0) < {PSI_IO_PCT}",
         f"I/O wait < {IOWAIT_PCT} % and I/O pressure < {PSI_IO_PCT} %", "warning",
         "The CPUs waited for I/O {run.cpu_wait_pct:.1f} % of the time (I/O pressure {run.psi_io_some_pct:.0f} %; "
         "{run.pressure_figure}; the jobs' own bytes were {run.jobs_io_share_pct:.0f} % of the devices'): the "
         "storage did not keep up — with the jobs' share small, for other processes' I/O as much as the jobs'.",
         "Check the library rules (readahead, queue depth, transfer size, WORK on flash) and the storage's MB/s "
         "per core with `statgrid iobench`.",
         "000's 40-session run: 10 % wait with 45 % idle — the storage, not the CPUs, set its pace.",
         f"seed 000, Table 3; {_PSI_DOC} (iowait reads 0 under asynchronous I/O: PSI is read beside it)",
         shows=("run.cpu_wait_pct", "run.psi_io_some_pct", "run.pressure_figure", "run.jobs_io_share_pct")),
    Rule("run.short_of_memory", "the grid seldom stalled on memory", "grid",
         f"run.psi_memory_some_pct < {PSI_MEM_PCT}", f"memory pressure < {PSI_MEM_PCT} %", "warning",
         "Tasks stalled on memory {run.psi_memory_some_pct:.0f} % of the time (reclaim, swap-in, page cache "
         "thrashing).",
         "Lower MEMSIZE × slots below the machine's memory (grid.toml [session] memsize, [hosts.x] memory), or add "
         "memory.",
         "004's single SAS image lost 4–8 cores to AIX's page-stealing daemon (LRUD) under sequential I/O.",
         f"seed 004, 'Hardware review' (LRUD); {_PSI_DOC}"),
    # -- a machine's tuning -----------------------------------------------------------------------
    Rule("node.thp", "transparent huge pages not forced on", "machine",
         "node.thp != 'always'", "never (or madvise)", "info",
         "THP is '{node.thp}': compaction and khugepaged stalls hit large-memory sessions.",
         "echo never > /sys/kernel/mm/transparent_hugepage/enabled (tuned: [vm] transparent_huge_pages=never).",
         "Part of the sas-performance profile behind 002's results; on AIX 000 found large pages "
         "(vmm_mpsize_support=2) helped SAS — on Linux, SAS and Red Hat's profile turns THP off.",
         "seed 002, Appendix I (tuned sas-performance); seed 000, 'AIX 7.1' (large pages)"),
    Rule("node.governor", "CPU frequency governor 'performance'", "machine",
         "node.governor == 'performance'", "performance", "info",
         "The governor is '{node.governor}': cores clock down between bursts of I/O.",
         "cpupower frequency-set -g performance (tuned: [cpu] governor=performance).",
         "Part of the sas-performance profile behind 002's results.",
         "seed 002, Appendix I (tuned sas-performance [cpu])"),
    Rule("node.swappiness", "vm.swappiness low", "machine",
         "node.swappiness <= 10", "≤ 10", "info",
         "vm.swappiness {node.swappiness}: the kernel swaps session memory out to keep page cache.",
         "sysctl -w vm.swappiness=10 (persist in /etc/sysctl.d/).",
         "Part of the sas-performance profile behind 002's results.",
         "seed 002, Appendix I (tuned sas-performance [sysctl])"),
    Rule("node.dirty_ratio", "dirty page limits for large sequential writes", "machine",
         "node.dirty_ratio >= 40 and node.dirty_background_ratio <= 10", "dirty_ratio ≥ 40, dirty_background_ratio "
         "≤ 10", "info",
         "vm.dirty_ratio {node.dirty_ratio}, vm.dirty_background_ratio {node.dirty_background_ratio}: writers are "
         "throttled early, or write-back starts late.",
         "sysctl -w vm.dirty_ratio=40 vm.dirty_background_ratio=10.",
         "Part of the sas-performance profile behind 002's results.",
         "seed 002, Appendix I (tuned sas-performance [sysctl])"),
    # -- a library's file system ------------------------------------------------------------------
    Rule("gpfs.pagepool", "GPFS pagepool at least 4 GB", "library",
         "lib.gpfs.pagepool_bytes >= 4 * GiB", "≥ 4 GiB", "warning",
         "The pagepool (GPFS's pinned cache for data and metadata, and its prefetch buffers) is "
         "{lib.gpfs.pagepool_bytes}.",
         "mmchconfig pagepool=8G -i (or -N <nodes>); leave the sessions' MEMSIZE × slots beside it.",
         "000: at least 4 GB gave better performance, 8 GB with seqDiscardThreshold=1G and prefetchPct=40 slightly "
         "better; 002/003 ran 64–128 GB, 004 64 GB and then 256 GB per node.",
         "seed 000, 'GPFS' (pagepool); seed 002, 'IBM Spectrum Scale 4.2.1 Test Specific Tuning'",
         applies="lib.fs_type == 'gpfs'"),
    Rule("gpfs.blocksize_stripe", "GPFS block size a whole multiple of the storage stripe", "library",
         "lib.gpfs.blocksize_bytes % site.stripe_bytes == 0", "block size = k × stripe", "warning",
         "Block size {lib.gpfs.blocksize_bytes} against a stripe of {site.stripe_bytes}: a block that straddles "
         "stripes costs the array extra reads and writes.",
         "The block size is fixed at mmcrfs -B (e.g. -B 1M on a 1 MB stripe); a new file system is needed.",
         "000: the XIV's 1 MB stripe and a 1 MB GPFS block size gave better performance.",
         "seed 000, 'XIV Storage System' and 'GPFS' (Block size)",
         applies="lib.fs_type == 'gpfs'"),
    Rule("fs.blocksize_bufsize", "file-system block size aligned with BUFSIZE", "library",
         "first(lib.gpfs.blocksize_bytes, lib.block_bytes) % session.bufsize_bytes == 0 or "
         "session.bufsize_bytes % first(lib.gpfs.blocksize_bytes, lib.block_bytes) == 0",
         "one a whole multiple of the other", "warning",
         "A BUFSIZE that does not divide the file system's block (or a whole number of blocks) makes the file "
         "system split or merge every request.",
         "grid.toml: [session] bufsize = a divisor of the block size (256k on a 1M or 4M GPFS block).",
         "004: aligning the block size with BUFSIZE avoids the CPU and extra I/O operations of the mismatch; 002 "
         "striped at 64 KiB for BUFSIZE 64K, 003 ran BUFSIZE 256K on 4 MB blocks.",
         "seed 004, 'Conclusion'; seed 002, 'Test Hosts Configuration' and 'Host Tuning'; seed 003",
         shows=("lib.gpfs.blocksize_bytes", "lib.block_bytes", "session.bufsize_bytes")),
    Rule("gpfs.maxmbps", "GPFS maxMBpS twice the throughput a node needs", "library",
         "lib.gpfs.maxMBpS >= 2 * first(site.required_mb_s, run.mb_s_peak_per_machine)",
         "≥ 2 × the node's required MB/s", "warning",
         "maxMBpS {lib.gpfs.maxMBpS} caps GPFS's prefetch and write-behind per node below twice the throughput "
         "the node needs.",
         "mmchconfig maxMBpS=<2 × MB/s needed> (per node, -N); e.g. two 4 Gb HBAs (400 MB/s each) → 1600.",
         "000's rule of thumb (it ran maxMBpS=5000); 003's tests ran 10000.",
         "seed 000, 'GPFS' (maxMBpS); seed 004, 'Conclusion'",
         applies="lib.fs_type == 'gpfs'",
         shows=("lib.gpfs.maxMBpS", "site.required_mb_s", "run.mb_s_peak_per_machine")),
    Rule("gpfs.maxmbps_storage", "GPFS maxMBpS of all nodes within twice the storage", "library",
         "lib.gpfs.maxMBpS * grid.machines <= 2 * site.storage_mb_s", "Σ maxMBpS ≤ 2 × storage MB/s", "info",
         "{grid.machines} nodes × maxMBpS {lib.gpfs.maxMBpS} can ask more of the storage than twice what it can "
         "give ({site.storage_mb_s} MB/s): GPFS's throttle no longer protects the back end.",
         "mmchconfig maxMBpS=<2 × storage MB/s ÷ nodes> -N <nodes>.",
         "004: maxMBpS is a per-node throttle so GPFS does not overrun the back-end storage.",
         "seed 004, 'Conclusion' (GPFS maxMbps)",
         applies="lib.fs_type == 'gpfs'"),
    Rule("gpfs.prefetchpct", "GPFS prefetchPct raised for sequential streams", "library",
         "lib.gpfs.prefetchPct >= 40", "≥ 40", "info",
         "prefetchPct {lib.gpfs.prefetchPct} limits the pagepool share for prefetch and write-behind of "
         "sequential streams, which SAS's I/O mostly is.",
         "mmchconfig prefetchPct=40.",
         "000: 40 might help sequential SAS I/O (with pagepool 8 GB and seqDiscardThreshold 1 GB slightly better); "
         "002 ran prefetchPct=40.",
         "seed 000, 'GPFS' (prefetchPct); seed 002, 'IBM Spectrum Scale 4.2.1 Test Specific Tuning'",
         applies="lib.fs_type == 'gpfs'"),
    Rule("gpfs.seqdiscard", "GPFS keeps re-read sequential files cached", "library",
         "lib.gpfs.seqDiscardThreshold_bytes >= 1 * GiB", "≥ 1 GiB (the size of files read again)", "info",
         "seqDiscardThreshold {lib.gpfs.seqDiscardThreshold_bytes}: a file read sequentially and larger than this "
         "is not kept in the pagepool, yet SAS jobs read the same files again.",
         "mmchconfig seqDiscardThreshold=1G (raise toward the size of the input files).",
         "000: with seqDiscardThreshold=1GB, pagepool=8GB and prefetchPct=40, slightly better performance.",
         "seed 000, 'GPFS' (seqDiscardThreshold)",
         applies="lib.fs_type == 'gpfs'"),
    Rule("gpfs.scatterbuffers", "GPFS scatterBuffers off for large sequential I/O", "library",
         "lib.gpfs.scatterBuffers in ('no', 'No', False, 0)", "no", "warning",
         "scatterBuffers cuts each large block into 16–32 KiB pieces: IOPS multiply and job throughput falls.",
         "mmchconfig scatterBuffers=no.",
         "004: with scatterBuffers=no the IOPS fell by a factor of four and core use dropped dramatically.",
         "seed 004, 'Hardware review' (fix 1) and 'Conclusion'",
         applies="lib.fs_type == 'gpfs'"),
    # -- a library's block device -----------------------------------------------------------------
    Rule("dev.readahead", "readahead for large sequential reads", "library",
         "lib.readahead_kb >= 8192", "≥ 8192 KiB", "info",
         "Readahead {lib.readahead_kb} KiB on {lib.devices}: sequential reads arrive in small pieces.",
         "blockdev --setra 16384 /dev/<device> (16384 sectors = 8 MiB), or echo 8192 > "
         "/sys/block/<device>/queue/read_ahead_kb; persist in a udev rule or tuned script.",
         "Part of the sas-performance profile behind 002's results (blockdev --setra 16384 on the file systems' "
         "devices, read_ahead_kb 16384 on the array's paths).",
         "seed 002, Appendix I (script.sh)",
         applies="lib.has_device"),
    Rule("dev.scheduler", "no I/O scheduler reordering on flash", "library",
         "lib.scheduler in ('none', 'noop')", "none (noop)", "info",
         "Scheduler '{lib.scheduler}' on non-rotational {lib.devices}: reordering buys flash nothing and costs "
         "CPU per request.",
         "echo none > /sys/block/<device>/queue/scheduler (udev rule to persist).",
         "Part of the sas-performance profile behind 002's results (noop on the flash array's paths).",
         "seed 002, Appendix I (script.sh) and 'Host Tuning' (IO elevator tuning); Linux kernel, "
         "Documentation/block/switching-sched.rst",
         applies="lib.has_device and lib.rotational == 0"),
    Rule("dev.nr_requests", "request queue deep enough (queue depth)", "library",
         "lib.nr_requests >= 256", "≥ 256", "info",
         "nr_requests {lib.nr_requests} on {lib.devices}: too few requests in flight for an array of many disks.",
         "echo 256 > /sys/block/<device>/queue/nr_requests; the HBA's LUN queue depth too (e.g. lpfc "
         "lpfc_lun_queue_depth=512).",
         "000 set queue_depth=256 on every hdisk, 002 lpfc_lun_queue_depth=512, as part of their tuned stacks.",
         "seed 000, 'Logical disks' (Queue_depth = 256); seed 002, Appendix I (lpfc.conf)",
         applies="lib.has_device"),
    Rule("dev.max_sectors_kb", "transfer size large enough for whole blocks", "library",
         "lib.max_sectors_kb * KiB >= max(1 * MiB, first(lib.gpfs.blocksize_bytes, 0), "
         "first(session.bufsize_bytes, 0))", "≥ 1 MiB and ≥ the block size and BUFSIZE", "info",
         "max_sectors_kb {lib.max_sectors_kb} on {lib.devices}: the kernel splits larger requests.",
         "echo 1024 > /sys/block/<device>/queue/max_sectors_kb (up to max_hw_sectors_kb).",
         "000 raised the HBA's max_xfer_size and the hdisks' max_transfer to 0x800000 (8 MiB); most of its "
         "workload's I/O was 512 KB and above (Figure 4).",
         "seed 000, 'FC HBAs' and 'Logical disks'",
         applies="lib.has_device",
         shows=("lib.max_sectors_kb", "lib.gpfs.blocksize_bytes", "session.bufsize_bytes")),
    # -- the run's own evidence, per grid host and per job -----------------------------------------------
    Rule("host.imbalance", "work spread evenly over the grid's hosts", "host",
         f"abs(host.real_s - host.share_real_s) <= {IMBALANCE} * host.share_real_s",
         f"summed real time within ±{IMBALANCE:.0%} of the host's share (the hosts' total split by their slots; "
         "every open host with slots counts, a host that ran no job too)", "info",
         "Some hosts did much more or less of the work than their slots' share, or none at all: check slots, "
         "host preferences and closed hosts, or one slow node; with fewer concurrent jobs than hosts, some stay "
         "idle by design.",
         "grid.toml: [hosts.x] slots, [queues.x] hosts; `statgrid hosts` for closed hosts.",
         "002's four nodes ran the same work within 2 % of each other (631–644 min, Table 4).",
         "seed 002, Table 4 (per-node FULLSTIMER aggregates); seed 000, Figure 8 (per-node throughput)",
         applies="run.hosts > 1",
         label="summed real time {host.real_s:.0f} s against its share of {host.share_real_s:.0f} s "
               "({host.jobs} jobs)"),
    Rule("job.short_of_cpu", "a job that waited, for want of CPU", "job",
         f"not ({_CPU_SHORT})", f"the node's CPUs < {CPU_BUSY_PCT} % busy and CPU pressure < {PSI_CPU_PCT} % "
         f"while a job with CPU/real < {WAITED_BELOW} ran", "warning",
         "These jobs waited while their node's CPUs were busy: they were short of CPU (job.short_of_io says "
         "whether they also waited for I/O).",
         "Fewer slots per CPU (grid.slots_vs_cpus) or more cores; CPU-bound templates do not test the storage.",
         "002 reads CPU/real below 1 as time spent waiting on resources; here the waiting coincides with "
         "saturated CPUs.",
         f"seed 002, 'Single Node Spectrum Scale 4.2.1 Results' (CPU/real ratio); {_PSI_DOC}",
         applies=_WAITED, shows=("job.cpu_real", "job.node_cpu_busy_pct", "job.psi_cpu_some_pct"),
         label="short of CPU (the node's CPUs were busy {job.node_cpu_busy_pct:.1f} %; CPU/real "
               "{job.cpu_real:.2f})"),
    Rule("job.short_of_io", "a job that waited, for I/O", "job",
         f"not ({_IO_SHORT})", f"I/O wait < {IOWAIT_PCT} %, I/O pressure < {PSI_IO_PCT} %, busiest device "
         f"< {DEV_UTIL_PCT} % while a job with CPU/real < {WAITED_BELOW} ran", "warning",
         "These jobs waited while their node waited for I/O: they were short of I/O.",
         "See the library rules (readahead, queue depth, transfer size, WORK on flash) and `statgrid iobench`.",
         "000's tuned 40-session run still showed 10 % I/O wait; 003's flash kept CPU/real above 1.",
         f"seed 002, 'Single Node Spectrum Scale 4.2.1 Results' (CPU/real below 1: waiting, usually on I/O); "
         f"seed 000, Table 3; {_PSI_DOC}",
         applies=_WAITED, shows=("job.cpu_real", "job.node_iowait_pct", "job.psi_io_some_pct", "job.dev_util_pct",
                                 "job.own_io", "job.node_dev_mb_s"),
         label="short of I/O (its machine, all processes: I/O wait {job.node_iowait_pct:.1f} %, I/O pressure "
               "{job.psi_io_some_pct:.0f} %, busiest device {job.dev_util_pct:.0f} % busy, devices "
               "{job.node_dev_mb_s:.1f} MB/s; the job's own reads and writes {job.own_io}; CPU/real "
               "{job.cpu_real:.2f})"),
    Rule("job.short_of_memory", "a job that waited, for memory", "job",
         f"not ({_MEM_SHORT})", f"memory pressure < {PSI_MEM_PCT} % and < {MAJOR_FAULTS_PER_S} major faults/s "
         f"while a job with CPU/real < {WAITED_BELOW} ran", "warning",
         "These jobs waited while their node stalled on memory, or read their own pages back from disk.",
         "Lower MEMSIZE × slots below the node's memory ([session] memsize, [hosts.x] memory) or add memory.",
         "004's single SAS image lost 4–8 cores to page stealing (LRUD) under sequential I/O.",
         f"seed 004, 'Hardware review'; {_PSI_DOC}",
         applies=_WAITED, shows=("job.cpu_real", "job.psi_memory_some_pct", "job.major_faults_per_s"),
         label="short of memory (memory pressure {job.psi_memory_some_pct:.0f} %, {job.major_faults_per_s:.0f} "
               "major faults/s; CPU/real {job.cpu_real:.2f})"),
    Rule("job.waited_unexplained", "a job that waited, with a cause in view", "job",
         # exactly the jobs none of the three rules above explains (the negation of their conditions)
         f"{_CPU_SHORT} or {_IO_SHORT} or {_MEM_SHORT}", "CPU, I/O or memory pressure on the node while the job "
         "waited (I/O counting only for a job that read or wrote itself)", "info",
         "These jobs waited with no CPU or memory pressure on their node, and no I/O wait of their own (a job that "
         "read and wrote nothing was not held up by its machine's I/O): a lock, the network, a sleep or a child "
         "process outside the job's accounting.",
         "Read the job's log and STIMER steps (`statgrid job ID`) for the step where real time outran CPU time.",
         "None: the seeds' CPU/real ratio says a job waited, not for what.",
         f"seed 002, 'Single Node Spectrum Scale 4.2.1 Results'; {_PSI_DOC}",
         applies=_WAITED, shows=("job.cpu_real", "job.node_cpu_busy_pct", "job.node_iowait_pct", "job.own_io"),
         label="waited (CPU/real {job.cpu_real:.2f}) with no CPU or memory pressure on its node and no I/O wait "
               "of its own (its reads and writes: {job.own_io})"),
)
