"""Mixed Analytics workloads: the job templates and the declarative workload files.

A workload file is TOML, like a fio job file: a [global] section and one section per job group.

    [global]
    name = "MA10"            # shown in reports
    sessions = 10            # simulated users; each runs its jobs one after another
    ramp_s = 60              # sessions start evenly spread over this many seconds
    ramp_profile = [1, 3, 1] # optional: how many of them start in each equal slice of the ramp (a peak
                             # between off-peak parts: 1/5, 3/5, 1/5 of the sessions here); default even
    concurrency = 1          # jobs a session may run at once
    scale = 0.0002           # datagen scale of the data the jobs read
    seed = 1

    [io_import_household]    # a job group: its name is the template's unless template= says
    count = 2                # jobs of this template in the whole workload
    trail_out = false        # true: run after every other job of its session (the long tail)

Jobs are dealt to sessions round-robin in file order (group by group), so each session gets a mix;
trail-out jobs go last in their session. The shipped files (statgrid/bench/workloads/) give 36
jobs per 10 sessions (10 → 36, 20 → 72, 30 → 108, 40 → 144, 80 → 288, as seed 000) and the
40-session mix by user type of seed 000's Table 1 (which adds up to 152 jobs, not the 144 its
text gives: the file keeps the table's counts).
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from statgrid.errors import UsageError

KINDS = ("io", "cpu", "memory")
# The languages a template's job is written in: jobs/<name>.py (the statgrid.session() API) and its SAS
# twin jobs/<name>.sas (the same data sets, steps and outputs, in the SAS a site's analysts would write).
LANGS = ("python", "sas")
USER_TYPES = ("Base SAS statistics", "advanced analytics", "data mining", "ETL")


@dataclass(frozen=True)
class Template:
    name: str
    kind: str                 # io / cpu / memory
    user_type: str            # seed 000 Table 1
    description: str
    # SAS invocation options of the .sas twin (what the Python job sets in code, such as memsize, SAS takes
    # only at startup: a site's job script runs `sas -memsize 256M prog.sas`).
    sas_options: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return self.job_path("python")

    def job_path(self, lang: str = "python") -> Path:
        """The job file in `lang`: jobs/<name>.py or jobs/<name>.sas."""
        if lang not in LANGS:
            raise UsageError(f"language {lang!r} is not one of {', '.join(LANGS)}.")
        suffix = ".py" if lang == "python" else ".sas"
        return Path(str(resources.files("statgrid.bench") / "jobs" / f"{self.name}{suffix}"))

    def job_argv(self, lang: str = "python") -> list[str]:
        """What a grid job of this template runs: its job file (and a SAS twin's invocation options)."""
        return [str(self.job_path(lang)), *(self.sas_options if lang == "sas" else ())]


TEMPLATES: dict[str, Template] = {t.name: t for t in [
    Template("io_import_household", "io", "Base SAS statistics", "fixed-width household file import, means, sort"),
    Template("io_import_person", "io", "Base SAS statistics", "fixed-width person file import, SQL, freq"),
    Template("io_datastep_big", "io", "Base SAS statistics", "very large data step over the messy table"),
    Template("io_sql_semijoin", "io", "ETL", "SQL semi-join of facts to a filtered dimension"),
    Template("io_big_sort", "io", "Base SAS statistics", "big sort spilling to UTIL, NODUPKEY",
             ("-memsize", "256M")),
    Template("io_etl_lookup", "io", "ETL", "hash lookup of facts to the customer dimension"),
    Template("io_random_read", "io", "Base SAS statistics", "random reads (POINT=) of 128 B, 1 KB, 10 KB rows"),
    Template("io_random_write", "io", "Base SAS statistics", "random reads, changes, writes of 1 KB rows"),
    Template("cpu_stepwise_reg", "cpu", "advanced analytics", "stepwise regression on the 297-column table"),
    Template("cpu_stepwise_logistic", "cpu", "advanced analytics", "stepwise logistic on the 297-column table"),
    Template("cpu_glm", "cpu", "Base SAS statistics", "GLM with class interactions, Type III, LS-means"),
    Template("cpu_genmod", "cpu", "advanced analytics", "Poisson, negative binomial and normal GLMs"),
    Template("cpu_mixed", "cpu", "advanced analytics", "mixed model, random intercept and slope"),
    Template("cpu_rank_transpose_freq", "cpu", "Base SAS statistics", "rank, transpose, frequency tables"),
    Template("mem_univariate", "memory", "Base SAS statistics", "univariate on many variables by group"),
    Template("mem_tabulate", "memory", "Base SAS statistics", "multi-way summary tables"),
    Template("mem_wide_arrays", "memory", "advanced analytics", "standardize and summarize 292 columns at once"),
    Template("dm_forest", "cpu", "data mining", "random forest with variable importance"),
    Template("dm_kmeans", "cpu", "data mining", "k-means segmentation"),
    Template("etl_star", "io", "ETL", "star-schema mart: dimension load, lookup, aggregate, sort"),
    # Families of the seeds' mix beyond MA's 20 (issue 27 item 3): in TEMPLATES for workload files to
    # name, not in the shipped MA counts (_MA10).
    Template("macro_codegen", "cpu", "Base SAS statistics", "200 generated summary steps (macro %DO loops)"),
    Template("cpu_stepwise_wide", "cpu", "advanced analytics", "stepwise regression on all 292 x variables"),
    Template("cpu_gee", "cpu", "advanced analytics", "GEE: binary outcome over visits, exchangeable correlation"),
    Template("cpu_hpmixed", "cpu", "advanced analytics", "sparse mixed model: a random intercept per subject"),
    Template("cpu_surveylogistic", "cpu", "advanced analytics", "survey-weighted logistic (strata, PSUs, weights)"),
]}


@dataclass(frozen=True)
class Group:
    name: str
    template: Template
    count: int
    trail_out: bool = False


# TOML table headers as a workload file may write them: `[global]`, `[ global ]  # comment`.
_GLOBAL_HEADER = re.compile(r"\s*\[\s*global\s*\]\s*(#.*)?$")
_TABLE_HEADER = re.compile(r"\s*\[")


@dataclass(frozen=True)
class Workload:
    name: str
    sessions: int
    ramp_s: float
    concurrency: int
    scale: float
    seed: int
    groups: tuple[Group, ...]
    source: str = ""
    text: str = ""                 # the workload file as read (what a results bundle keeps)
    ramp_profile: tuple[float, ...] = ()   # weights of equal slices of the ramp (peak/off-peak); () = even

    def start_offset_s(self, k: int) -> float:
        """When session k (0-based) starts: the k/sessions quantile of the ramp's arrivals — even over ramp_s,
        or with ramp_profile as many sessions in each equal slice as its share of the weights, evenly within
        the slice (so [1, 1] and no profile give the same starts)."""
        if self.sessions <= 1 or self.ramp_s <= 0:
            return 0.0
        q = k / self.sessions
        weights = self.ramp_profile or (1.0,)
        total, width, acc = sum(weights), self.ramp_s / len(weights), 0.0
        for i, w in enumerate(weights):
            share = w / total
            if share > 0 and q < acc + share - 1e-12:
                return width * (i + (q - acc) / share)
            acc += share
        return self.ramp_s

    @property
    def n_jobs(self) -> int:
        return sum(g.count for g in self.groups)

    def with_globals(self, **values: float) -> "Workload":
        """This workload with [global] settings changed (scale=…, ramp_s=…) in the record and in its
        text alike, so the workload.toml a bundle keeps says what ran (a --scale given on the command
        line was run but the file said the old scale)."""
        lines = self.text.splitlines()
        start = next((i for i, line in enumerate(lines) if _GLOBAL_HEADER.match(line)), None)
        if start is None:
            lines[:0], start = ["[global]", ""], 0
        end = next((i for i in range(start + 1, len(lines)) if _TABLE_HEADER.match(lines[i])), len(lines))
        for key, value in values.items():
            if key not in ("scale", "ramp_s"):
                raise ValueError(f"with_globals: {key!r} is not a numeric [global] setting (scale, ramp_s)")
            setting = f"{key} = {value!r}"
            at = next((i for i in range(start + 1, end) if lines[i].split("=")[0].strip() == key), None)
            if at is None:
                lines.insert(start + 1, setting)
                end += 1
            else:
                lines[at] = setting
        return parse("\n".join(lines) + "\n", self.source)

    def schedule(self) -> list["PlannedJob"]:
        """Every job with its session, its place in the session and the session's start offset."""
        per_session: list[list[Group]] = [[] for _ in range(self.sessions)]
        trail: list[list[Group]] = [[] for _ in range(self.sessions)]
        k = 0
        for g in self.groups:
            for _ in range(g.count):
                (trail if g.trail_out else per_session)[k % self.sessions].append(g)
                k += 1
        out = []
        for sess in range(self.sessions):
            start = self.start_offset_s(sess)
            for order, g in enumerate(per_session[sess] + trail[sess]):
                out.append(PlannedJob(sess + 1, order + 1, g.name, g.template, start, g.trail_out))
        return out


@dataclass(frozen=True)
class PlannedJob:
    session: int
    order: int
    group: str
    template: Template
    start_offset_s: float
    trail_out: bool = False


_GLOBAL_KEYS = {"name": str, "sessions": int, "ramp_s": (int, float), "concurrency": int, "scale": (int, float),
                "seed": int, "ramp_profile": list}
_GROUP_KEYS = {"template": str, "count": int, "trail_out": bool}


def parse(text: str, source: str = "<workload>") -> Workload:
    """A workload file's text → Workload; every mistake named with its section and key."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{source}: not valid TOML ({exc}).") from None
    glob = raw.pop("global", {})
    if not isinstance(glob, dict):
        raise UsageError(f"{source}: [global] must be a section.")
    for key, value in glob.items():
        if key not in _GLOBAL_KEYS:
            raise UsageError(f"{source}: [global] {key} is not a workload setting; allowed: {', '.join(_GLOBAL_KEYS)}.")
        if not isinstance(value, _GLOBAL_KEYS[key]) or isinstance(value, bool):
            raise UsageError(f"{source}: [global] {key} = {value!r} has the wrong type.")
    sessions = glob.get("sessions", 10)
    if sessions < 1:
        raise UsageError(f"{source}: [global] sessions = {sessions} must be at least 1.")
    concurrency = glob.get("concurrency", 1)
    if concurrency < 1:
        raise UsageError(f"{source}: [global] concurrency = {concurrency} must be at least 1.")
    ramp = float(glob.get("ramp_s", 60))
    scale = float(glob.get("scale", 0.0002))
    if ramp < 0 or not scale > 0:
        raise UsageError(f"{source}: [global] ramp_s must be ≥ 0 and scale > 0.")
    profile = glob.get("ramp_profile", [])
    if profile and (any(isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0 for w in profile)
                    or not sum(profile) > 0):
        raise UsageError(f"{source}: [global] ramp_profile = {profile!r} must be numbers ≥ 0 with a positive sum "
                         "(the share of sessions starting in each equal slice of ramp_s), e.g. [1, 3, 1].")
    groups = []
    for name, sec in raw.items():
        if not isinstance(sec, dict):
            raise UsageError(f"{source}: {name} = {sec!r} is outside any section; put settings under [global].")
        for key, value in sec.items():
            if key not in _GROUP_KEYS:
                raise UsageError(f"{source}: [{name}] {key} is not a job group setting; allowed: "
                                 f"{', '.join(_GROUP_KEYS)}.")
            if not isinstance(value, _GROUP_KEYS[key]) or (key == "count" and isinstance(value, bool)):
                raise UsageError(f"{source}: [{name}] {key} = {value!r} has the wrong type.")
        tname = sec.get("template", name)
        if tname not in TEMPLATES:
            raise UsageError(f"{source}: [{name}] names template {tname!r}, which does not exist; templates: "
                             f"{', '.join(TEMPLATES)}.")
        count = sec.get("count", 1)
        if count < 0:
            raise UsageError(f"{source}: [{name}] count = {count} must be ≥ 0.")
        groups.append(Group(name, TEMPLATES[tname], count, sec.get("trail_out", False)))
    if not any(g.count for g in groups):
        raise UsageError(f"{source}: no jobs: add a section per job group with count ≥ 1.")
    return Workload(glob.get("name", Path(source).stem), sessions, ramp, concurrency, scale, glob.get("seed", 1),
                    tuple(groups), source, text, tuple(float(w) for w in profile))


def shipped(name: str) -> Path:
    return Path(str(resources.files("statgrid.bench") / "workloads" / f"{name}.toml"))


def load(path: str | Path | None = None, sessions: int | None = None) -> Workload:
    """A workload file (or a shipped one by name), or the shipped one for `sessions` (ma10, ma20, …); for other numbers of
    sessions the same mix, 3.6 jobs per session (see `render_shipped`)."""
    if path is None:
        sessions = sessions or 10
        if sessions < 1:
            raise UsageError(f"--sessions {sessions} must be at least 1.")
        p = shipped(f"ma{sessions}")
        if not p.exists():
            return parse(render_shipped(sessions, RAMP_PER_SESSION_S * sessions), f"<MA{sessions}>")
    else:
        p = Path(path)
        if not p.is_file() and p.suffix == "" and shipped(str(path)).is_file():
            p = shipped(str(path))            # a shipped workload by name: ma40_table1, ma20_seed002, …
        if not p.is_file():
            names = sorted(f.stem for f in shipped("x").parent.glob("*.toml"))
            raise UsageError(f"--workload {str(p)!r} does not exist; give a workload file or a shipped name: "
                             f"{', '.join(names)}.")
    return parse(p.read_text(), str(p))


_MA10 = {  # jobs per 10 sessions: 36 (seed 000); MA20's kind split of about half compute, some memory
    "io_import_household": 2, "io_import_person": 2, "io_datastep_big": 2, "io_sql_semijoin": 2, "io_big_sort": 2,
    "io_etl_lookup": 2, "io_random_read": 2, "io_random_write": 1, "etl_star": 1,
    "cpu_stepwise_reg": 2, "cpu_stepwise_logistic": 2, "cpu_glm": 3, "cpu_genmod": 2, "cpu_mixed": 2,
    "cpu_rank_transpose_freq": 2, "mem_univariate": 2, "mem_tabulate": 2, "mem_wide_arrays": 1,
    "dm_forest": 1, "dm_kmeans": 1,
}
_TRAIL = {"cpu_mixed", "dm_forest"}
RAMP_PER_SESSION_S = 6.0        # the shipped files start 10 sessions over 60 s, 20 over 120 s, …


# The demo (`statgrid demo`) is there to show a grid at work: every session logs on at once, as
# on a Monday morning, so the first jobs of all sessions are submitted together and the grid's
# slots fill at once on every host (with a ramp of 6 s per session and jobs of a few seconds at
# the demo's scale, sessions hardly overlapped: one lane in the timeline; issue 14, item 7).
# A larger scale than the shipped files' makes each job last long enough to be seen in the
# timeline while the whole demo stays within about 3 minutes on 2 cores.
DEMO_RAMP_S = 0.0
DEMO_SCALE = 0.0005


def demo(sessions: int = 10, scale: float = DEMO_SCALE) -> Workload:
    """The demo's workload: the MA mix for `sessions` sessions, all starting at once, at `scale`.
    Its text (what the bundle keeps) says so."""
    if sessions < 1:
        raise UsageError(f"--sessions {sessions} must be at least 1.")
    return parse(render_shipped(sessions, DEMO_RAMP_S, scale), f"<demo MA{sessions}>")


def ma_counts(sessions: int) -> dict[str, int]:
    """Jobs per template for `sessions` sessions: the MA10 mix × sessions/10, rounded so the total is
    round(3.6 × sessions) (largest remainders; ties to the template listed first)."""
    exact = {name: count * sessions / 10 for name, count in _MA10.items()}
    counts = {name: int(x) for name, x in exact.items()}
    short = round(sum(_MA10.values()) * sessions / 10) - sum(counts.values())
    for name in sorted(exact, key=lambda n: -(exact[n] - counts[n]))[:short]:
        counts[name] += 1
    return counts


def render_shipped(sessions: int, ramp_s: float, scale: float = 0.0002) -> str:
    """The text of an MA<sessions> file: 36 jobs per 10 sessions (seed 000), trail-out jobs last."""
    lines = ["# Mixed Analytics workload: 36 jobs per 10 sessions (seed 000), trail-out jobs last.",
             "[global]", f'name = "MA{sessions}"', f"sessions = {sessions}", f"ramp_s = {ramp_s:g}",
             "concurrency = 1", f"scale = {scale:g}", "seed = 1", ""]
    for name, count in ma_counts(sessions).items():
        if count:
            lines += [f"[{name}]", f"count = {count}"] + (["trail_out = true"] if name in _TRAIL else []) + [""]
    return "\n".join(lines)
