"""Sub-tasks from a session, like SAS/CONNECT's MP CONNECT: a running session job hands job files to
the grid as sub-tasks of its own and waits for them all.

    import statgrid
    from statgrid.session.connect import Task

    with statgrid.session() as s:
        s.libname("shared", "/data/project")
        s.sql("CREATE TABLE shared.base AS SELECT * FROM data.sales")
        results = s.parallel([Task("part.py", env={"PART": str(i)}) for i in (1, 2, 3)])

How MP CONNECT (SIGNON, RSUBMIT WAIT=NO, WAITFOR _ALL_, SIGNOFF) maps onto the grid:
- Each Task is a grid job with parent_id = this job ($STATGRID_JOB_ID), in this job's queue unless
  told otherwise, run in this job's working directory with its environment. The master takes such
  a submit only from the parent's own user while the parent runs, and kills the sub-tasks still
  pending or running when the parent ends, as SIGNOFF ends the remote sessions (master.py).
- The parent's librefs (those it assigned with Session.libname, and those it got from its own
  parent) go to each sub-task in $STATGRID_LIBNAMES, which the sub-task's Session assigns when it
  starts: both see the same permanent libraries. WORK is the sub-task's own, as a remote
  session's WORK is its own; pass data through a permanent library.
- The parent waits in one step, "CONNECT". As each sub-task ends, the parent's log gets a NOTE with
  the sub-task's steps (read from its job directory) and one STIMER record of record kind
  "subtask", named "CONNECT task NAME (job ID)": the sub-task's session totals (real time, CPU,
  memory, I/O, rows). The parent's own totals stay its own process's: the sub-tasks' CPU is in
  their records and in their own jobs' records, never added to the parent's, so that summing jobs
  (acct, reports) counts nothing twice.

Outside a grid job there is no parent job to hang sub-tasks on: parallel() says so and runs
nothing (submit the job with `statgrid submit FILE`, or run the task files one by one with
`statgrid run`).
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ContextManager, Iterable, Mapping, Protocol

from statgrid.errors import SessionTerminated, StatgridError, StepError, UsageError
from statgrid.libraries import LIBNAMES_ENV, encode_libnames
from statgrid.job.jobdir import JobDir
from statgrid.session.stimer import StepRecord

if TYPE_CHECKING:
    from statgrid.config import Config
    from statgrid.grid.interface.batch import Batch
    from statgrid.grid.interface.client import GridClient
    from statgrid.libraries import Library
    from statgrid.session.log import SessionLog


class Session(Protocol):
    """What a parent session lends its sub-tasks; statgrid.session.core.Session is one. Described
    here rather than imported: Session.parallel calls into this module, and importing core back
    would close a circle of files."""
    config: Config
    log: SessionLog
    steps: list[StepRecord]
    assigned_libnames: dict[str, Library]

    def step(self, name: str) -> ContextManager[Any]: ...

STEP_NAME = "CONNECT"                    # the parent's step that submits and waits
JOB_ID_ENV = "STATGRID_JOB_ID"           # set by the master in every grid job (master._start_attempt)
KILL_WAIT_S = 60.0                       # after a timeout: how long to wait for the killed sub-tasks to end
STEPS_READ_MAX_BYTES = 4 * 2**20         # of a sub-task's .stimer.jsonl (its end, where the last steps are)
REASON_MAX_CHARS = 300                   # of a failed step's error quoted in the parent's messages


@dataclass(frozen=True)
class Task:
    """One sub-task: a .py/.sql job file, relative to the parent's working directory.

    env: variables added to the parent's environment for this task (e.g. which part it does);
    name: its job name (default: the file's stem); options: its session options (SAS names, as
    `statgrid submit -o`; default: grid.toml's [session], not the parent's)."""

    file: str | os.PathLike
    env: Mapping[str, str] | None = None
    name: str | None = None
    options: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.file, (str, os.PathLike)) or not str(self.file):
            raise UsageError(f"Task file {self.file!r} is not a path; give a .py or .sql job file, e.g. "
                             "Task('part.py').")
        for what, mapping in (("env", self.env), ("options", self.options)):
            if mapping is not None and not (isinstance(mapping, Mapping) and all(
                    isinstance(k, str) and isinstance(v, str) for k, v in mapping.items())):
                raise UsageError(f"Task {what}={mapping!r} is not a mapping of strings to strings; give e.g. "
                                 + ("env={'PART': '1'}." if what == "env" else "options={'memsize': '1G'}."))
        if self.name is not None and (not isinstance(self.name, str) or not self.name.strip()
                                      or "[" in self.name or "]" in self.name):
            # "[...]" in a job name makes an array of jobs (jobspec.parse_array), not one sub-task
            raise UsageError(f"Task name {self.name!r} is not valid: give a non-empty name without '[' or ']' "
                             "(an array is several Tasks).")

    @property
    def job_name(self) -> str:
        return self.name if self.name is not None else Path(self.file).stem


@dataclass(frozen=True)
class TaskResult:
    """How one sub-task ended. Times in seconds.

    job_id: its grid job; state: DONE, EXIT or KILLED; exit_code: its process's (None: killed by a
    signal, or it never started); exit_reason: the grid's reason when not DONE; wait_s: start −
    submit (None: it never started); run_s: end − start, its wall time; timed_out: it was still
    running at parallel()'s timeout_s and was killed; stimer: its session's STIMER totals (None: its
    session wrote none); steps: its STIMER step records (empty: its log is not readable here);
    job_dir: its output and logs (session.log, session.stimer.jsonl, output.txt)."""

    task: Task
    job_id: int
    state: str
    exit_code: int | None
    exit_reason: str | None
    wait_s: float | None
    run_s: float | None
    stimer: StepRecord | None
    steps: list[StepRecord] = field(default_factory=list)
    job_dir: str = ""
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.state == "DONE"

    @property
    def label(self) -> str:
        return f"job {self.job_id} (task {self.task.job_name!r})"

    def why(self) -> str:
        """The state and reason, with the first failed step's error: 'EXIT: exit code 1 (step 2 …)'."""
        text = self.state + (f": {self.exit_reason}" if self.exit_reason else "")
        if self.timed_out:
            text += " (still running at the timeout, so killed)"
        failed = next((s for s in self.steps if s.status != "ok" and s.error), None)
        if failed is not None:
            error = failed.error.splitlines()[0]           # the engine's own lines follow in its log
            error = error if len(error) <= REASON_MAX_CHARS else error[:REASON_MAX_CHARS] + "…"
            text += f" (step {failed.step} {failed.name}: {error})"
        return text


