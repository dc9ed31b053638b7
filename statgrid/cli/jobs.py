"""Jobs, like LSF's b-commands: `submit`, `jobs`, `job`, `suspend`, `resume`, `top`, `bottom`,
`modify`, `kill`, `peek`, `wait`."""
from __future__ import annotations

import json
import os
from typing import List, Optional

import typer

from statgrid.cli.common import IDEMPOTENCY_HELP, call, config, fail, grid_client, parsed, show
from statgrid.config import parse_option_pairs
from statgrid.errors import StatgridError, UsageError
from statgrid.job.record import JOB_ID_MAX, PEEK_MAX_BYTES


def submit(ctx: typer.Context,
           job: List[str] = typer.Argument(..., metavar="JOB [ARGS]...", help="A job file (.py/.sql/.sas: one "
                                           "session; a .sas program may be followed by SAS invocation options such "
                                           "as -sysparm V -memsize 4G) or a command and its arguments."),
           queue: str = typer.Option("", "--queue", "-q", help="Queue (default: 'normal' or the first in grid.toml)."),
           name: str = typer.Option("", "--name", "-J", help="Job name (default: the file or command name)."),
           hosts: List[str] = typer.Option([], "--host", "-m", help="Run only on this host; repeatable (LSF -m)."),
           rerunnable: bool = typer.Option(False, "--rerunnable", "-r", help="Requeue if its host is lost."),
           option: List[str] = typer.Option([], "--option", "-o", metavar="KEY=VALUE", help="Session option "
                                            "(memsize, threads, bufsize, sortsize, compress, utilsize); repeatable."),
           depend: str = typer.Option("", "--depend", "-w", metavar="EXPR", help="Start only when this holds, e.g. "
                                      "\"done(12) && ended(13)\" (done, ended, exit, started; &&, ||, parentheses)."),
           runlimit: Optional[str] = typer.Option(None, "--runlimit", "-W", metavar="TIME", help="Kill the job (EXIT) "
                                                  "after it ran this long, e.g. 30m, 2h (LSF -W)."),
           mem: Optional[str] = typer.Option(None, "--mem", metavar="SIZE", help="Memory to reserve on its host, and "
                                             "its limit there, e.g. 4G (default: a session's memsize plus the margin "
                                             "and 128M; a command none)."),
           priority: int = typer.Option(0, "--priority", "-sp", min=0, max=1000, help="Order among your own jobs of the "
                                        "queue, 0-1000, higher first."),
           key: Optional[str] = typer.Option(None, "--idempotency-key", metavar="KEY", help=IDEMPOTENCY_HELP)) -> None:
    """Submit a job to the grid; prints its id. An array: -J "name[1-100]%10" (100 jobs, at most 10 at
    once; each gets its index in $STATGRID_ARRAY_INDEX)."""
    from statgrid.config import parse_duration_s, parse_size_bytes
    from statgrid.grid.master.jobspec import JobRequest, parse_array, validate, with_declared_memsize

    cfg = config(ctx)
    try:
        options = parse_option_pairs(option)
        host_list = [h for spec in hosts for h in spec.replace(",", " ").split()]
        runlimit_s = parsed(parse_duration_s, runlimit, "-W", "30m or 2h") if runlimit else 0.0
        mem_bytes = parsed(parse_size_bytes, mem, "--mem", "4G or 512M") if mem else 0
        array = parse_array(name) if name else None
        # The same checks the master makes, here first for a usage error without a round trip.
        import time as _time

        # A session reserves the memsize its job file sets: read here, as you (the master may not
        # read your files), and sent as what the file declares; the master makes the reservation
        # of it with its own grid.toml (memsize default, memory_margin), under which the job runs.
        req = with_declared_memsize(JobRequest(list(job), os.getcwd(), "", queue, name, options, rerunnable,
                                               host_list, dict(os.environ), depend, runlimit_s, mem_bytes, priority),
                                    cfg)
        validate(req, cfg, _time.time())
        rec = grid_client(ctx).submit(list(job), queue=queue, name=name, options=options, rerunnable=rerunnable,
                                      hosts=host_list, depend=depend, runlimit_s=runlimit_s, mem_bytes=mem_bytes,
                                      priority=priority, key=key, memsize_bytes=req.memsize_bytes,
                                      memsize_default_too=req.memsize_default_too)
    except StatgridError as exc:
        fail(ctx, exc)
    if array is not None:
        # The elements' job ids on stdout (`kill $(...)`, `wait $(...)` take them all); the array's
        # own id (a flow's: `flow show|kill`) is another id space, so it goes to stderr only.
        first, n = rec["id"], len(array.indices)
        typer.echo(f"Job array <{rec['flow_id']}> of {n} jobs (<{first}> … <{first + n - 1}>) is submitted to queue "
                   f"<{rec['queue']}>; `statgrid flow show {rec['flow_id']}` shows it.", err=True)
        typer.echo(" ".join(str(i) for i in range(first, first + n)))
        return
    typer.echo(f"Job <{rec['id']}> is submitted to queue <{rec['queue']}>.", err=True)
    typer.echo(rec["id"])


