"""Dependency expressions (statgrid.grid.scheduling.depend): grammar, canonical text, messages, evaluation."""
from __future__ import annotations

import itertools

import pytest

from statgrid.errors import UsageError
from statgrid.grid.scheduling import depend
from statgrid.grid.scheduling.depend import MET, NEVER, WAIT, And, JobView, Or, Term, Verdict, evaluate, parse, refs, resolve
from statgrid.job.lifecycle import JobState


# --- grammar and canonical text --------------------------------------------------------------------

@pytest.mark.parametrize("text, canonical", [
    ("done(12)", "done(12)"),
    ("done(12) && (ended(13) || exit(14))", "done(12) && (ended(13) || exit(14))"),
    ("  done ( 12 )&&( ended(13)||exit( 14 ) )  ", "done(12) && (ended(13) || exit(14))"),
    ("done(12)\n&&\tstarted(13)", "done(12) && started(13)"),
    ("DONE(1) && Ended(2)", "done(1) && ended(2)"),
    ("done(1) || done(2) && done(3)", "done(1) || done(2) && done(3)"),          # && binds tighter
    ("(done(1) || done(2)) && done(3)", "(done(1) || done(2)) && done(3)"),
    ("(done(1) && done(2)) || done(3)", "done(1) && done(2) || done(3)"),        # parentheses not needed
    ("done(1) && (done(2) && (done(3)))", "done(1) && done(2) && done(3)"),      # flattened
    ("done(1) || (done(2) || done(3))", "done(1) || done(2) || done(3)"),
    ("((((done(1)))))", "done(1)"),
    ("done(extract) && exit(load-2.b_c)", "done(extract) && exit(load-2.b_c)"),
    ("done(007)", "done(7)"),
    ("(done(1) || done(2)) && (done(3) || done(4) && done(5))",
     "(done(1) || done(2)) && (done(3) || done(4) && done(5))"),
])
def test_canonical_text(text, canonical):
    expr = parse(text)
    assert str(expr) == canonical
    assert format(expr) == canonical
    assert depend.format_expr(expr) == canonical
    assert parse(canonical) == expr                  # the canonical text means the same


def test_structure_follows_precedence_and_flattens():
    assert parse("done(1) || done(2) && done(3)") == Or((Term("done", 1), And((Term("done", 2), Term("done", 3)))))
    assert parse("(done(1) || done(2)) && started(x)") == And((Or((Term("done", 1), Term("done", 2))),
                                                              Term("started", "x")))
    assert parse("done(1) && (done(2) && done(3))") == And((Term("done", 1), Term("done", 2), Term("done", 3)))
    assert parse("exit(a)") == Term("exit", "a")


def test_ids_are_ints_and_names_are_text():
    expr = parse("done(12) && done(x12) && done(1.5)")
    assert [type(r) for r in refs(expr)] == [int, str, str]


