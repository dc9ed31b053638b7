"""The SAS program corpus (issue 26, "Tests"): every tests/unit/sas/programs/<group>_<name>.sas runs through
the real driver (statgrid.sas.program.run_program) in a real session, and is checked against its
<name>.expect.json, written by hand from SAS's documented rules (never from statgrid's output):

    {"needs":    ["datastep", "macro", "functions", "formats", "format_catalog", "proc:SORT", ...],
     "sysparm":  "text for -sysparm"                       (optional),
     "env":      {"NAME": "value"}                          (-set NAME VALUE; OUTDIR and DATADIR always set),
     "autoexec": ["filename raw '{data}/x.txt';", ...]     (site setup run first; {out} {data} {tmp} replaced;
                                                            `libname out '{out}';` always comes first),
     "exit":     0,
     "datasets": {"out.x": {"columns": ["a", "b"], "rows": [[1, "x"], [null, ""]], "any_order": false}},
     "sql":      {"out.x": "SELECT … FROM read_csv('{data}/…')"}  (expected rows computed by DuckDB instead),
     "absent":   ["out.y"]                                  (data sets that must not exist afterwards),
     "meta":     {"out.x": {"a": {"length": 4, "label": "A", "format": "DATE9."}}}  (column attributes),
     "log":      ["substring", ...], "log_re": ["regex", ...], "not_log": ["substring", ...],
     "listing":  [[["Obs", "x"], ["1", "3"]], ...]         (blocks of consecutive listing lines, compared
                                                            word by word: SAS's manual pins the words and
                                                            their order; column spacing is PROC PRINT's own)}

Data sets checked are written to the library OUT (a tmp directory): WORK is removed when the run ends.
Values: numbers compare to 1e-9 (relative), a numeric missing is null (Parquet keeps no special-missing
letter); character values compare with trailing blanks removed, a blank value as "".

A case whose program needs a feature the KNOWN_GAPS table names is xfail(strict=True): when the feature
lands the case must pass or be looked at.
Log lines are compared with wrapped NOTE/WARNING/ERROR continuation lines joined to their first line.
"""
from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import duckdb
import pytest

PROGRAMS = Path(__file__).resolve().parent / "programs"
DATA = PROGRAMS / "data"


# ----------------------------------------------------------------------------------------------- parts
# What a program's "needs" may name (documentation of which parts it exercises; every part is in the tree,
# so a program that fails fails: no case is excused because a part is missing).
NEEDS = {"macro", "datastep", "functions", "formats", "format_catalog"}


# Programs whose parts exist but a feature of them does not work yet: name → reason (kept up to date by
# running the corpus; never used to hide a wrong expectation).
KNOWN_GAPS: dict[str, str] = {
}


def check_needs(needs: list[str]) -> None:
    from statgrid.sas.procs import PROCS

    for need in needs:
        known = need[5:] in PROCS if need.startswith("proc:") else need in NEEDS
        assert known, f"unknown need {need!r}: a part or PROC statgrid does not have"


# ----------------------------------------------------------------------------------------------- corpus
def corpus() -> list[tuple[str, Path, dict]]:
    cases = []
    for prog in sorted(PROGRAMS.glob("*.sas")):
        spec = json.loads(prog.with_suffix(".expect.json").read_text())
        cases.append((prog.stem, prog, spec))
    return cases


def params(cases=None):
    out = []
    for name, prog, spec in cases if cases is not None else corpus():
        marks = []
        check_needs(spec.get("needs", []))
        if name in KNOWN_GAPS:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[name]))
        out.append(pytest.param(prog, spec, id=name, marks=marks))
    return out


def fill(text: str, dirs: dict[str, Path]) -> str:
    for key, path in dirs.items():
        text = text.replace("{" + key + "}", str(path))
    return text


def setup_dirs(tmp_path: Path) -> dict[str, Path]:
    out = tmp_path / "out"
    out.mkdir()
    return {"out": out, "data": DATA, "tmp": tmp_path}


def autoexec_text(spec: dict, dirs: dict[str, Path]) -> str:
    lines = [f"libname out '{dirs['out']}';"] + [fill(a, dirs) for a in spec.get("autoexec", [])]
    return "\n".join(lines) + "\n"