class SubtaskError(StepError):
    """Sub-tasks of parallel() failed: the step CONNECT's error (a StepError, so the step passes it
    on as it is); `results` holds every task's result (failed or not)."""

    def __init__(self, message: str, results: list[TaskResult]):
        super().__init__(STEP_NAME, message)
        self.results = results


def parent_job_id(env: Mapping[str, str] | None = None) -> int:
    """This process's grid job ($STATGRID_JOB_ID), or a StatgridError that says sub-tasks need one."""
    value = (os.environ if env is None else env).get(JOB_ID_ENV)
    if not value:
        raise StatgridError(f"sub-tasks need a grid job to belong to, and this session runs outside the grid "
                            f"(${JOB_ID_ENV} is not set): submit this job with `statgrid submit FILE`, or run the "
                            "task files one by one with `statgrid run`.")
    try:
        return int(value)
    except ValueError:
        raise StatgridError(f"${JOB_ID_ENV} = {value!r} is not a job id; it is set by the grid in a job's "
                            "environment: do not set it yourself.") from None


def grid_client(cfg: Config) -> GridClient:
    """The master, found as the CLI finds it (cli.common.grid_client): $STATGRID_MASTER; else this machine's
    local socket (<home>/grid/master.sock: the master asks the kernel which user is calling, so no
    token is needed); else — no socket here, or one that does not answer because it is the master
    machine's, seen through a shared grid home from a node of its own — the url and token of the
    user's client config (~/.config/statgrid/client.toml, written by `statgrid token create`)."""
    from statgrid.grid.interface.client import GridClient, client_config_path, read_client_config

    client = GridClient(cfg)
    if client.remote is not None:
        return client
    if client.socket_path.exists():
        try:
            client.health()
            return client
        except StatgridError as exc:
            remote = read_client_config(client_config_path())
            if remote is None:
                raise StatgridError(f"{exc} (sub-tasks reach the master through {client.socket_path} on its "
                                    "machine; on a node of its own they need your client config: run `statgrid "
                                    "token create` once on the master's machine)") from None
            client.close()
            return GridClient(cfg, remote=remote)
    remote = read_client_config(client_config_path())
    return client if remote is None else GridClient(cfg, remote=remote)