# --- messages --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("done(12", "dependency 'done(12' is not valid: missing ')' at position 7; write e.g. done(12)"),
    ("done(12) &&", "dependency 'done(12) &&' is not valid: a condition such as done(12) is missing at position 11; "
                    "write e.g. done(12) && ended(13)"),
    ("!done(12)", "dependency '!done(12)' is not valid: '!' (not) is not supported at position 0; write e.g. "
                  "exit(12) (job 12 failed) or done(12) (it succeeded) instead of a negation"),
    ("done(1) && !exit(2)", "dependency 'done(1) && !exit(2)' is not valid: '!' (not) is not supported at position "
                            "11; write e.g. exit(12) (job 12 failed) or done(12) (it succeeded) instead of a negation"),
    ("done(1) & done(2)", "dependency 'done(1) & done(2)' is not valid: '&' stands alone at position 8; write e.g. "
                          "&& (two characters), as in done(12) && ended(13)"),
    ("done(1) | done(2)", "dependency 'done(1) | done(2)' is not valid: '|' stands alone at position 8; write e.g. "
                          "|| (two characters), as in done(12) && ended(13)"),
    ("(done(1) || done(2)", "dependency '(done(1) || done(2)' is not valid: missing ')' (the '(' at position 0 is not "
                            "closed) at position 19; write e.g. done(12) && ended(13)"),
    ("done(1))", "dependency 'done(1))' is not valid: ')' has no matching '(' at position 7; write e.g. "
                 "done(12) && ended(13)"),
    ('done("extract")', "dependency 'done(\"extract\")' is not valid: quote marks are not taken at position 5; write "
                        "e.g. done(extract), a job name without quotes"),
    ("exit(12, ==1)", "dependency 'exit(12, ==1)' is not valid: ',' is not taken (exit codes and lists are not "
                      "supported) at position 7; write e.g. exit(12) && exit(13)"),
    ("12", "dependency '12' is not valid: a bare job id '12' at position 0; write e.g. done(12) (or ended, exit, "
           "started)"),
    ("extract", "dependency 'extract' is not valid: 'extract' is not a condition (done, ended, exit, started) at "
                "position 0; write e.g. done(extract)"),
    ("finished(3)", "dependency 'finished(3)' is not valid: 'finished' is not a condition (done, ended, exit, "
                    "started) at position 0; write e.g. done(3)"),
    ("done 3", "dependency 'done 3' is not valid: missing '(' after 'done' at position 5; write e.g. done(12)"),
    ("done()", "dependency 'done()' is not valid: done() names no job at position 5; write e.g. done(12) or "
               "done(extract)"),
    ("done(0)", "dependency 'done(0)' is not valid: job id 0 is out of range (1 to 9223372036854775807) at position "
                "5; write e.g. done(12) && ended(13)"),
    ("done(1) done(2)", "dependency 'done(1) done(2)' is not valid: 'done' where '&&' or '||' should be at position "
                        "8; write e.g. done(12) && ended(13)"),
    ("done(1) && ()", "dependency 'done(1) && ()' is not valid: ')' where a condition such as done(12) should be at "
                      "position 12; write e.g. done(12) && ended(13)"),
    ("done(a b)", "dependency 'done(a b)' is not valid: 'b' where ')' should be at position 7; write e.g. "
                  "done(12) && ended(13)"),
    ("", "dependency '' is empty; write e.g. done(12) && ended(13)"),
    (" \t", "dependency ' \\t' is empty; write e.g. done(12) && ended(13)"),
])
def test_error_messages(text, message):
    with pytest.raises(UsageError) as info:
        parse(text)
    assert str(info.value) == message


def test_not_text():
    with pytest.raises(UsageError, match=r"^dependency 12 is not text; write e.g. done\(12\) && ended\(13\)$"):
        parse(12)


def test_long_text_is_quoted_near_the_error():
    text = " && ".join(f"done({i})" for i in range(1, 40)) + " && done(x"
    with pytest.raises(UsageError) as info:
        parse(text)
    assert str(info.value) == ("dependency …'5) && done(36) && done(37) && done(38) && done(39) && done(x' is not "
                               "valid: missing "
                               f"')' at position {len(text)}; write e.g. done(x)")


def test_length_limit():
    assert parse("done(1)".ljust(depend.MAX_CHARS)) == Term("done", 1)
    with pytest.raises(UsageError) as info:
        parse("done(1)".ljust(depend.MAX_CHARS + 1))
    assert str(info.value) == ("dependency 'done(1)" + " " * 53 + "'… is 4,097 characters long, over the limit of "
                               "4,096; depend on fewer jobs, e.g. done(12) && ended(13)")


def test_term_limit():
    assert len(refs(parse("||".join(f"done({i})" for i in range(1, 257))))) == 256
    text = "||".join(f"done({i})" for i in range(1, 258))
    with pytest.raises(UsageError) as info:
        parse(text)
    message = str(info.value)
    assert message.startswith("dependency …")
    assert message.endswith(f" is not valid: over 256 conditions, the limit, at position {text.index('done(257)')}; "
                            "write e.g. a dependency on fewer jobs (chain them, or wait for one job that waits for "
                            "the rest)")


def test_nesting_limit():
    assert parse("(" * 64 + "done(1)" + ")" * 64) == Term("done", 1)
    with pytest.raises(UsageError, match=r"parentheses nest over 64 deep, the limit, at position 64; "):
        parse("(" * 65 + "done(1)" + ")" * 65)
    with pytest.raises(UsageError, match="parentheses nest over 64 deep"):   # no RecursionError
        parse("(" * 4000)


