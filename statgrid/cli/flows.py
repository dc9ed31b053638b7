"""Process Manager's flows and calendars: `flow submit|list|show|kill`, `schedule add|list|remove`."""
from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from statgrid.cli.common import IDEMPOTENCY_HELP, call, config, fail, grid_client, show
from statgrid.errors import StatgridError, UsageError
from statgrid.host.timezone import local_zone
from statgrid.job.record import JOB_ID_MAX

flow_app = typer.Typer(help="Flows (Process Manager): jobs with dependencies, submitted, shown and killed as one; "
                       "arrays show here too.", no_args_is_help=True)


def _declare_flow_job(j, cwd: str, cfg) -> None:
    """A flow job's file's memsize, read here as you (the master may not read your files); the
    master reserves from it with its own grid.toml (jobspec.with_declared_memsize)."""
    from statgrid.grid.master.jobspec import JobRequest, with_declared_memsize

    if j.mem_bytes or j.kind != "file":
        return
    req = with_declared_memsize(JobRequest(list(j.argv), cwd), cfg)
    j.memsize_bytes, j.memsize_default_too = req.memsize_bytes, req.memsize_default_too


@flow_app.command("submit")
def flow_submit(ctx: typer.Context, path: Path = typer.Argument(..., metavar="FILE", help="A flow file (TOML)."),
                key: Optional[str] = typer.Option(None, "--idempotency-key", metavar="KEY", help=IDEMPOTENCY_HELP)) -> None:
    """Submit a flow file: every job or none; prints the flow's id. Its jobs run in the flow file's directory."""
    import time as _time

    from statgrid.grid.interface import flowfile
    from statgrid.grid.master.jobspec import JobRequest, validate

    cfg = config(ctx)
    try:
        spec = flowfile.load(path)
        cwd = str(Path(path).resolve().parent)
        for j in spec.jobs:                     # the master's checks, here first, as you (files you may read)
            _declare_flow_job(j, cwd, cfg)
            validate(JobRequest(list(j.argv), cwd, "", j.queue, j.name, dict(j.options), j.rerunnable,
                                list(j.hosts), dict(os.environ), "", j.runlimit_s or 0.0, j.mem_bytes or 0,
                                memsize_bytes=j.memsize_bytes, memsize_default_too=j.memsize_default_too),
                     cfg, _time.time())
        rec = grid_client(ctx).submit_flow(spec, cwd=cwd, key=key)
    except StatgridError as exc:
        fail(ctx, exc)
    typer.echo(f"Flow <{rec['id']}> ({rec['name']}) of {len(rec['jobs'])} jobs is submitted.", err=True)
    typer.echo(rec["id"])


@flow_app.command("list")
def flow_list(ctx: typer.Context, user: Optional[str] = typer.Option(None, "--user", "-u", help="This user's; 'all' "
                                                                     "for everyone's (default: yours)."),
              as_json: bool = typer.Option(False, "--json")) -> None:
    """The newest 100 flows and arrays with their state and jobs per state."""
    show(ctx, as_json, "flows_table", "flows", user=None if user in (None, "all") else user, mine=user is None)


@flow_app.command("show")
def flow_show(ctx: typer.Context, flow_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX),
              as_json: bool = typer.Option(False, "--json")) -> None:
    """A flow or array as one: its state, and each job with its state, dependency and pending reason."""
    show(ctx, as_json, "flow_detail", "flow", flow_id)


@flow_app.command("kill")
def flow_kill(ctx: typer.Context, flow_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX)) -> None:
    """Kill every unfinished job of a flow or array."""
    rec = call(ctx, grid_client(ctx).kill_flow, flow_id)
    typer.echo(f"Flow <{rec['id']}>: {rec['state']} ("
               + ", ".join(f"{n} {s}" for s, n in sorted(rec["counts"].items())) + ")")


schedule_app = typer.Typer(help="Calendars (Process Manager): submit a job or a flow at cron-like times; kept "
                           "across master restarts.", no_args_is_help=True)


@schedule_app.command("add", context_settings={"allow_interspersed_args": False})
def schedule_add(ctx: typer.Context,
                 cron: str = typer.Option(..., "--cron", metavar="SPEC", help="When: 5 cron fields, e.g. \"0 2 * * *\" "
                                          "(02:00 daily), or @hourly, @daily, @weekly, @monthly."),
                 tz: Optional[str] = typer.Option(None, "--tz", help="Time zone of SPEC (default: this machine's)."),
                 flow: Optional[Path] = typer.Option(None, "--flow", metavar="FILE", help="Submit this flow file."),
                 queue: str = typer.Option("", "--queue", "-q"), name: str = typer.Option("", "--name", "-J"),
                 job: Optional[List[str]] = typer.Argument(None, metavar="[JOB [ARGS]...]")) -> None:
    """Add a calendar that submits a job (JOB ARGS, run in this directory) or a flow (--flow FILE)."""
    from statgrid.grid.interface import flowfile

    try:
        if (flow is None) == (not job):
            raise UsageError("give a job (JOB [ARGS]...) or --flow FILE, one of the two; e.g. statgrid schedule add "
                             "--cron \"0 2 * * *\" -- nightly.py")
        zone = tz or local_zone()
        client = grid_client(ctx)
        if flow is not None:
            spec, cwd = flowfile.load(flow), str(Path(flow).resolve().parent)
            for j in spec.jobs:                  # each file's memsize, read as you (as flow submit)
                _declare_flow_job(j, cwd, config(ctx))
            rec = client.schedule_add(cron, zone, flow=spec, cwd=cwd)
        else:
            import time as _time

            from statgrid.grid.master.jobspec import JobRequest, validate, with_declared_memsize

            # the master's checks, here first, as you (a root master does not look at your files);
            # the file's memsize, read as you, is kept in the calendar's request (as submit's)
            req = with_declared_memsize(JobRequest(list(job), os.getcwd(), "", queue, name, {}, False, [],
                                                   dict(os.environ)), config(ctx))
            validate(req, config(ctx), _time.time())
            rec = client.schedule_add(cron, zone, argv=list(job), queue=queue, name=name,
                                      memsize_bytes=req.memsize_bytes, memsize_default_too=req.memsize_default_too)
    except StatgridError as exc:
        fail(ctx, exc)
    import datetime as _dt
    from zoneinfo import ZoneInfo

    first = _dt.datetime.fromtimestamp(rec["next_ts"], ZoneInfo(rec["tz"])).strftime("%Y-%m-%d %H:%M %Z")
    typer.echo(f"Calendar <{rec['id']}> ({rec['cron']}, {rec['tz']}): {rec['what']}; first at {first}.", err=True)
    typer.echo(rec["id"])


@schedule_app.command("list")
def schedule_list(ctx: typer.Context, all_users: bool = typer.Option(False, "--all", help="Everyone's (administrators)."),
                  as_json: bool = typer.Option(False, "--json")) -> None:
    """Your calendars: when, what, the next and last time and what the last one submitted."""
    show(ctx, as_json, "schedules_table", "schedules", all_users)


@schedule_app.command("remove")
def schedule_remove(ctx: typer.Context, sched_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX)) -> None:
    """Remove a calendar (jobs it submitted go on)."""
    rec = call(ctx, grid_client(ctx).schedule_remove, sched_id)
    typer.echo(f"Calendar <{rec['id']}> removed.")