def parallel(session: Session, tasks: Iterable[Task], queue: str | None = None, timeout_s: float | None = None,
             check: bool = True) -> list[TaskResult]:
    """Submit every task as a sub-task of this grid job, wait for them all, log their STIMER records
    under this session, and return their results in the order of `tasks`.

    queue: the sub-tasks' queue (default: this job's); timeout_s: how long to wait for them all
    (default: no limit) — those still unfinished then are killed and count as failed; check: once
    all have ended, raise SubtaskError (a StepError with .results), naming each failed job, its
    reason and its failed step: the step CONNECT fails, and with it the job, as with any failed
    step (SAS's SYSERR); check=False returns the results and leaves the decision to the job. The
    sub-tasks run while this job holds its own slot: on a full grid they wait for slots like any job."""
    tasks = list(tasks)
    with session.step(STEP_NAME):
        if not tasks or not all(isinstance(t, Task) for t in tasks):
            raise UsageError(f"parallel() takes a non-empty list of Task, not {tasks!r}; give e.g. "
                             "[Task('part1.py'), Task('part2.py')].")
        if timeout_s is not None and not (isinstance(timeout_s, (int, float)) and 0 <= timeout_s < float("inf")):
            raise UsageError(f"timeout_s={timeout_s!r} is not a number of seconds ≥ 0; give one, e.g. 3600, or None "
                             "to wait as long as the sub-tasks run.")
        parent_id = parent_job_id()
        files = [_job_file(t) for t in tasks]
        client = grid_client(session.config)
        try:
            if queue is None:
                queue = client.job(parent_id)["queue"]
            batch = _submit_all(client, session, tasks, files, parent_id, queue)
            results = _wait_all(batch, session, tasks, timeout_s, step_no=len(session.steps) + 1)
        finally:
            client.close()
        failed = [r for r in results if not r.ok]
        cpu_s = sum(r.stimer.cpu_s for r in results if r.stimer is not None)
        session.log.note(f"CONNECT: {len(results) - len(failed)} of {len(results)} sub-tasks ended DONE; together "
                         f"their sessions used {cpu_s:.2f} s of CPU, not counted in this session's totals (each "
                         "sub-task's job has its own).")
        if failed and check:
            raise SubtaskError(
                f"{len(failed)} of {len(results)} sub-tasks failed: "
                + "; ".join(f"{r.label} {r.why()}, log {r.job_dir}/session.log" for r in failed)
                + f". See `statgrid job {failed[0].job_id}`; parallel(..., check=False) returns the results "
                  "without raising.", results)
        return results


def _job_file(task: Task) -> Path:
    from statgrid.job.kinds import check_job_file

    path = Path(os.getcwd()) / task.file               # an absolute task.file stays as it is
    try:
        return check_job_file(path).absolute()
    except UsageError as exc:
        raise UsageError(f"task {task.job_name!r}: {exc} (a relative path is taken from this job's working "
                         f"directory, {os.getcwd()})") from None


def _submit_all(client: GridClient, session: Session, tasks: list[Task], files: list[Path], parent_id: int,
                queue: str) -> Batch:
    from statgrid.grid.interface.batch import Batch
    from statgrid.grid.master.jobspec import JobRequest, with_declared_memsize

    base_env = {k: v for k, v in os.environ.items() if k != LIBNAMES_ENV}
    libnames = list(session.assigned_libnames.values())
    # Each file's memsize, read here as this job's user (the master may not read the files); the
    # master reserves from it with its own grid.toml, as for `statgrid submit`.
    declared = [with_declared_memsize(JobRequest([str(path)], os.getcwd()), session.config) for path in files]
    batch = Batch(client)
    # an error or Ctrl-C: kill those submitted (best effort, for a caller that catches it and goes
    # on); a terminated parent leaves them to the master, which ends them with it
    with batch.guard(spare=(SessionTerminated,), quiet=True):
        for task, path, decl in zip(tasks, files, declared):
            env = {**base_env, **(task.env or {})}
            if libnames:
                env[LIBNAMES_ENV] = encode_libnames(libnames)
            try:
                batch.submit([str(path)], queue=queue, name=task.job_name, options=dict(task.options or {}),
                             cwd=os.getcwd(), env=env, parent_id=parent_id, memsize_bytes=decl.memsize_bytes,
                             memsize_default_too=decl.memsize_default_too)
            except StatgridError as exc:
                raise type(exc)(f"task {task.job_name!r} ({path}) could not be submitted: {exc}") from None
    session.log.note(f"CONNECT: {len(batch.ids)} sub-tasks of job {parent_id} submitted to queue {queue!r}: "
                     + ", ".join(f"job {i} ({t.job_name})" for i, t in zip(batch.ids, tasks))
                     + (f"; librefs passed: {', '.join(lib.name.upper() for lib in libnames)}" if libnames else "")
                     + ".")
    return batch