def test_name_length_limit():
    assert refs(parse(f"done({'a' * 128})")) == ["a" * 128]
    with pytest.raises(UsageError, match=r"the job name is 129 characters long, over the limit of 128, at position 5"):
        parse(f"done({'a' * 129})")


# --- refs and resolve ------------------------------------------------------------------------------

def test_refs_in_order_each_once():
    expr = parse("done(b) && (exit(12) || ended(a)) && started(b) || done(12) || done(c)")
    assert refs(expr) == ["b", 12, "a", "c"]
    assert refs(parse("done(5)")) == [5]


def test_resolve_replaces_names_keeps_ids():
    expr = parse("done(extract) && (exit(12) || ended(load))")
    resolved = resolve(expr, {"extract": 101, "load": 102, "other": 103})
    assert str(resolved) == "done(101) && (exit(12) || ended(102))"
    assert refs(resolved) == [101, 12, 102]
    assert str(expr) == "done(extract) && (exit(12) || ended(load))"        # the original is unchanged


def test_resolve_unknown_name_lists_known_ones():
    with pytest.raises(UsageError) as info:
        resolve(parse("done(extract) && done(lod)"), {"extract": 1, "load": 2})
    assert str(info.value) == ("dependency 'done(extract) && done(lod)' names job 'lod', which is not known; known "
                               "names: extract, load")
    with pytest.raises(UsageError, match=r"known names: \(none\)$"):
        resolve(parse("done(x)"), {})
    many = {f"j{i}": i for i in range(1, 31)}
    with pytest.raises(UsageError, match=r"known names: j1, j2, .*, j20, … \(10 more\)$"):
        resolve(parse("done(x)"), many)


# --- evaluation ------------------------------------------------------------------------------------

# (state, started) → outcome of each kind, from the rules of the brief (LSF bsub -w).
TRUTH = {
    ("PEND", False):  {"done": WAIT, "ended": WAIT, "exit": WAIT, "started": WAIT},
    ("PEND", True):   {"done": WAIT, "ended": WAIT, "exit": WAIT, "started": WAIT},     # requeued
    ("RUN", True):    {"done": WAIT, "ended": WAIT, "exit": WAIT, "started": MET},
    ("USUSP", True):  {"done": WAIT, "ended": WAIT, "exit": WAIT, "started": MET},
    ("DONE", True):   {"done": MET, "ended": MET, "exit": NEVER, "started": MET},
    ("EXIT", True):   {"done": NEVER, "ended": MET, "exit": MET, "started": MET},
    ("EXIT", False):  {"done": NEVER, "ended": MET, "exit": MET, "started": NEVER},   # could not launch
    ("KILLED", True): {"done": NEVER, "ended": MET, "exit": MET, "started": MET},
    ("KILLED", False): {"done": NEVER, "ended": MET, "exit": MET, "started": NEVER},  # killed while pending
}


@pytest.mark.parametrize("state, started", list(TRUTH))
@pytest.mark.parametrize("kind", depend.KINDS)
def test_truth_table(kind, state, started):
    verdict = evaluate(Term(kind, 7), {7: JobView(state, started)})
    assert verdict.outcome is TRUTH[state, started][kind]
    assert verdict.reason.startswith(f"{kind}(7): job 7 ")


@pytest.mark.parametrize("text, view, verdict", [
    ("done(12)", JobView("RUN", True), Verdict(WAIT, "done(12): job 12 is RUN")),
    ("done(12)", JobView("DONE", True), Verdict(MET, "done(12): job 12 is DONE")),
    ("done(12)", JobView("EXIT", True), Verdict(NEVER, "done(12): job 12 ended EXIT, so it can never be DONE")),
    ("done(12)", JobView("KILLED"), Verdict(NEVER, "done(12): job 12 ended KILLED, so it can never be DONE")),
    ("ended(12)", JobView("PEND"), Verdict(WAIT, "ended(12): job 12 is PEND")),
    ("ended(12)", JobView("EXIT", True), Verdict(MET, "ended(12): job 12 ended EXIT")),
    ("exit(12)", JobView("DONE", True), Verdict(NEVER, "exit(12): job 12 ended DONE, so it can never be EXIT")),
    ("exit(12)", JobView("KILLED", True), Verdict(MET, "exit(12): job 12 ended KILLED")),
    ("exit(12)", JobView("USUSP", True), Verdict(WAIT, "exit(12): job 12 is USUSP")),
    ("started(12)", JobView("RUN", True), Verdict(MET, "started(12): job 12 is RUN")),
    ("started(12)", JobView("DONE", True), Verdict(MET, "started(12): job 12 started and ended DONE")),
    ("started(12)", JobView("KILLED", False),
     Verdict(NEVER, "started(12): job 12 ended KILLED without starting, so it can never start")),
    ("started(12)", JobView("PEND", False), Verdict(WAIT, "started(12): job 12 is PEND")),
])
def test_term_reasons(text, view, verdict):
    assert evaluate(parse(text), {12: view}) == verdict