def jobs(ctx: typer.Context, all_states: bool = typer.Option(False, "--all", "-a", help="Also finished jobs."),
         user: Optional[str] = typer.Option(None, "--user", "-u", help="This user's jobs; 'all' for everyone's."),
         queue: Optional[str] = typer.Option(None, "--queue", "-q", help="Only this queue's jobs."),
         host: Optional[str] = typer.Option(None, "--host", "-m", help="Only jobs on this host."),
         state: Optional[str] = typer.Option(None, "--state", "-s", metavar="STATE[,STATE]",
                                             help="Only jobs in these states (PEND RUN DONE EXIT KILLED)."),
         pending: bool = typer.Option(False, "--pending", "-p", help="Pending jobs and why each waits (bjobs -p)."),
         as_json: bool = typer.Option(False, "--json", help="JSON records instead of the table.")) -> None:
    """List jobs (default: yours, not finished), like bjobs; every match, fetched page by page.
    Long names are cut to 40 characters and control characters escaped; `job ID` shows them whole."""
    from statgrid.grid.interface import views

    states = ["PEND"] if pending else [s for s in state.split(",") if s.strip()] if state else None
    records = call(ctx, grid_client(ctx).jobs, user=None if user in (None, "all") else user, mine=user is None,
                   all_states=all_states, states=states, queue=queue, host=host)
    typer.echo(json.dumps(records, indent=1) if as_json else
               views.pending_table(records) if pending else views.jobs_table(records))


def job_detail(ctx: typer.Context, job_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX),
               as_json: bool = typer.Option(False, "--json", help="The JSON record.")) -> None:
    """One job in detail: host, times, wait, rusage, STIMER totals, exit reason (bjobs -l)."""
    show(ctx, as_json, "job_detail", "job", job_id)

def suspend(ctx: typer.Context, job_ids: List[int] = typer.Argument(..., metavar="ID...", min=1, max=JOB_ID_MAX)) -> None:
    """Suspend running jobs (bstop): their processes stop, keep their slot and memory; suspended
    time counts neither against their run limit nor as fairshare usage."""
    _each(ctx, job_ids, lambda c, i: c.suspend(i))


def resume(ctx: typer.Context, job_ids: List[int] = typer.Argument(..., metavar="ID...", min=1, max=JOB_ID_MAX)) -> None:
    """Resume suspended jobs (bresume)."""
    _each(ctx, job_ids, lambda c, i: c.resume(i))


def top(ctx: typer.Context, job_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX)) -> None:
    """Move a pending job to the top of its queue (btop): first among your own jobs there (an
    administrator's move: among everyone's)."""
    _each(ctx, [job_id], lambda c, i: c.move(i, "top"))


def bottom(ctx: typer.Context, job_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX)) -> None:
    """Move a pending job to the bottom of its queue (bbot)."""
    _each(ctx, [job_id], lambda c, i: c.move(i, "bottom"))


