"""Flow files (statgrid.grid.interface.flowfile): the example flow, order, and every refusal's message."""
from __future__ import annotations

import textwrap

import pytest

from statgrid.errors import UsageError
from statgrid.grid.interface import flowfile
from statgrid.grid.scheduling.depend import And, Term
from statgrid.grid.interface.flowfile import FlowJob, FlowSpec, load, parse

NIGHTLY = """\
name = "nightly"                 # the flow's name
queue = "normal"                 # default queue for its jobs
[jobs.model]
file = "model.sql"
after = "done(extract) && started(load)"
queue = "long"
options = { memsize = "2G", threads = 4, fullstimer = true }
runlimit = "2h"
mem = "4G"
rerunnable = true
hosts = ["node1", "node2"]
[jobs.extract]
command = ["python3", "extract.py", "--day", "1"]
[jobs.load]
file = "../sql/load.py"
after = "ended( extract )"
"""


def test_the_example_flow():
    spec = parse(NIGHTLY, "/data/flows", source="nightly.toml")
    assert spec == FlowSpec(name="nightly", queue="normal", jobs=[
        FlowJob(name="extract", kind="command", argv=["python3", "extract.py", "--day", "1"], queue="normal"),
        FlowJob(name="load", kind="file", argv=["/data/sql/load.py"], queue="normal",
                after=Term("ended", "extract")),
        FlowJob(name="model", kind="file", argv=["/data/flows/model.sql"], queue="long",
                after=And((Term("done", "extract"), Term("started", "load"))),
                options={"memsize": "2G", "threads": "4", "fullstimer": "true"}, runlimit_s=7200.0,
                mem_bytes=4 * 1024**3, rerunnable=True, hosts=["node1", "node2"]),
    ])


def test_load_reads_the_file_and_takes_its_directory(tmp_path):
    (tmp_path / "flows").mkdir()
    path = tmp_path / "flows" / "nightly.toml"
    path.write_text(NIGHTLY)
    spec = load(path)
    assert [job.argv for job in spec.jobs] == [["python3", "extract.py", "--day", "1"],
                                               [str(tmp_path / "sql" / "load.py")],
                                               [str(tmp_path / "flows" / "model.sql")]]


def test_load_relative_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.toml").write_text('name = "f"\n[jobs.a]\nfile = "a.py"\n')
    assert load("f.toml").jobs[0].argv == [str(tmp_path / "a.py")]


def test_defaults():
    spec = parse('name = "f"\n[jobs.a]\ncommand = ["true"]\n', "/d")
    assert spec == FlowSpec(name="f", queue="", jobs=[FlowJob(name="a", kind="command", argv=["true"])])
    assert spec.jobs[0].after is None and spec.jobs[0].runlimit_s is None and spec.jobs[0].mem_bytes is None


def flow(*jobs: str) -> str:
    """A flow named f whose jobs are given as 'NAME: AFTER' (a command job each)."""
    lines = ['name = "f"']
    for job in jobs:
        name, _, after = job.partition(":")
        lines += [f"[jobs.{name.strip()}]", 'command = ["true"]']
        if after.strip():
            lines.append(f"after = {after.strip()!r}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("jobs, order", [
    (["a", "b", "c"], "a b c"),                                          # no dependencies: file order
    (["c: done(b)", "b: done(a)", "a"], "a b c"),
    (["d: done(a) && done(c)", "c", "b: ended(a)", "a"], "c a d b"),     # ties in file order
    (["x: done(a)", "y", "a"], "y a x"),
    (["m: done(a) || exit(b)", "b: started(a)", "a", "z"], "a b m z"),
    (["e: done(d)", "d: done(c)", "c: done(b)", "b: done(a)", "a"], "a b c d e"),
])
def test_topological_order(jobs, order):
    assert " ".join(job.name for job in parse(flow(*jobs), "/d").jobs) == order


def test_long_chain_and_limit():
    chain = [f"j{i}: done(j{i + 1})" for i in range(999)] + ["j999"]
    spec = parse(flow(*chain), "/d")
    assert [job.name for job in spec.jobs] == [f"j{i}" for i in range(999, -1, -1)]
    with pytest.raises(UsageError) as info:
        parse(flow(*(f"j{i}" for i in range(1001))), "/d", source="big.toml")
    assert str(info.value) == ("flow file 'big.toml': the flow has 1,001 jobs, over the limit of 1,000; split it into "
                               "several flows.")