def test_missing_job_never_exists():
    assert evaluate(parse("ended(99)"), {12: JobView("DONE", True)}) == Verdict(
        NEVER, "ended(99): job 99 does not exist")
    assert evaluate(parse("done(x)"), {}) == Verdict(NEVER, "done(x): job 'x' does not exist")


def test_jobview_takes_jobstate_and_refuses_unknown_states():
    assert JobView(JobState.RUN, True).state == "RUN"
    assert evaluate(parse("done(1)"), {1: JobView(JobState.DONE, True)}).outcome is MET
    with pytest.raises(ValueError, match="job state 'SSUSP' is not one of PEND, RUN, USUSP, DONE, EXIT, KILLED"):
        JobView("SSUSP")


# Job 1 makes done(1) MET, job 2 WAIT, job 3 NEVER.
STATES = {1: JobView("DONE", True), 2: JobView("RUN", True), 3: JobView("EXIT", True)}
JOB_FOR = {MET: 1, WAIT: 2, NEVER: 3}
RANK = {NEVER: 0, WAIT: 1, MET: 2}


@pytest.mark.parametrize("n", [2, 3])
def test_and_or_truth_tables(n):
    """Kleene's three-valued logic with NEVER < WAIT < MET: And is the minimum, Or the maximum."""
    for combo in itertools.product([MET, WAIT, NEVER], repeat=n):
        terms = tuple(Term("done", JOB_FOR[o]) for o in combo)
        assert evaluate(And(terms), STATES).outcome is min(combo, key=RANK.get), combo
        assert evaluate(Or(terms), STATES).outcome is max(combo, key=RANK.get), combo


def test_and_or_reasons():
    assert evaluate(parse("done(1) && done(2) && done(3)"), STATES) == Verdict(
        NEVER, "done(3): job 3 ended EXIT, so it can never be DONE")
    assert evaluate(parse("done(1) && done(2)"), STATES) == Verdict(WAIT, "done(2): job 2 is RUN")
    assert evaluate(parse("done(1) && ended(3)"), STATES) == Verdict(MET, "all 2 conditions are met")
    assert evaluate(parse("done(3) || done(2) || done(1)"), STATES) == Verdict(MET, "done(1): job 1 is DONE")
    assert evaluate(parse("done(3) || done(2)"), STATES) == Verdict(WAIT, "done(2): job 2 is RUN")
    assert evaluate(parse("done(3) || exit(1)"), STATES) == Verdict(
        NEVER, "done(3): job 3 ended EXIT, so it can never be DONE; nor can the other alternative be met")
    assert evaluate(parse("done(3) || exit(1) || done(99)"), STATES) == Verdict(
        NEVER, "done(3): job 3 ended EXIT, so it can never be DONE; nor can the other 2 alternatives be met")


def test_nested_evaluation():
    expr = parse("done(1) && (ended(2) || exit(3))")                       # the brief's example shape
    assert evaluate(expr, STATES) == Verdict(MET, "all 2 conditions are met")
    assert evaluate(parse("done(2) || ended(3) && exit(1)"), STATES) == Verdict(
        WAIT, "done(2): job 2 is RUN")
    assert evaluate(parse("(done(2) || done(3)) && ended(1)"), STATES) == Verdict(WAIT, "done(2): job 2 is RUN")
    resolved = resolve(parse("done(a) && started(b)"), {"a": 1, "b": 2})
    assert evaluate(resolved, STATES) == Verdict(MET, "all 2 conditions are met")