def modify(ctx: typer.Context, job_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX),
           queue: Optional[str] = typer.Option(None, "--queue", "-q", help="Another queue."),
           name: Optional[str] = typer.Option(None, "--name", "-J", help="Another name."),
           priority: Optional[int] = typer.Option(None, "--priority", "-sp", min=0, max=1000, help="Job priority."),
           runlimit: Optional[str] = typer.Option(None, "--runlimit", "-W", metavar="TIME", help="Run limit; 0: none."),
           mem: Optional[str] = typer.Option(None, "--mem", metavar="SIZE", help="Memory to reserve.")) -> None:
    """Change a pending job (bmod): queue, name, priority, run limit, memory."""
    from statgrid.config import parse_limit_s, parse_size_bytes

    try:
        runlimit_s = None if runlimit is None else parsed(parse_limit_s, runlimit, "-W", "30m, 2h or 0")
        mem_bytes = None if mem is None else parsed(parse_size_bytes, mem, "--mem", "4G or 512M")
    except StatgridError as exc:
        fail(ctx, exc)
    if all(v is None for v in (queue, name, priority, runlimit_s, mem_bytes)):
        fail(ctx, UsageError("nothing to change: give -q, -J, -sp, -W or --mem."))
    _each(ctx, [job_id], lambda c, i: c.modify(i, queue=queue, name=name, priority=priority, runlimit_s=runlimit_s,
                                               mem_bytes=mem_bytes))


def _each(ctx: typer.Context, job_ids: list[int], verb) -> None:
    """Apply a verb to each job; print each job's new state; exit 1 if any was refused."""
    client = grid_client(ctx)
    failed: list[StatgridError] = []
    for job_id in job_ids:
        try:
            rec = verb(client, job_id)
        except StatgridError as exc:
            typer.echo(f"Error: job {job_id}: {exc}", err=True)
            failed.append(exc)
            continue
        typer.echo(f"Job <{rec['id']}>: {rec['state']}")
    # 2 when every refusal was a usage error (as click's), 1 for others (not yours, not running any more)
    raise typer.Exit(0 if not failed else 2 if all(isinstance(e, UsageError) for e in failed) else 1)

def kill(ctx: typer.Context, job_ids: List[int] = typer.Argument(..., metavar="ID...", min=1, max=JOB_ID_MAX)) -> None:
    """Kill jobs: pending ones leave the queue, running ones get SIGTERM then SIGKILL (bkill)."""
    results = call(ctx, grid_client(ctx).kill, job_ids)
    for rec in results:
        if "error" in rec:
            typer.echo(f"Error: {rec['error']}", err=True)
        else:
            typer.echo(f"Job <{rec['id']}>: {rec['state']}{' (kill sent)' if rec['state'] == 'RUN' else ''}")
    raise typer.Exit(1 if any("error" in r for r in results) else 0)


def peek(ctx: typer.Context, job_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX),
         nbytes: int = typer.Option(4096, "--bytes", "-n", min=1, max=PEEK_MAX_BYTES, help="How much of the end of the "
                                    "output (at most 1 MiB; the whole file is at the path shown).")) -> None:
    """Show the end of a job's output and log (bpeek)."""
    rec = call(ctx, grid_client(ctx).peek, job_id, nbytes)
    typer.echo(f"<< output of job {job_id} ({rec['job']['state']}): {rec['path']} >>", err=True)
    typer.echo(rec["text"], nl=False)


def wait(ctx: typer.Context, job_ids: List[int] = typer.Argument(..., metavar="ID...", min=1, max=JOB_ID_MAX),
         timeout: Optional[float] = typer.Option(None, "--timeout", help="Give up after this many seconds.")) -> None:
    """Wait until jobs finish; exit 0 only if all are DONE."""
    records = call(ctx, grid_client(ctx).wait, job_ids, timeout)
    for rec in records:
        typer.echo(f"Job <{rec['id']}>: {rec['state']}" + (f" ({rec['exit_reason']})" if rec.get("exit_reason") else ""))
    raise typer.Exit(0 if all(r["state"] == "DONE" for r in records) else 1)

