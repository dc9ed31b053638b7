"""Workload files (job counts of the papers, Table 1's mix, schedule) and the data generator
(deterministic, restartable, text layouts that import)."""
from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from conftest import run_cli
from statgrid.bench import datagen
from statgrid.bench import workload as W
from statgrid.errors import UsageError


@pytest.mark.parametrize("sessions,jobs", [(10, 36), (20, 72), (30, 108), (40, 144), (80, 288)])
def test_shipped_workloads_have_the_papers_job_counts(sessions, jobs):
    w = W.load(sessions=sessions)
    assert w.sessions == sessions and w.n_jobs == jobs and len(w.schedule()) == jobs
    kinds = Counter(j.template.kind for j in w.schedule())
    assert set(kinds) == {"io", "cpu", "memory"}


@pytest.mark.parametrize("sessions", [10, 20, 30, 40, 80])
def test_shipped_files_are_what_render_shipped_writes(sessions):
    assert W.shipped(f"ma{sessions}").read_text() == W.render_shipped(sessions, 6 * sessions)


@pytest.mark.parametrize("sessions,jobs", [(1, 4), (5, 18), (15, 54), (25, 90), (50, 180), (7, 25)])
def test_other_session_counts_get_the_same_mix(sessions, jobs):
    w = W.load(sessions=sessions)
    assert w.sessions == sessions and w.n_jobs == jobs and w.ramp_s == 6 * sessions
    assert w.name == f"MA{sessions}" and w.text.startswith("# Mixed Analytics")
    for name, count in W.ma_counts(sessions).items():       # never further than 1 from the exact share
        assert abs(count - W._MA10[name] * sessions / 10) < 1


def test_table1_mix_by_user_type():
    w = W.parse(W.shipped("ma40_table1").read_text(), "ma40_table1.toml")
    by_type = Counter(g.template.user_type for g in w.groups for _ in range(g.count))
    assert by_type == {"Base SAS statistics": 104, "advanced analytics": 40, "data mining": 4, "ETL": 4}


@pytest.mark.parametrize("name, sessions, jobs", [("ma20_seed002", 20, 77), ("ma30_seed003", 30, 101)])
def test_the_seeds_own_job_counts(name, sessions, jobs):
    """Seed 002 launched 77 jobs per node for MA20, seed 003 ran 101 for MA30: the files that follow them."""
    w = W.load(name)                                         # a shipped workload by its name
    assert (w.sessions, w.n_jobs) == (sessions, jobs)
    assert w.name.startswith(f"MA{sessions} (seed 00")
    kinds = Counter(g.template.kind for g in w.groups for _ in range(g.count))
    assert sum(kinds.values()) == jobs and kinds["cpu"] > 0 and kinds["io"] > 0 and kinds["memory"] > 0
    with pytest.raises(UsageError, match="ma30_seed003"):     # an unknown name lists the shipped ones
        W.load("ma31_nosuch")


def test_ramp_profile_puts_a_peak_between_off_peak_parts():
    w = W.parse("[global]\nsessions = 10\nramp_s = 50\nramp_profile = [1, 3, 1]\n[cpu_glm]\ncount = 10\n")
    third = 50 / 3
    # shares 0.2 / 0.6 / 0.2: session k starts at the k/10 quantile, evenly within its slice (worked by hand)
    want = [0, third * 0.5, third, third * (1 + 1 / 6), third * (1 + 2 / 6), third * 1.5, third * (1 + 4 / 6),
            third * (1 + 5 / 6), 2 * third, third * 2.5]
    assert [w.start_offset_s(k) for k in range(10)] == pytest.approx(want)
    assert sorted({j.start_offset_s for j in w.schedule()}) == pytest.approx(want)
    even = W.parse("[global]\nsessions = 4\nramp_s = 40\nramp_profile = [2, 2]\n[cpu_glm]\ncount = 4\n")
    assert [even.start_offset_s(k) for k in range(4)] == pytest.approx([0, 10, 20, 30])   # as with no profile
    peak = W.load("ma20_peak")
    in_peak = sum(1 for k in range(20) if 40 <= peak.start_offset_s(k) < 80)
    assert in_peak == round(20 * 8 / 12)                        # the middle third holds 2/3 of the sessions
    for bad in ("[1, -1]", "[0, 0]", '["a"]'):
        with pytest.raises(UsageError, match="ramp_profile"):
            W.parse(f"[global]\nramp_profile = {bad}\n[cpu_glm]\ncount = 1\n")