def invocation_args(spec: dict, dirs: dict[str, Path], autoexec: Path) -> list[str]:
    args = ["-autoexec", str(autoexec), "-set", "OUTDIR", str(dirs["out"]), "-set", "DATADIR", str(DATA)]
    for k, v in spec.get("env", {}).items():
        args += ["-set", k, fill(v, dirs)]
    if "sysparm" in spec:
        args += ["-sysparm", fill(spec["sysparm"], dirs)]
    return args


# ----------------------------------------------------------------------------------------------- checks
def joined_messages(log: str) -> list[str]:
    """Log lines with each wrapped NOTE/WARNING/ERROR message joined into one line."""
    out: list[str] = []
    in_message = False
    for line in log.split("\n"):
        if re.match(r"(NOTE|WARNING|ERROR)( \d+-\d+)?: ", line):
            out.append(line)
            in_message = True
        elif in_message and line.startswith("      ") and line.strip():
            out[-1] += " " + line.strip()
        else:
            out.append(line)
            in_message = False
    return out


def check_log(log: str, spec: dict) -> None:
    lines = joined_messages(log)
    text = "\n".join(lines)
    for want in spec.get("log", []):
        assert want in text or want in log, f"log line {want!r} missing from the log:\n{log}"
    for pattern in spec.get("log_re", []):
        assert re.search(pattern, text, re.M) or re.search(pattern, log, re.M), \
            f"no log line matches /{pattern}/ (as written or with wrapped messages joined):\n{log}"
    for unwanted in spec.get("not_log", []):
        assert unwanted not in text, f"log has {unwanted!r}, which it must not:\n{log}"


def check_listing(listing: str, spec: dict) -> None:
    rows = [line.split() for line in listing.replace("\f", "\n").split("\n")]
    rows = [r for r in rows if r]
    for block in spec.get("listing", []):
        n = len(block)
        ok = any(rows[i:i + n] == block for i in range(len(rows) - n + 1))
        assert ok, f"listing block {block!r} not found in the listing:\n{listing}"


def dataset_path(out: Path, name: str, dirs: dict[str, Path]) -> Path:
    lib, member = name.lower().split(".")
    assert lib == "out", f"checked data sets live in OUT, not {name}"
    return out / f"{member}.parquet"


def read_dataset(path: Path) -> tuple[list[str], list[tuple]]:
    con = duckdb.connect()
    try:
        rel = con.sql(f"SELECT * FROM read_parquet('{path}')")
        return list(rel.columns), rel.fetchall()
    finally:
        con.close()


def column_metadata(path: Path) -> dict[str, dict]:
    """The columns' SAS attributes kept in the Parquet key-value metadata (statgrid.columns: JSON
    {column: {"label", "format", "length", "informat"}}), keyed by lower-case column name."""
    import pyarrow.parquet as pq

    kv = pq.read_schema(path).metadata or {}
    raw = kv.get(b"statgrid.columns")
    return {k.lower(): v for k, v in json.loads(raw).items()} if raw else {}


def norm(value):
    if value is None:
        return None
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, str):
        return value.rstrip(" ")
    return value


def same(got, want) -> bool:
    got, want = norm(got), norm(want)
    if isinstance(want, str) or isinstance(got, str):
        return (got or "") == (want or "")
    if got is None or want is None:
        return got is None and want is None
    return math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=1e-9)


def rows_match(got: list[tuple], want: list[list], any_order: bool) -> bool:
    if len(got) != len(want):
        return False
    if not any_order:
        return all(len(g) == len(w) and all(same(a, b) for a, b in zip(g, w)) for g, w in zip(got, want))
    left = list(got)
    for w in want:
        for i, g in enumerate(left):
            if len(g) == len(w) and all(same(a, b) for a, b in zip(g, w)):
                del left[i]
                break
        else:
            return False
    return True