@pytest.mark.parametrize("jobs, message", [
    (["a: done(b)", "b: ended(a)"],
     "job 'a': after: jobs wait for each other in a cycle, so none of them could start: a → b → a (each waits for "
     "the next); remove one of these dependencies."),
    (["a: done(a)"],
     "job 'a': after: the job waits for itself (a → a), so it could never start; remove a from its own after."),
    (["start", "a: done(start) && done(c)", "b: done(a)", "c: done(b) || done(start)"],
     "job 'a': after: jobs wait for each other in a cycle, so none of them could start: a → c → b → a (each "
     "waits for the next); remove one of these dependencies."),
    (["x: done(a)", "a: done(b)", "b: done(c)", "c: done(b)"],            # x waits for the cycle b ⇄ c
     "job 'b': after: jobs wait for each other in a cycle, so none of them could start: b → c → b (each waits for "
     "the next); remove one of these dependencies."),
    (["a: done(extract)", "b"],
     "job 'a': after: 'done(extract)' names job 'extract', which is not in this flow; its jobs: a, b."),
    (["a: done(12)", "b"],
     "job 'a': after: 'done(12)' names job 12 by id; a flow's jobs wait for each other by name, e.g. done(a)."),
    (["a", "b: done(a"],
     "job 'b': after: dependency 'done(a' is not valid: missing ')' at position 6; write e.g. done(a)"),
    (["a", "b: !done(a)"],
     "job 'b': after: dependency '!done(a)' is not valid: '!' (not) is not supported at position 0; write e.g. "
     "exit(12) (job 12 failed) or done(12) (it succeeded) instead of a negation"),
])
def test_dependency_errors(jobs, message):
    with pytest.raises(UsageError) as info:
        parse(flow(*jobs), "/d", source="f.toml")
    assert str(info.value) == f"flow file 'f.toml': {message}"


def job(body: str) -> str:
    return 'name = "f"\n[jobs.a]\n' + textwrap.dedent(body)


@pytest.mark.parametrize("text, message", [
    ('nme = "f"\n', "key 'nme' is not known; keys of a flow: name, queue, jobs."),
    ('name = "f"\n[job.a]\ncommand = ["true"]\n', "key 'job' is not known; keys of a flow: name, queue, jobs."),
    (job('command = ["true"]\nafer = "done(b)"\n'),
     "job 'a': key 'afer' is not known; keys of a job: command, file, after, queue, options, runlimit, mem, "
     "rerunnable, hosts."),
    ('[jobs.a]\ncommand = ["true"]\n', 'the flow has no name; add a line such as name = "nightly" at the top.'),
    ('name = 5\n[jobs.a]\ncommand = ["true"]\n',
     'the flow has no name; add a line such as name = "nightly" at the top (not 5).'),
    ('name = "a\\tb"\n[jobs.a]\ncommand = ["true"]\n',
     "name 'a\\tb' contains the control character '\\t' at position 1; names take printable characters only (no "
     "newline, tab or escape); give the flow a shorter name of printable characters."),
    (f'name = "{"n" * 129}"\n[jobs.a]\ncommand = ["true"]\n',
     f"name '{'n' * 40}'… is 129 characters long, over the limit of 128; give the flow a shorter name of printable "
     "characters."),
    ('name = "f"\nqueue = 3\n[jobs.a]\ncommand = ["true"]\n',
     'queue: 3 is not text; name a queue of grid.toml, e.g. queue = "normal".'),
    ('name = "f"\n',
     'the flow has no jobs; add at least one, e.g. [jobs.extract] command = ["python3", "extract.py"].'),
    ('name = "f"\njobs = 3\n', 'jobs = 3 is not a table of jobs; write each job as a table, e.g. [jobs.extract] '
                              'command = ["python3", "extract.py"].'),
    ('name = "f"\njobs = { a = 3 }\n', "[jobs] holds 'a' = 3, not a table; write each job as a table, e.g. "
                                       '[jobs.extract] command = ["python3", "extract.py"].'),
    ('name = "f"\n[jobs.12]\ncommand = ["true"]\n',
     "the job name '12' is not valid: a job name is 1 to 128 letters, digits, '_', '-' or '.', not digits only (a "
     "number would read as a job id in after); e.g. [jobs.extract_1]."),
    ('name = "f"\n[jobs."a b"]\ncommand = ["true"]\n',
     "the job name 'a b' is not valid: a job name is 1 to 128 letters, digits, '_', '-' or '.', not digits only (a "
     "number would read as a job id in after); e.g. [jobs.extract_1]."),
    (job("queue = 'long'\n"),
     "job 'a': give exactly one of command (a command and its arguments) or file (a .py/.sql job file); e.g. "
     'command = ["python3", "extract.py"] or file = "model.sql".'),
    (job('command = ["true"]\nfile = "a.sql"\n'),
     "job 'a': give exactly one of command (a command and its arguments) or file (a .py/.sql job file), not both; "
     'e.g. command = ["python3", "extract.py"] or file = "model.sql".'),
    (job('command = "python3 extract.py --day 1"\n'),
     "job 'a': command: 'python3 extract.py --day 1' is one text; give the command and its arguments as a list, e.g. "
     'command = ["python3", "extract.py", "--day", "1"] (statgrid runs no shell).'),
    (job("command = []\n"), 'job \'a\': command: [] is not a list of texts; write e.g. command = ["python3", '
                            '"extract.py"].'),
    (job('command = ["a", 1]\n'), "job 'a': command: ['a', 1] is not a list of texts; write e.g. command = "
                                  '["python3", "extract.py"].'),
    (job('command = [" ", "x"]\n'), "job 'a': command: [' ', 'x'] starts with an empty program name; name a program "
                                    'first, e.g. command = ["python3", "extract.py"].'),
    (job('file = "run.sh"\n'), "job 'a': file: 'run.sh' is not a job file (.py or .sql or .sas); to run another program write "
                               'command = ["run.sh"] instead.'),
    (job("file = 3\n"), 'job \'a\': file: 3 is not a file name; write e.g. file = "model.sql".'),
    (job('command = ["true"]\nafter = 3\n'), 'job \'a\': after: 3 is not text; write e.g. after = "done(extract)".'),
    (job('command = ["true"]\noptions = { memsize = "2G" }\n'),
     "job 'a': options: session options apply to job files (.py/.sql), not to a command; remove options or give "
     'file = "job.sql".'),
    (job('file = "a.sql"\noptions = "memsize=2G"\n'),
     "job 'a': options: 'memsize=2G' is not a table; write e.g. options = { memsize = \"2G\" }."),
    (job('file = "a.sql"\noptions = { memsize = [1] }\n'),
     "job 'a': options: option 'memsize' = [1] is not a text, number or true/false; write e.g. options = { memsize "
     '= "2G" }.'),
    (job('command = ["true"]\nrunlimit = "2 hours"\n'),
     "job 'a': runlimit: '2 hours' is not valid: expected a duration like 30s, 500ms, 5m or 1h, not '2 hours'."),
    (job('command = ["true"]\nrunlimit = 0\n'),
     "job 'a': runlimit: 0 is not valid: expected a positive duration, not 0."),
    (job('command = ["true"]\nmem = "lots"\n'),
     "job 'a': mem: 'lots' is not valid: expected a size such as 512M, 2G or a number of bytes."),
    (job('command = ["true"]\nmem = 0\n'),
     "job 'a': mem: 0 reserves no memory; give a size such as 512M or 2G, or leave mem out."),
    (job('command = ["true"]\nrerunnable = "yes"\n'),
     "job 'a': rerunnable: 'yes' is not true or false; write rerunnable = true."),
    (job('command = ["true"]\nhosts = "node1"\n'),
     "job 'a': hosts: 'node1' is not a list of host names; write e.g. hosts = [\"node1\"]."),
    (job('command = ["true"]\nqueue = ["long"]\n'),
     "job 'a': queue: ['long'] is not text; name a queue of grid.toml, e.g. queue = \"long\"."),
    ('name = "f"\n[jobs.a]\ncommand = \n', "it is not valid TOML: Invalid value (at line 3, column 11); fix that line "
                                           "(see https://toml.io)."),
])
def test_errors(text, message):
    with pytest.raises(UsageError) as info:
        parse(text, "/d", source="f.toml")
    assert str(info.value) == f"flow file 'f.toml': {message}"