def _wait_all(batch: Batch, session: Session, tasks: list[Task], timeout_s: float | None,
              step_no: int) -> list[TaskResult]:
    """Wait for each sub-task in turn and log it as it ends (a parent killed meanwhile keeps the
    records of those that ended before); those still running at timeout_s are killed."""
    results: list[TaskResult] = []
    with batch.guard(spare=(SessionTerminated,), quiet=True):      # as in _submit_all
        for task, (record, timed_out) in zip(tasks, batch.wait_each(timeout_s, kill_wait_s=KILL_WAIT_S)):
            result = _result(task, batch.client.job(record["id"]), timed_out)
            _log_result(session, result, step_no)
            results.append(result)
    return results


def _result(task: Task, record: dict[str, Any], timed_out: bool) -> TaskResult:
    job_dir = record.get("job_dir") or ""
    steps, total_in_file = _read_steps(job_dir) if job_dir else ([], None)
    stimer = None
    if record.get("stimer"):
        try:
            stimer = StepRecord.from_json_dict(record["stimer"])
        except (ValueError, TypeError):
            stimer = None
    return TaskResult(task=task, job_id=int(record["id"]), state=record["state"], exit_code=record.get("exit_code"),
                      exit_reason=record.get("exit_reason"), wait_s=record.get("wait_s"), run_s=record.get("run_s"),
                      stimer=stimer or total_in_file, steps=steps, job_dir=job_dir, timed_out=timed_out)


def _read_steps(job_dir: str) -> tuple[list[StepRecord], StepRecord | None]:
    """A sub-task's STIMER step records and total, from its log: read through JobDir, so only a file
    of this session's own user counts (a sub-task runs as its parent's user); nothing when it cannot
    be read from here (no shared file system, or no session ran)."""
    steps, total = [], None
    for raw in JobDir(job_dir).stimer_records(os.getuid(), STEPS_READ_MAX_BYTES):
        try:
            rec = StepRecord.from_json_dict(raw)
        except (ValueError, TypeError):
            continue                    # anything else the file may hold
        if rec.record == "step":
            steps.append(rec)
        elif rec.record == "total":
            total = rec
    return steps, total


def subtask_record(result: TaskResult, step_no: int) -> StepRecord:
    """The sub-task's STIMER record in the parent's log: its session totals, renamed, with rows_out
    the rows its steps wrote; without totals (its session never started or never ended: a launch
    error, SIGKILL), its wall time alone."""
    name = f"CONNECT task {result.task.job_name} (job {result.job_id})"
    status = "ok" if result.ok else "terminated" if result.state == "KILLED" else "error"
    error = None if result.ok else result.why()
    rows = [s.rows_out for s in result.steps if s.rows_out is not None]
    if result.stimer is not None:
        return dataclasses.replace(result.stimer, step=step_no, name=name, status=status, error=error,
                                   record="subtask", job_id=result.job_id,
                                   rows_out=sum(rows) if rows else result.stimer.rows_out)
    return StepRecord(session_id="", step=step_no, name=name, status=status, start_ts="",
                      real_s=result.run_s or 0.0, user_cpu_s=0.0, sys_cpu_s=0.0, memory_bytes=0, os_memory_bytes=0,
                      os_memory_reset=False, page_faults=0, page_reclaims=0, voluntary_ctx_switches=0,
                      involuntary_ctx_switches=0, block_input_ops=0, block_output_ops=0, read_bytes=0, write_bytes=0,
                      logical_read_bytes=0, logical_write_bytes=0, error=error, record="subtask",
                      job_id=result.job_id)


def _log_result(session: Session, result: TaskResult, step_no: int) -> None:
    run = "never started" if result.run_s is None else f"ran {result.run_s:.2f} s after waiting {result.wait_s:.2f} s"
    lines = [f"CONNECT task {result.task.job_name} (job {result.job_id}) ended {result.why()}; it {run}; its log: "
             f"{result.job_dir}/session.log"]
    lines += [f"  step {s.step:<3} {s.name:<30} {s.status:<10} real {s.real_s:.2f} s  cpu {s.cpu_s:.2f} s"
              + (f"  rows {s.rows_out}" if s.rows_out is not None else "") for s in result.steps]
    session.log.note("\n".join(lines))
    session.log.step(subtask_record(result, step_no))


__all__ = ["SubtaskError", "Task", "TaskResult", "grid_client", "parallel", "parent_job_id", "subtask_record"]