def test_schedule_deals_round_robin_ramps_and_puts_trail_out_last():
    w = W.parse("""
        [global]
        sessions = 3
        ramp_s = 30
        [cpu_glm]
        count = 4
        [dm_forest]
        count = 2
        trail_out = true
    """)
    plan = w.schedule()
    by_session = {s: [j for j in plan if j.session == s] for s in (1, 2, 3)}
    assert [len(v) for v in by_session.values()] == [2, 2, 2]
    assert [j.start_offset_s for j in plan if j.order == 1] == [0.0, 10.0, 20.0]
    for jobs in by_session.values():
        trail = [j.order for j in jobs if j.trail_out]
        assert all(o > max((j.order for j in jobs if not j.trail_out), default=0) for o in trail)


def test_demo_sessions_are_planned_to_run_at_once_on_every_host():
    # Issue 14 item 7: the demo's sessions started 6 s apart and hardly overlapped. Its schedule
    # now starts every session at once: more sessions planned active together than the demo
    # grid's 4 hosts × 2 slots, whatever the jobs' durations.
    for sessions in (10, 2):
        w = W.demo(sessions)
        plan = w.schedule()
        first_submits = Counter(j.start_offset_s for j in plan if j.order == 1)
        assert first_submits == {0.0: sessions}
    w = W.demo()
    assert (w.sessions, w.n_jobs, w.scale) == (10, 36, W.DEMO_SCALE)
    assert max(Counter(j.start_offset_s for j in w.schedule() if j.order == 1).values()) > 4 * 2
    assert "ramp_s = 0" in w.text and f"scale = {W.DEMO_SCALE:g}" in w.text     # the bundle keeps what ran
    assert W.demo(3, 0.0001).scale == 0.0001 and "scale = 0.0001" in W.demo(3, 0.0001).text


