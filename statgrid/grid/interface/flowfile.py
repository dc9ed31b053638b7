"""Flow files: a set of jobs and their dependencies in one TOML file, as IBM Spectrum LSF Process
Manager's flow definitions (a flow of jobs whose links say which job waits for which).

    name = "nightly"                          # the flow's name
    queue = "normal"                          # default queue of its jobs (optional)
    [jobs.extract]
    command = ["python3", "extract.py"]       # a command and its arguments (no shell), or
    [jobs.model]
    file = "model.sql"                        # a job file (.py/.sql), relative to the flow file
    after = "done(extract)"                   # a dependency over the flow's job names (depend.py)

`parse` checks everything that needs no other file and no grid: keys, types, names, sizes,
dependencies (names of this flow only, no cycle). The job file's existence, the queue, the hosts
and the session options are checked at submission, by jobspec.validate, as for `statgrid submit`.
Jobs come back in an order where each one's dependencies come before it, so they can be
submitted one by one, each resolving its `after` to the ids of jobs already submitted. It is read
where the flow is submitted (the CLI), before the master sees it: hence interface/, not scheduling/.
"""
from __future__ import annotations

import heapq
import os
import tomllib
from dataclasses import dataclass, field
from typing import Any, Optional

from statgrid.config import parse_duration_s, parse_size_bytes, toml_string
from statgrid.errors import UsageError
from statgrid.grid.scheduling import depend
from statgrid.grid.master.jobspec import HOSTS_MAX, NAME_MAX_CHARS, OPTIONS_MAX, check_name, shown
from statgrid.job.kinds import JOB_KINDS

JOBS_MAX = 1000
# A flow of 1000 jobs with long commands stays well under this; it bounds what is read and parsed.
FLOW_MAX_BYTES = 4 * 1024 * 1024
FLOW_KEYS = ("name", "queue", "jobs")
JOB_KEYS = ("command", "file", "after", "queue", "options", "runlimit", "mem", "rerunnable", "hosts")
_EXAMPLE_JOB = '[jobs.extract] command = ["python3", "extract.py"]'


@dataclass
class FlowJob:
    """One job of a flow. name: its key under [jobs]; kind: "command" (argv is the command and its
    arguments) or "file" (argv is the one path of a .py/.sql job file, joined to the flow file's
    directory); queue: its own, else the flow's, else "" (the grid's default queue); after: its
    dependency over job names of the flow (resolve it with depend.resolve), None if it waits for
    none; options: session options (file jobs only); runlimit_s: run limit in seconds, None for
    none; mem_bytes: memory reservation in bytes, None for none; rerunnable: may be requeued after
    a host failure; hosts: the hosts it may run on ([] = any of its queue's); memsize_bytes,
    memsize_default_too: what its job file declares of memsize, filled in by the submitter
    (jobspec.with_declared_memsize), not from the flow file."""
    name: str
    kind: str
    argv: list[str]
    queue: str = ""
    after: Optional[depend.Expr] = None
    options: dict[str, str] = field(default_factory=dict)
    runlimit_s: Optional[float] = None
    mem_bytes: Optional[int] = None
    rerunnable: bool = False
    hosts: list[str] = field(default_factory=list)
    memsize_bytes: int = 0
    memsize_default_too: bool = False


@dataclass
class FlowSpec:
    """A parsed flow. name: the flow's name; queue: its default queue ("" if not given);
    jobs: its jobs, dependencies first (ties in file order)."""
    name: str
    jobs: list[FlowJob]
    queue: str = ""


class _Where:
    """The place an error is about: the file, then the job, then the key."""

    def __init__(self, source: str):
        self.source = source

    def error(self, message: str, job: str = "", key: str = "") -> UsageError:
        place = f"flow file {self.source!r}" if self.source else "flow file"
        if job:
            place += f": job {job!r}"
        if key:
            place += f": {key}"
        return UsageError(f"{place}: {message}")


