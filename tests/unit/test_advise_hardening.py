"""Issue 29's review of `statgrid advise`, fixed: the rule language bounded (refused when a rule is defined, its
id named) and a rule that raises kept to itself; host.imbalance over the grid's shape (a host with slots and no
job is the worst imbalance); MB/s per core from the jobs' own bytes where their records have them, the machine-wide
figures labelled; size's slots line on a shared machine; policy.Running.remove / groups_of. Expected values are
worked out by hand from the numbers written here."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from statgrid.advise import evidence, ownio, rules
from statgrid.advise.rules import Expr, Rule, RuleError
from statgrid.advise.rules_data import RULES

from test_advise import results_by, write_bundle

RULE = {r.id: r for r in RULES}


def rule(check: str, rid: str = "t.x", advice: str = "a", label: str = "", applies: str = "") -> Rule:
    return Rule(rid, "t", "grid", check, "e", "info", advice, "a", "e", "s", applies=applies, label=label)


# -- 1. the language's bounds ------------------------------------------------------------------------
@pytest.mark.parametrize("check, says", [
    ("'a' * 10**9", "take numbers only"),                            # (and there is no ** at all)
    ("'a' * 1000000000 == x", "take numbers only"),
    ("x == 1000000000 * 'a'", "take numbers only"),
    ("(1, 2) * 1000000000 == x", "take numbers only"),
    ("'%999999999d' % 1 == x", "take numbers only"),
    ("10**10**10 > x", "outside the rule language"),
    ("x > 10000000000000000000", "beyond ±1e+18"),
    ("x == '" + "y" * 300 + "'", "a string of 300 characters"),
    ("x in (" + ", ".join(["1"] * 70) + ")", "a tuple of 70 values"),
    ("x" + " + 1" * 40 + " > 0", "nested deeper than 30"),
    ("x>0" + " or x>0" * 80, "more than 200 parts"),
    ("x > 0 " * 300, "more than the 1,000 a condition may have"),
    ("x > 0\x00", "is not an expression"),
])
def test_huge_or_unbounded_conditions_are_refused_when_the_rule_is_defined(check, says):
    with pytest.raises(RuleError, match="rule 'my.rule': ") as e:
        rule(check, rid="my.rule")
    assert says in str(e.value)
    assert len(str(e.value)) < 400                                   # the refused text is cut, not echoed whole


def test_a_huge_format_spec_in_advice_or_label_is_refused():
    with pytest.raises(RuleError, match=r"rule 't.x': advice field '\{x:>999999999\}'"):
        rule("x > 1", advice="found {x:>999999999}")
    with pytest.raises(RuleError, match="rule 't.x': label field"):
        rule("x > 1", label="{x:.99999f}")
    assert rule("x > 1", advice="{x:.1f} {x:>8,.0f} {x:.2%}").advice      # the seeds' formats stay allowed


def test_the_seeds_rules_stay_within_the_bounds():
    for r in RULES:                                                   # each was built: none was refused
        assert len(r.check) <= rules.MAX_TEXT_CHARS


@pytest.mark.parametrize("value, says", [
    ("abc", "'x' is 'abc', not a number"),
    ((), "'x' is (), not a number"),
    (10 ** 400, "'x' is beyond ±1e+30"),
])
def test_arithmetic_on_a_value_read_that_is_not_a_bounded_number_is_not_evaluated(value, says):
    status, _, reason = rules.check_one(rule("x * 3 > 1"), {"x": value}, False)
    assert status == "not evaluated" and says in reason


def test_one_rule_raising_does_not_end_the_run():
    bad = [rule("max(x) > 1", rid="t.empty"),                          # ValueError: max() of an empty sequence
           rule("x / 2 > 1", rid="t.big", advice="{x:.1f}"),           # an int too large to format as a float
           rule("y > 1", rid="t.applies", applies="x > 1")]             # raises in `applies`
    good = rule("z >= 1", rid="t.good")

    class Boom(Expr):
        def eval(self, ns):
            raise RuntimeError("a bug in a rule")
    broken = rule("z >= 1", rid="t.broken")
    object.__setattr__(broken, "_check", Boom("z >= 1"))
    out = rules.evaluate([*bad, broken, good], {"grid": [("grid", {"x": (), "y": 2, "z": 1})]}, False)
    by = {r.rule.id: r for r in out}
    assert [r.rule.id for r in out] == ["t.empty", "t.big", "t.applies", "t.broken", "t.good"]
    assert by["t.empty"].status == "not evaluated" and "ValueError: max() arg is an empty sequence" in \
        by["t.empty"].reason
    assert by["t.applies"].status == "not evaluated" and by["t.applies"].reason.startswith(
        "cannot tell whether it applies")
    assert by["t.broken"].status == "not evaluated" and by["t.broken"].reason == \
        "the rule failed (RuntimeError: a bug in a rule)"
    assert by["t.good"].status == "passed"
    (big,) = rules.evaluate([bad[1]], {"grid": [("grid", {"x": 10 ** 400})]}, False)
    # the value cannot be formatted as .1f: shown as a number, cut
    assert big.status == "not evaluated" and big.advice.startswith("10,000,") and len(big.advice) < 260
    text = rules.render(out)
    assert "verify: not evaluated  t.broken" in text and "1 passed, 0 failed, 4 not evaluated" in text


# -- 2. host.imbalance over the grid's shape ---------------------------------------------------------------
def test_a_host_with_slots_and_no_job_is_the_worst_imbalance():
    inv = {"grid": {"hosts": {"a": {"slots": 2}, "b": {"slots": 2}, "c": {"slots": 4}, "d": {"slots": 2},
                              "e": {"slots": 2, "open": False}, "f": {"slots": 0}}}}
    figures = evidence.RunFigures({}, {"a": {"jobs": 3, "real_s": 100.0}, "b": {"jobs": 3, "real_s": 100.0},
                                       "c": {"jobs": 6, "real_s": 200.0}})
    (r,) = rules.evaluate([RULE["host.imbalance"]], evidence.items(inv, figures), True)
    # hosts a, b, c, d (e is closed, f has no slot): 10 slots, 400 s in all → 40 s per slot: shares a 80, b 80,
    # c 160, d 80. a and b are 20 s over (25 % of 80 = 20: within), c 40 s over (25 % of 160 = 40: within),
    # d did nothing: 80 s under
    assert r.subject == "4 hosts" and r.status == "failed"
    assert [(i["subject"], i["label"]) for i in r.items] == [("d", "summed real time 0 s against its share of 80 s "
                                                                   "(0 jobs)")]
    assert r.found == {"checked": 4, "failed": 1, "not_applicable": 0, "not_evaluated": 0}


def test_without_slots_known_the_share_is_an_equal_split_and_one_host_is_not_imbalanced():
    figures = evidence.RunFigures({}, {"a": {"jobs": 1, "real_s": 10.0}, "b": {"jobs": 1, "real_s": 30.0}})
    inv = {"grid": {"hosts": {"a": {"slots": None, "joins": True}, "b": {"slots": 2}}}}
    shares = evidence.host_shares(inv, figures)
    assert {h: f["share_real_s"] for h, f in shares.items()} == {"a": 20.0, "b": 20.0}     # 40 s ÷ 2 hosts
    alone = evidence.RunFigures({}, {"a": {"jobs": 1, "real_s": 10.0}})
    (r,) = rules.evaluate([RULE["host.imbalance"]], evidence.items({"grid": {"hosts": {"a": {"slots": 2}}}}, alone),
                          True)
    assert r.status == "not applicable"                               # run.hosts = 1


# -- 3. the jobs' own I/O beside the machine-wide figures ---------------------------------------------------
def with_own_bytes(bundle: Path, job1_bytes: tuple[int, int]) -> Path:
    """Job 1's rusage gets read_bytes, write_bytes; job 2's 0 and 0 (both recorded)."""
    jobs = [json.loads(x) for x in (bundle / "jobs.jsonl").read_text().splitlines()]
    for j in jobs:
        rb, wb = job1_bytes if j["id"] == 1 else (0, 0)
        j["rusage"].update(read_bytes=rb, write_bytes=wb)
    (bundle / "jobs.jsonl").write_text("".join(json.dumps(j) + "\n" for j in jobs))
    return bundle


def test_mb_s_per_core_uses_the_jobs_own_bytes_and_says_so(tmp_path):
    from statgrid.report import build

    b = with_own_bytes(write_bundle(tmp_path / "b", busy_pct=25.0, iowait_pct=60.0, psi_cpu=5.0, psi_io=70.0),
                       (30_000_000, 10_000_000))
    by = results_by(build.advice(b).results)
    mb = by[("sizing.mb_s_per_core", "grid")]
    # job 1's 40 MB over the 20 s clock (shorter than the 60 s window: the mean) = 2 MB/s on 2 CPUs = 1.0 per
    # core; the device read 5 MB/s in every one of its 20 samples: 2.5 per core, and the jobs' 40 MB are 40 % of
    # its 100 MB
    assert mb.found == {"run.io_mb_s_per_core": pytest.approx(1.0), "run.io_figure": ownio.JOBS_OWN,
                        "run.devices_mb_s_per_core": pytest.approx(2.5)}
    assert mb.status == "failed" and mb.advice.startswith(f"The run moved 1.0 MB/s per core ({ownio.JOBS_OWN}; "
                                                          "the machine's devices: 2.5 MB/s per core)")
    io = by[("run.short_of_io", "grid")]
    assert io.found["run.jobs_io_share_pct"] == pytest.approx(40.0)
    assert io.found["run.pressure_figure"] == ownio.PRESSURE_MACHINE_WIDE
    job = by[("job.short_of_io", "2 jobs")]
    # job 1: 40 MB in its 10 s = 4.0 MB/s; the device's 5.0 MB/s over its run
    assert [i["label"] for i in job.items] == [
        "short of I/O (its machine, all processes: I/O wait 60.0 %, I/O pressure 70 %, busiest device 5 % busy, "
        "devices 5.0 MB/s; the job's own reads and writes 4.0 MB/s; CPU/real 0.10)"]


def test_a_job_that_read_and_wrote_nothing_is_not_short_of_its_machines_io(tmp_path):
    from statgrid.report import build

    b = with_own_bytes(write_bundle(tmp_path / "b", busy_pct=25.0, iowait_pct=60.0, psi_cpu=5.0, psi_io=70.0),
                       (0, 0))
    by = results_by(build.advice(b).results)
    assert by[("job.short_of_io", "2 jobs")].status == "passed"
    odd = by[("job.waited_unexplained", "2 jobs")]
    assert odd.status == "failed" and [i["label"] for i in odd.items] == [
        "waited (CPU/real 0.10) with no CPU or memory pressure on its node and no I/O wait of its own (its reads "
        "and writes: 0.0 MB/s)"]
    # no job bytes at all: MB/s per core falls back on the devices, labelled machine-wide
    assert by[("sizing.mb_s_per_core", "grid")].found["run.io_figure"] == ownio.JOBS_OWN   # 0 bytes is a figure
    b2 = write_bundle(tmp_path / "b2", busy_pct=25.0, iowait_pct=60.0, psi_cpu=5.0, psi_io=70.0)
    mb = results_by(build.advice(b2).results)[("sizing.mb_s_per_core", "grid")]
    assert mb.found == {"run.io_mb_s_per_core": pytest.approx(2.5), "run.io_figure": ownio.MACHINE_WIDE,
                        "run.devices_mb_s_per_core": pytest.approx(2.5)}


def test_the_jobs_bytes_spread_over_their_runs_and_the_best_window():
    jobs = [{"start_ts": 100.5, "end_ts": 102.5, "rusage": {"user_cpu_s": 0, "sys_cpu_s": 0, "read_bytes": 400}},
            {"start_ts": 101.0, "end_ts": 101.0, "stimer_total": {"read_bytes": 7, "write_bytes": 3}},
            {"start_ts": 101.0, "end_ts": 105.0, "rusage": {"user_cpu_s": 0, "sys_cpu_s": 0}}]   # no bytes known
    assert [ownio.job_io_bytes(j) for j in jobs] == [400, 10, None]
    # job 1: 200 B/s over [0.5, 2.5] → 100 in second 0, 200 in 1, 100 in 2; job 2's 10 B at once, in second 1
    assert ownio.spread_per_s(jobs, 100.0) == {0: 100.0, 1: 210.0, 2: 100.0}
    assert ownio.best_window_mean({0: 100.0, 1: 210.0, 2: 100.0}, 2) == 155.0
    assert ownio.best_window_mean({0: 100.0, 2: 100.0}, 60) == pytest.approx(200 / 3)   # second 1 counts as 0


# -- 4. size's slots line ------------------------------------------------------------------------------------
def test_size_says_how_the_slots_per_node_were_chosen():
    from statgrid.cli.size import _slots_note

    shared = {"cores_shared": True, "nodes": 4, "slots_per_node": 2, "cores": 2.0}
    assert _slots_note(shared, {"slots_per_node": 8}) == ("8 per node: the measured 4 grid hosts × 2 slots shared "
                                                          "one machine of 2 core(s), sized as one node")
    own = {"cores_shared": False, "nodes": 2, "slots_per_node": 3, "cores": 4.0}
    assert _slots_note(own, {"slots_per_node": 3}) == "3 per node, as measured"


# -- 5. Running.remove and groups_of ---------------------------------------------------------------------------
def test_running_remove_undoes_add_and_refuses_a_job_it_does_not_count():
    from statgrid.grid.scheduling.policy import Running, groups_of
    from statgrid.job.record import Job

    of_user = groups_of({"g1": ("ann", "bo"), "g2": ("ann",), "g3": ("cy",)})
    assert of_user("ann") == ("g1", "g2") and of_user("bo") == ("g1",) and of_user("zed") == ()
    a = Job(id=1, user="ann", queue="q", name="a", kind="session", argv=[], cwd="/", flow_id=7)
    b = Job(id=2, user="bo", queue="q", name="b", kind="session", argv=[], cwd="/")
    counts = Running()
    counts.add(a, "h1", of_user)
    counts.add(b, "h1", of_user)
    assert (counts.queue_host, counts.group, counts.flow) == ({("q", "h1"): 2}, {"g1": 2, "g2": 1}, {7: 1})
    counts.remove(a, "h1", of_user)
    assert counts == Running({("q", "bo"): 1}, {"bo": 1}, {"g1": 1}, {"q": 1}, {("q", "h1"): 1}, {})
    before = counts.copy()
    with pytest.raises(ValueError, match="job 1 on 'h1' is not counted as running"):
        counts.remove(a, "h1", of_user)
    assert counts == before                                            # unchanged by the refusal
    counts.remove(b, "h1", of_user)
    assert counts == Running()


# -- an inventory edited by hand -------------------------------------------------------------------------------
def test_a_hand_edited_inventory_reads_as_unknown_or_is_a_clear_error(tmp_path):
    from statgrid.errors import StatgridError
    from statgrid.report import build

    figures = evidence.RunFigures({}, {"a": {"jobs": 1, "real_s": 10.0}})
    for grid in ({"hosts": ["a"]}, {"hosts": {"a": 5, "b": {"slots": "2"}}, "queues": [1]}, {"hosts": None}):
        ns = evidence.items({"grid": grid}, figures)                  # not a table / not a record: left out
        assert [h for h, _ in ns["host"]] == ["a"]
    b = write_bundle(tmp_path / "b", busy_pct=25.0, iowait_pct=0.0, psi_cpu=5.0, psi_io=0.0)
    (b / "inventory.json").write_text(json.dumps({"schema": 1, "nodes": {"m": {"cores": "4"}}, "libraries": {},
                                                  "session": {}, "grid": {"hosts": {}}}))
    with pytest.raises(StatgridError, match=r"inventory.json' \(or bundle.json\) holds a value of the wrong sort"):
        build.advice(b)