@pytest.mark.parametrize("text,message", [
    ("[global]\nsesions = 3\n[cpu_glm]\n", "sesions is not a workload setting"),
    ("[global]\nsessions = 0\n[cpu_glm]\n", "sessions = 0 must be at least 1"),
    ("[cpu_glmm]\ncount = 1\n", "template 'cpu_glmm', which does not exist"),
    ("[cpu_glm]\ncount = 'two'\n", r"\[cpu_glm\] count = 'two' has the wrong type"),
    ("[cpu_glm]\ncount = 0\n", "no jobs"),
    ("[global\n", "not valid TOML"),
])
def test_workload_errors_name_section_and_key(text, message):
    with pytest.raises(UsageError, match=message):
        W.parse(text, "w.toml")


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_datagen_same_seed_same_bytes_and_restart(session, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    session.libname("ga", a)
    session.libname("gb", b)
    names = ["household", "model297", "design", "rows1k"]
    for lib in ("ga", "gb"):
        for n in names:
            datagen.generate(session, n, 0.0001, 7, lib)
    for n in names:
        assert _digest(datagen.file_of(a, n)) == _digest(datagen.file_of(b, n)), n
    assert datagen.is_done(a, "design", 0.0001, 7) and not datagen.is_done(a, "design", 0.0001, 8)
    assert not datagen.is_done(a, "design", 0.001, 7)           # another scale: rows differ
    datagen.generate(session, "design", 0.0001, 8, "gb")
    assert _digest(datagen.file_of(a, "design")) != _digest(datagen.file_of(b, "design"))
    # the text layout imports: every record, every field, numbers where numbers are
    ref = session.import_fixed(str(datagen.file_of(a, "household")), "work.hh", datagen.layout("household"))
    cols = session.columns(ref.scan_sql())
    assert session.nrows(ref) == datagen.plan(0.0001)["household"] and len(cols) == 115
    assert dict(cols)["h003"] == "DOUBLE" and dict(cols)["h004"] == "VARCHAR"


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_datagen_cli_dry_run_and_errors(home):
    r = run_cli("datagen", "--scale", "1", "--dry-run")
    assert r.returncode == 0 and "person" in r.stdout and "90,000,000 rows" in r.stdout
    r = run_cli("datagen", "--scale", "0")
    assert r.returncode == 2 and "--scale 0.0 must be a positive number" in r.stderr
    r = run_cli("datagen", "--scale", "0.001", "--only", "nope")
    assert r.returncode == 2 and "'nope' is not a data set" in r.stderr


def test_changed_settings_are_in_the_text_a_bundle_keeps():
    """bench mixed --scale / bench scale's ramp: the W.toml kept with the results says what ran."""
    w = W.load(None, 10)
    changed = w.with_globals(scale=0.0031, ramp_s=12)
    assert (changed.scale, changed.ramp_s) == (0.0031, 12.0)
    again = W.parse(changed.text, "kept")
    assert (again.scale, again.ramp_s, again.groups) == (0.0031, 12.0, w.groups)
    bare = W.parse('[cpu]\ntemplate = "cpu_glm"\ncount = 2\n', "bare.toml").with_globals(scale=0.5)
    assert W.parse(bare.text, "kept").scale == 0.5 and bare.n_jobs == 2
    # a header TOML allows with spaces and a comment is the same table (a second [global] was added)
    spaced = W.parse('[ global ]  # settings\nscale = 0.1\n[cpu]\ntemplate = "cpu_glm"\n', "s.toml")
    assert W.parse(spaced.with_globals(scale=0.25).text, "kept").scale == 0.25


# ---------------------------------------------------------------- the SAS twins (issue 27 item 3)
def test_every_template_has_a_python_job_and_a_sas_twin():
    for t in W.TEMPLATES.values():
        py, sas = t.job_path("python"), t.job_path("sas")
        assert t.path == py and py.suffix == ".py" and sas.suffix == ".sas", t.name
        assert py.is_file() and sas.is_file(), t.name
        assert "%sysget(STATGRID_BENCH_LIBRARY)" in sas.read_text(), t.name       # parameters from the job's env
    with pytest.raises(UsageError, match="'r' is not one of python, sas"):
        W.TEMPLATES["cpu_glm"].job_path("r")


def test_a_sas_twin_gets_what_its_python_job_sets_in_code_as_invocation_options():
    big_sort = W.TEMPLATES["io_big_sort"]
    assert "memsize=\"256M\"" in big_sort.job_path("python").read_text()
    assert big_sort.job_argv("sas") == [str(big_sort.job_path("sas")), "-memsize", "256M"]
    assert big_sort.job_argv("python") == [str(big_sort.job_path("python"))]
    assert W.TEMPLATES["cpu_glm"].job_argv("sas") == [str(W.TEMPLATES["cpu_glm"].job_path("sas"))]


def test_new_families_are_templates_but_not_in_the_shipped_mix():
    new = {"macro_codegen", "cpu_stepwise_wide"}
    assert new <= set(W.TEMPLATES) and not new & set(W._MA10)
    w = W.parse("[global]\nsessions = 1\n[macro_codegen]\ncount = 1\n[cpu_stepwise_wide]\ncount = 1\n", "new.toml")
    assert [j.template.name for j in w.schedule()] == ["macro_codegen", "cpu_stepwise_wide"]
    assert sum(W.ma_counts(10).values()) == 36


def _input_fields(sas_text: str, infile: str) -> list[tuple[str, int, int, str]]:
    """(name, start, end, type) of the column-input INPUT statement after `infile "…/<infile>"`."""
    import re

    after = sas_text[sas_text.index(f'/{infile}"'):]
    statement = after[after.index("input") + len("input"):after.index(";", after.index("input"))]
    return [(n, int(a), int(b), "$" if dollar else "num")
            for n, dollar, a, b in re.findall(r"(\w+)\s+(\$\s+)?(\d+)-(\d+)", statement)]


@pytest.mark.parametrize("template,infile", [("io_import_household", "household.txt"),
                                             ("io_import_person", "person.txt"),
                                             ("io_etl_lookup", "customer_dim.txt"),
                                             ("io_sql_semijoin", "customer_dim.txt"),
                                             ("etl_star", "customer_dim.txt")])
def test_sas_column_input_reads_the_fields_datagen_writes(template, infile):
    """The twins' INPUT statements are written out as an analyst would; they must agree with
    datagen.layout field by field (a '$' field is character, every other one numeric)."""
    text = W.TEMPLATES[template].job_path("sas").read_text()
    expected = [(n, a, b, "$" if t == "$" else "num") for n, a, b, t in datagen.layout(infile[:-4])]
    assert _input_fields(text, infile) == expected