def load(path: str | os.PathLike) -> FlowSpec:
    """Read and parse the flow file at `path`; job files are relative to its directory."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            data = f.read(FLOW_MAX_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"flow file {source!r} does not exist; give the path of a .toml flow file.") from None
    except IsADirectoryError:
        raise UsageError(f"flow file {source!r} is a directory; give the path of a .toml flow file.") from None
    except PermissionError:
        raise UsageError(f"flow file {source!r} cannot be read (permission denied); check its mode.") from None
    where = _Where(source)
    if len(data) > FLOW_MAX_BYTES:
        raise where.error(f"it is over the limit of {FLOW_MAX_BYTES:,} bytes; split the flow into smaller ones.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise where.error(f"it is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); "
                          "save it as UTF-8, as TOML requires.") from None
    return parse(text, os.path.dirname(os.path.abspath(source)), source=source)


def parse(text: str, base_dir: str | os.PathLike, source: str = "") -> FlowSpec:
    """The flow in `text` (TOML); `base_dir` is the directory job files are relative to; `source`
    names the file in messages. Raises UsageError naming the file, the job and the key."""
    where = _Where(source)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise where.error(f"it is not valid TOML: {exc}; fix that line (see https://toml.io).") from None
    _check_keys(where, doc, FLOW_KEYS, "keys of a flow")
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise where.error(f"the flow has no name; add a line such as name = \"nightly\" at the top"
                          f"{'' if name is None else f' (not {shown(name)})'}.")
    _check_name(where, "name", name, "", "give the flow a shorter name of printable characters")
    queue = _text(where, doc, "queue", "", "name a queue of grid.toml, e.g. queue = \"normal\"")
    jobs_doc = doc.get("jobs", {})
    if not isinstance(jobs_doc, dict):
        raise where.error(f"jobs = {shown(jobs_doc)} is not a table of jobs; write each job as a table, e.g. "
                          f"{_EXAMPLE_JOB}.")
    if not jobs_doc:
        raise where.error(f"the flow has no jobs; add at least one, e.g. {_EXAMPLE_JOB}.")
    if len(jobs_doc) > JOBS_MAX:
        raise where.error(f"the flow has {len(jobs_doc):,} jobs, over the limit of {JOBS_MAX:,}; split it into "
                          "several flows.")
    jobs = [_job(where, job_name, body, queue, os.fspath(base_dir)) for job_name, body in jobs_doc.items()]
    for job in jobs:
        for ref in depend.refs(job.after) if job.after else ():
            if isinstance(ref, int):
                raise where.error(f"{str(job.after)!r} names job {ref} by id; a flow's jobs wait for each other "
                                  f"by name, e.g. done({jobs[0].name}).", job.name, "after")
            if ref not in jobs_doc:
                raise where.error(f"{str(job.after)!r} names job {ref!r}, which is not in this flow; its jobs: "
                                  f"{_listed(jobs_doc)}.", job.name, "after")
    return FlowSpec(name=name, jobs=_ordered(where, jobs), queue=queue)


def _listed(names) -> str:
    names = list(names)
    return ", ".join(names[:20]) + (f", … ({len(names) - 20} more)" if len(names) > 20 else "")


def _check_keys(where: _Where, table: dict, allowed: tuple[str, ...], what: str, job: str = "") -> None:
    for key in table:
        if key not in allowed:
            raise where.error(f"key {shown(key)} is not known; {what}: {', '.join(allowed)}.", job)


def _check_name(where: _Where, key: str, value: str, job: str, fix: str) -> None:
    try:
        check_name(key, value, fix)
    except UsageError as exc:
        raise where.error(str(exc), job) from None


def _text(where: _Where, table: dict, key: str, job: str, fix: str) -> str:
    value = table.get(key, "")
    if not isinstance(value, str):
        raise where.error(f"{shown(value)} is not text; {fix}.", job, key)
    _check_name(where, key, value, job, fix)
    return value


def _job(where: _Where, name: str, body: Any, flow_queue: str, base_dir: str) -> FlowJob:
    if not isinstance(body, dict):
        raise where.error(f"[jobs] holds {name!r} = {shown(body)}, not a table; write each job as a table, "
                          f"e.g. {_EXAMPLE_JOB}.")
    if len(name) > NAME_MAX_CHARS or not depend.NAME_RE.fullmatch(name) or name.isdigit():
        raise where.error(f"the job name {shown(name)} is not valid: a job name is 1 to {NAME_MAX_CHARS} letters, "
                          "digits, '_', '-' or '.', not digits only (a number would read as a job id in after); "
                          "e.g. [jobs.extract_1].")
    _check_keys(where, body, JOB_KEYS, "keys of a job", name)
    if ("command" in body) == ("file" in body):
        raise where.error("give exactly one of command (a command and its arguments) or file (a .py/.sql job "
                          f"file){', not both' if 'command' in body else ''}; e.g. command = [\"python3\", "
                          "\"extract.py\"] or file = \"model.sql\".", name)
    if "command" in body:
        kind, argv = "command", _command(where, name, body["command"])
    else:
        kind, argv = "file", [_job_file(where, name, body["file"], base_dir)]
    job = FlowJob(name=name, kind=kind, argv=argv,
                  queue=_text(where, body, "queue", name, "name a queue of grid.toml, e.g. queue = \"long\"")
                  or flow_queue)
    if "after" in body:
        after = body["after"]
        if not isinstance(after, str):
            raise where.error(f"{shown(after)} is not text; write e.g. after = \"done(extract)\".", name, "after")
        try:
            job.after = depend.parse(after)
        except UsageError as exc:
            raise where.error(str(exc), name, "after") from None
    if "options" in body:
        if kind != "file":
            raise where.error("session options apply to job files (.py/.sql), not to a command; remove options "
                              "or give file = \"job.sql\".", name, "options")
        job.options = _options(where, name, body["options"])
    if "runlimit" in body:
        try:
            job.runlimit_s = parse_duration_s(body["runlimit"])
        except ValueError as exc:
            raise where.error(f"{shown(body['runlimit'])} is not valid: expected {exc}.", name, "runlimit") from None
    if "mem" in body:
        try:
            job.mem_bytes = parse_size_bytes(body["mem"])
        except ValueError as exc:
            raise where.error(f"{shown(body['mem'])} is not valid: expected {exc}.", name, "mem") from None
        if job.mem_bytes == 0:
            raise where.error("0 reserves no memory; give a size such as 512M or 2G, or leave mem out.", name, "mem")
    if "rerunnable" in body:
        if not isinstance(body["rerunnable"], bool):
            raise where.error(f"{shown(body['rerunnable'])} is not true or false; write rerunnable = true.", name,
                              "rerunnable")
        job.rerunnable = body["rerunnable"]
    if "hosts" in body:
        job.hosts = _hosts(where, name, body["hosts"])
    return job


def _command(where: _Where, job: str, value: Any) -> list[str]:
    if isinstance(value, str):
        words = (value.split() if len(value) <= 80 else []) or ["python3", "extract.py"]
        raise where.error(f"{shown(value)} is one text; give the command and its arguments as a list, e.g. "
                          f"command = [{', '.join(toml_string(w) for w in words)}] (statgrid runs no shell).",
                          job, "command")
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        raise where.error(f"{shown(value)} is not a list of texts; write e.g. command = [\"python3\", "
                          "\"extract.py\"].", job, "command")
    if not value[0].strip():
        raise where.error(f"{shown(value)} starts with an empty program name; name a program first, e.g. "
                          "command = [\"python3\", \"extract.py\"].", job, "command")
    return list(value)


def _job_file(where: _Where, job: str, value: Any, base_dir: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise where.error(f"{shown(value)} is not a file name; write e.g. file = \"model.sql\".", job, "file")
    if not value.lower().endswith(JOB_KINDS):
        raise where.error(f"{shown(value)} is not a job file ({' or '.join(JOB_KINDS)}); to run another program "
                          f"write command = [\"{value}\"] instead.", job, "file")
    return os.path.normpath(os.path.join(base_dir, value))


def _options(where: _Where, job: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise where.error(f"{shown(value)} is not a table; write e.g. options = {{ memsize = \"2G\" }}.", job,
                          "options")
    if len(value) > OPTIONS_MAX:
        raise where.error(f"{len(value):,} session options, over the limit of {OPTIONS_MAX}; give fewer.", job,
                          "options")
    options = {}
    for key, option in value.items():
        # TOML's own spellings, as `-o KEY=VALUE` would give them: true, 4, 0.5.
        if isinstance(option, bool):
            text = "true" if option else "false"
        elif isinstance(option, (str, int, float)):
            text = str(option)
        else:
            raise where.error(f"option {shown(key)} = {shown(option)} is not a text, number or true/false; write "
                              "e.g. options = { memsize = \"2G\" }.", job, "options")
        _check_name(where, "session option", key, job, "give a known session option (see `statgrid config`)")
        _check_name(where, f"session option {key}", text, job, "give a shorter value")
        options[key] = text
    return options


def _hosts(where: _Where, job: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(h, str) and h for h in value):
        raise where.error(f"{shown(value)} is not a list of host names; write e.g. hosts = [\"node1\"].", job,
                          "hosts")
    if len(value) > HOSTS_MAX:
        raise where.error(f"{len(value):,} hosts, over the limit of {HOSTS_MAX}; name fewer.", job, "hosts")
    for host in value:
        _check_name(where, "host", host, job, "name a host of grid.toml (see `statgrid hosts`)")
    return list(value)


def _ordered(where: _Where, jobs: list[FlowJob]) -> list[FlowJob]:
    """Kahn's algorithm, always taking the earliest job (in file order) whose dependencies are all
    placed: dependencies first, ties in file order. Jobs left over wait in a cycle: name one."""
    index = {job.name: i for i, job in enumerate(jobs)}
    deps = [[index[ref] for ref in depend.refs(job.after)] if job.after else [] for job in jobs]
    waiting = [len(d) for d in deps]
    dependents: list[list[int]] = [[] for _ in jobs]
    for i, d in enumerate(deps):
        for j in d:
            dependents[j].append(i)
    ready = [i for i, n in enumerate(waiting) if n == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for k in dependents[i]:
            waiting[k] -= 1
            if waiting[k] == 0:
                heapq.heappush(ready, k)
    if len(order) < len(jobs):
        # Every job left waits for another job left; follow the first such link from the first
        # one until a job comes round again: that stretch is a cycle.
        left = set(range(len(jobs))) - set(order)
        path, seen = [min(left)], {}
        while path[-1] not in seen:
            seen[path[-1]] = len(path) - 1
            path.append(next(j for j in deps[path[-1]] if j in left))
        cycle = path[seen[path[-1]]:]
        names = " → ".join(jobs[i].name for i in cycle)
        if len(cycle) == 2:
            raise where.error(f"the job waits for itself ({names}), so it could never start; remove "
                              f"{jobs[cycle[0]].name} from its own after.", jobs[cycle[0]].name, "after")
        raise where.error(f"jobs wait for each other in a cycle, so none of them could start: {names} (each "
                          "waits for the next); remove one of these dependencies.", jobs[cycle[0]].name, "after")
    return [jobs[i] for i in order]