def check_datasets(spec: dict, dirs: dict[str, Path]) -> None:
    out = dirs["out"]
    expected = dict(spec.get("datasets", {}))
    for name, sql in spec.get("sql", {}).items():
        con = duckdb.connect()
        try:
            rel = con.sql(fill(sql, dirs))
            expected[name] = {"columns": list(rel.columns), "rows": [list(r) for r in rel.fetchall()],
                              "any_order": False}
        finally:
            con.close()
    for name, want in expected.items():
        path = dataset_path(out, name, dirs)
        assert path.exists(), f"data set {name} was not written ({path})"
        columns, rows = read_dataset(path)
        assert [c.lower() for c in columns] == [c.lower() for c in want["columns"]], \
            f"{name}: columns {columns} != {want['columns']}"
        assert rows_match(rows, want["rows"], want.get("any_order", False)), \
            f"{name}: rows\n  {rows}\n!= expected\n  {want['rows']}"
    for name, columns in spec.get("meta", {}).items():
        meta = column_metadata(dataset_path(out, name, dirs))
        for column, attrs in columns.items():
            got = meta.get(column.lower(), {})
            for key, want in attrs.items():
                value = got.get(key)
                ok = (str(value or "").upper() == str(want).upper()) if isinstance(want, str) else value == want
                assert ok, f"{name}.{column}: {key} is {value!r}, expected {want!r} (all: {got})"
    for name in spec.get("absent", []):
        assert not dataset_path(out, name, dirs).exists(), f"data set {name} must not exist"


def check_run(spec: dict, dirs: dict[str, Path], code: int, log: str, listing: str) -> None:
    assert code == spec.get("exit", 0), f"exit code {code} != {spec.get('exit', 0)}; log:\n{log}"
    check_log(log, spec)
    check_listing(listing, spec)
    check_datasets(spec, dirs)


# ----------------------------------------------------------------------------------------------- the test
@pytest.mark.parametrize("prog, spec", params())
def test_program(prog: Path, spec: dict, session, tmp_path, monkeypatch):
    from statgrid.sas.invocation import parse_invocation
    from statgrid.sas.program import run_program
    from statgrid.sas.saslog import SasLog
    from statgrid.session.log import SessionLog

    dirs = setup_dirs(tmp_path)
    auto = tmp_path / "autoexec.sas"
    auto.write_text(autoexec_text(spec, dirs))
    invocation = parse_invocation(invocation_args(spec, dirs, auto))
    text_io, listing_io = io.StringIO(), io.StringIO()
    log = SasLog(SessionLog(text=text_io, jsonl=io.StringIO(), listing=listing_io))
    code = run_program(prog.read_text(), session, log, invocation, source="")
    check_run(spec, dirs, code, text_io.getvalue(), listing_io.getvalue())


def test_corpus_covers_the_groups():
    """The corpus keeps a program for each item of the issue's list it covers (its file name's prefix)."""
    groups = {name.split("_")[0] for name, _, _ in corpus()}
    assert {"macro", "global", "data", "func", "fmt", "proc", "err"} <= groups
    for name, prog, spec in corpus():
        assert set(spec) <= {"needs", "sysparm", "env", "autoexec", "exit", "datasets", "sql", "absent", "log",
                             "log_re", "not_log", "listing", "meta", "comment"}, name
        assert 3 <= len(prog.read_text().splitlines()) <= 70, f"{name}: keep corpus programs small"


def test_the_checks_catch_wrong_data(tmp_path):
    """The harness itself: a data set that differs from its expectation in a value, a missing, a trailing
    blank that matters (a leading one), the column order or the row count is caught."""
    dirs = setup_dirs(tmp_path)
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM (VALUES (1.0, ' a'), (NULL, 'b  ')) t(x, c)) TO '{dirs['out']}/t.parquet' "
                "(FORMAT parquet)")
    con.close()
    good = {"datasets": {"out.t": {"columns": ["x", "c"], "rows": [[1, " a"], [None, "b"]]}}}
    check_datasets(good, dirs)
    for rows, columns in (([[1, "a"], [None, "b"]], ["x", "c"]), ([[1, " a"], [0, "b"]], ["x", "c"]),
                          ([[1, " a"]], ["x", "c"]), ([[" a", 1], ["b", None]], ["c", "x"])):
        with pytest.raises(AssertionError):
            check_datasets({"datasets": {"out.t": {"columns": columns, "rows": rows}}}, dirs)
    with pytest.raises(AssertionError):
        check_datasets({"absent": ["out.t"]}, dirs)
    with pytest.raises(AssertionError):
        check_log("NOTE: The data set OUT.T has 2\n      observations and 2 variables.\n",
                  {"log": ["NOTE: The data set OUT.T has 3 observations and 2 variables."]})
    check_log("NOTE: The data set OUT.T has 2\n      observations and 2 variables.\n",
              {"log": ["NOTE: The data set OUT.T has 2 observations and 2 variables."]})