def test_error_without_a_source_still_says_flow_file():
    with pytest.raises(UsageError, match=r"^flow file: key 'x' is not known; keys of a flow: name, queue, jobs\.$"):
        parse("x = 1\n", "/d")


def test_options_and_runlimit_forms():
    spec = parse(job('file = "a.py"\noptions = { memsize = "2G", bufsize = 1000, ratio = 0.5, x = false }\n'
                     'runlimit = 90\nmem = 1048576\n'), "/d")
    assert spec.jobs[0].options == {"memsize": "2G", "bufsize": "1000", "ratio": "0.5", "x": "false"}
    assert (spec.jobs[0].runlimit_s, spec.jobs[0].mem_bytes) == (90.0, 1024**2)


def test_flow_queue_is_the_default_of_each_job():
    spec = parse('name = "f"\nqueue = "short"\n[jobs.a]\ncommand = ["true"]\n[jobs.b]\ncommand = ["true"]\n'
                 'queue = "long"\n', "/d")
    assert [(job.name, job.queue) for job in spec.jobs] == [("a", "short"), ("b", "long")]


def test_load_errors(tmp_path):
    with pytest.raises(UsageError) as info:
        load(tmp_path / "none.toml")
    assert str(info.value) == f"flow file {str(tmp_path / 'none.toml')!r} does not exist; give the path of a .toml " \
                              "flow file."
    with pytest.raises(UsageError, match="is a directory; give the path of a .toml flow file"):
        load(tmp_path)
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(UsageError) as info:
        load(bad)
    assert str(info.value) == (f"flow file {str(bad)!r}: it is not UTF-8 text (byte 0xe9 at offset 11); save it as "
                               "UTF-8, as TOML requires.")
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (flowfile.FLOW_MAX_BYTES + 1))
    with pytest.raises(UsageError, match=r"it is over the limit of 4,194,304 bytes; split the flow"):
        load(big)
