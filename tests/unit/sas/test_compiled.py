"""The NUMBA DATA step engine (statgrid/sas/datastep/compiled/): each program runs twice in a real session,
with DSENGINE=PYTHON (the row-by-row engine: separate, tested code, the reference) and DSENGINE=NUMBA, and
the two must agree on the data sets written (rows, order, values to the bit, column attributes) and on the
log's NOTE lines; the NUMBA run must really have taken the step (program.extras["datastep_engines"]). Steps
outside the engine's subset are left to Python with nothing written by the NUMBA engine."""
from __future__ import annotations

import io
import json
import math
import re
import struct

import duckdb
import pytest

pytest.importorskip("numba")

# an input made by a step the NUMBA engine refuses (character assignments): always run in Python
INPUT = """
data out.inp;
  length c $ 6;
  do i = 1 to 40;
    g = int((i - 1) / 7);
    h = mod(i, 3);
    if mod(i, 5) = 0 then x = .;
    else x = mod(i * 37, 11) / 4 - 1;
    c = substr('abcdefghij', 1 + mod(i, 6));
    if i = 9 then c = ' ';
    y = i * 0.1;
    output;
  end;
  format x 8.3;
  label y = 'Y value';
run;
"""


def _run(session, tmp_path, text: str, engine: str):
    from statgrid.sas.program import _default_runners, run_program
    from statgrid.sas.saslog import SasLog
    from statgrid.session.log import SessionLog

    out = tmp_path / engine.lower()
    out.mkdir()
    data_step, _ = _default_runners()
    programs = []

    def runner(stmts, program):
        programs.append(program)
        return data_step(stmts, program)

    buf = io.StringIO()
    log = SasLog(SessionLog(text=buf, jsonl=io.StringIO(), listing=io.StringIO()))
    prog = f"libname out '{out}';\n{INPUT}\noptions dsengine={engine};\n{text}"
    code = run_program(prog, session, log, data_step=runner)
    engines = programs[0].extras.get("datastep_engines", []) if programs else []
    return code, buf.getvalue(), out, engines


def _bits(value):
    if isinstance(value, float):
        return "null" if math.isnan(value) else struct.pack("<d", value).hex()
    return value


def _datasets(out):
    import pyarrow.parquet as pq

    got = {}
    for f in sorted(out.glob("*.parquet")):
        con = duckdb.connect()
        try:
            rel = con.sql(f"SELECT * FROM read_parquet('{f}')")
            rows = [tuple(_bits(x) for x in r) for r in rel.fetchall()]
            got[f.stem] = (rel.columns, [str(t) for t in rel.types], rows)
        finally:
            con.close()
        meta = (pq.read_schema(f).metadata or {}).get(b"statgrid.columns")
        got[f.stem + ".meta"] = json.loads(meta) if meta else None
    return got


def _notes(log: str) -> list[str]:
    from tests.unit.sas.test_sas_corpus import joined_messages
    lines = [l for l in joined_messages(log) if re.match(r"(NOTE|WARNING|ERROR)", l)]
    return [l for l in lines if "real time" not in l and "cpu time" not in l and "Libref OUT" not in l
            and "executing on" not in l]


def compare(session, tmp_path, text: str, numba_steps: int = 1, ok: bool = True) -> tuple[str, dict]:
    """Run `text` under both engines; assert they agree and that NUMBA took `numba_steps` steps."""
    code_p, log_p, out_p, eng_p = _run(session, tmp_path, text, "PYTHON")
    code_n, log_n, out_n, eng_n = _run(session, tmp_path, text, "NUMBA")
    assert (code_p == 0) == ok, log_p
    assert code_p == code_n, f"exit codes {code_p} {code_n}\n{log_p}\n{log_n}"
    assert _notes(log_n) == _notes(log_p), f"logs differ:\n--- PYTHON\n{log_p}\n--- NUMBA\n{log_n}"
    dp, dn = _datasets(out_p), _datasets(out_n)
    assert dp.keys() == dn.keys()
    for k in dp:
        assert dn[k] == dp[k], f"{k} differs:\nPYTHON {dp[k]}\nNUMBA  {dn[k]}"
    assert all(e == "PYTHON" for _, e in eng_p)
    took = [e for _, e in eng_n].count("NUMBA")
    assert took == numba_steps, f"NUMBA took {took} steps, not {numba_steps}: {eng_n}\n{log_n}"
    return log_n, dn


# -- statements and expressions ---------------------------------------------------------------------------------
def test_set_by_retain_first_last_sum(session, tmp_path):
    log, d = compare(session, tmp_path, """
data out.o(keep=g c n total maxx first_x avg);
  set out.inp;
  by g;
  retain maxx first_x;
  if first.g then do; n = 0; total = 0; maxx = .; first_x = x; end;
  n + 1;
  total + x;
  maxx = max(maxx, x);
  avg = total / n;
  if last.g then output;
run;
""")
    assert len(d["o"][2]) == 6


def test_arithmetic_missing_notes_and_functions(session, tmp_path):
    log, d = compare(session, tmp_path, """
data out.o;
  set out.inp(keep=i x y);
  a = x + 1;  b = x * y - 2;  c2 = -x;  e = x ** 2;  f = (x - 1) / (i + 1);
  h2 = 0;
  k = abs(x) + int(y * 3.3) + ceil(y) + floor(-y) + round(y, 0.01) + round(x * 7) + round(y * 13, 5);
  m = mod(i, 4) + min(x, y, .) + max(x, 2) + sum(x, y, 1) + mean(x, y) + n(x, y) + nmiss(x, y, .);
  s = sqrt(y) + exp(y) + log(y) + log10(y) + missing(x) + log2(y) + sign(x - 1) + coalesce(., x, 3);
  z = intz(-y) + ceilz(y) + floorz(-y) + fuzz(y * 10);
  p = 8 ** (1/3);
  q = x >< y;  r = x <> y;
  t = (x > 0.5) + (x = .) + (x < y) + (x ne 1) + (x ge y) + (x le 0);
  u = x in (1, 2.75, .) ; w = i not in (3:5, 20);
  v = not x and y or i;
run;
""")
    assert "Missing values were generated" in log


def test_math_errors_are_left_to_python(session, tmp_path):
    """A division by zero or an invalid power sets _ERROR_ and dumps the PDV, which only the Python engine
    writes: the compiled step stops and the Python engine runs it (numba_steps=0), with the same log."""
    log, _ = compare(session, tmp_path, """
data out.o;
  set out.inp(keep=i x);
  f = (x - 1) / (i - i);
  p = (-8) ** (1/3);
run;
""", numba_steps=0)
    assert "Division by zero detected" in log and "_ERROR_=1" in log
    assert "Mathematical operations could not be performed" in log


def test_do_loops_leave_continue_select(session, tmp_path):
    compare(session, tmp_path, """
data out.o;
  total = 0;
  do i = 1 to 10 by 2;
    if i = 5 then continue;
    total + i;
  end;
  do j = 10 to 1 by -3 until (j < 5);
    total = total * 2;
  end;
  do k = 1, 4, 9;
    total + k;
  end;
  n = 0;
  do while (n < 5);
    n + 1;
    if n = 4 then leave;
  end;
  do until (n > 8);
    n + 2;
  end;
  do m = 1 to 3 while (m < 3);
    select (m);
      when (1) total + 100;
      when (2, 3) total + 1000;
      otherwise;
    end;
  end;
  select;
    when (total > 5000) big = 1;
    otherwise big = 0;
  end;
  output;
  do z = 1 to 3; output; end;
run;
""")


def test_arrays_and_temporary(session, tmp_path):
    compare(session, tmp_path, """
data out.o(drop=k);
  set out.inp(keep=i x);
  array a{5} a1-a5;
  array t{3} _temporary_ (10 20 30);
  do k = 1 to dim(a);
    a{k} = i * k + t{mod(k, 3) + 1};
  end;
  t{2} = t{2} + 1;
  s = sum(of a1-a5) + hbound(a) + lbound(a);
run;
""")


def test_subsetting_if_delete_stop_return(session, tmp_path):
    compare(session, tmp_path, """
data out.o;
  set out.inp(keep=i x g);
  if i > 30 then stop;
  if x = . then delete;
  if g = 2 then return;
  if i > 3;
  z = i * 2;
run;
""")


def test_lag_dif_and_n(session, tmp_path):
    compare(session, tmp_path, """
data out.o;
  set out.inp(keep=i x);
  l1 = lag(x);
  l3 = lag3(i);
  d = dif(x);
  if mod(i, 2) then l2 = lag2(x);
  nn = _n_;
run;
""")


def test_random_streams(session, tmp_path):
    compare(session, tmp_path, """
data out.o;
  call streaminit(4321);
  do i = 1 to 50;
    u = ranuni(777);
    z = rannor(0);
    r = rand('uniform');
    q = rand('normal', 10, 2);
    w = rand('uniform', 5, 6);
    output;
  end;
run;
""")


def test_where_options_char_carry_end_rename(session, tmp_path):
    compare(session, tmp_path, """
data out.o(rename=(y=yy));
  set out.inp(firstobs=3 obs=35 rename=(h=hh)) end=eof;
  where x > 0 or c = 'def';
  retain cnt 0;
  cnt + 1;
  if eof then last = 1;
  format cnt 5.;
run;
""")


def test_char_by_variable(session, tmp_path):
    compare(session, tmp_path, """
data out.s; set out.inp; run;
proc sort data=out.s; by c i; run;
data out.o;
  set out.s(keep=c i);
  by c;
  f = first.c; l = last.c;
run;
""", numba_steps=2)


def test_by_groups_two_keys_descending_notsorted_empty(session, tmp_path):
    compare(session, tmp_path, """
data out.s; set out.inp; run;
proc sort data=out.s; by g descending c; run;
data out.o(keep=g c i fg lg fc lc k);
  length c $ 2;
  set out.s;
  by g descending c;
  fg = first.g; lg = last.g; fc = first.c; lc = last.c;
  if first.g then k = 0;
  k + 1;
  retain k;
run;
data out.p;
  set out.inp(keep=h i);
  by h notsorted;
  if first.h;
run;
data out.q;
  set out.inp(keep=i x);
  where x > 1000;
  total + x;
run;
""", numba_steps=4)


# -- refusals: the step is left to Python, and the NUMBA engine wrote nothing ------------------------------------
@pytest.mark.parametrize("text", [
    "data out.o; set out.inp; d = c || 'x'; run;",                       # a character expression
    "data out.o; set out.inp; put i=; run;",                             # PUT
    "data out.o out.p; set out.inp; run;",                               # two outputs
    "data out.o; x = 1; set out.inp; run;",                              # a statement before SET
    "data out.o; merge out.inp out.inp; run;",                           # MERGE
    "data out.o; set out.inp; y = left(c); run;",                        # an unsupported function
    "data out.o; set out.inp(in=a); z = a; run;",                        # IN=
    "data out.o; if 1 then call streaminit(5); x = rand('uniform'); run;",  # STREAMINIT in a block
])
def test_refused_steps_run_in_python(session, tmp_path, text):
    compare(session, tmp_path, text, numba_steps=0)


@pytest.mark.parametrize("text, ok", [
    ("data out.o; set out.inp; y = log(x - 1); run;", True),             # an invalid argument NOTE
    ("data out.o; set out.inp; array a{3}; a{i} = 1; run;", False),      # subscript out of range: ERROR
    ("data out.o; set out.inp(keep=i x); by x; run;", False),            # not sorted: ERROR
    ("data out.o; do i = 1 to 3; select (i); when (1) x = 1; end; end; run;", False),  # no OTHERWISE
    ("data out.o; do i = 1 to 3 by 0; end; run;", False),                # a zero BY: ERROR
    ("data out.o; set out.inp(keep=c); by c; run;", False),              # character BY out of order
])
def test_bail_out_to_python(session, tmp_path, text, ok):
    """The kernel stops where the Python engine writes a NOTE in mid-step or an ERROR; the step runs again
    in Python and the log and data are its alone."""
    compare(session, tmp_path, text, numba_steps=0, ok=ok)


def test_auto_takes_small_steps_in_python(session, tmp_path):
    """DSENGINE=AUTO leaves a step of fewer than 200 000 rows to Python (compiling would cost more)."""
    code, log, out, engines = _run(session, tmp_path, "data out.o; set out.inp; retain t 0; t + x; run;", "AUTO")
    assert code == 0 and [e for _, e in engines][-1] == "PYTHON"


def test_auto_takes_a_step_of_many_rows(session, tmp_path):
    """DSENGINE=AUTO compiles a step whose constant DO loops make 200 000 rows or more."""
    code, log, out, engines = _run(session, tmp_path, "data out.o; do i = 1 to 500; do j = 1 to 400; "
                                   "output; end; end; run;", "AUTO")
    assert code == 0 and [e for _, e in engines][-1] == "NUMBA"
    assert "NOTE: The data set OUT.O has 200000 observations and 2 variables." in log


def test_generator_streams_through_output_buffer(session, tmp_path, monkeypatch):
    """More rows than the output buffer holds: flushed from inside the kernel, in order."""
    from statgrid.sas.datastep.compiled import run as R
    monkeypatch.setattr(R, "OUT_ROWS", 7)
    monkeypatch.setattr(R, "BATCH_ROWS", 5)
    compare(session, tmp_path, """
data out.o;
  do i = 1 to 4; do j = 1 to 5; k = i * j; output; end; end;
run;
data out.p;
  set out.inp(keep=i c g);
  by g;
  do j = 1 to 2; output; end;
run;
""", numba_steps=2)


# -- the kernel's helpers against the Python engine's own functions, value by value ------------------------------
def _values():
    import random
    rnd = random.Random(26)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-13, 3 - 1e-13, 1e15, -1e15, 2.0 ** 53, 1e300,
            -1e300, math.inf, -math.inf, math.nan, 2.675, 1.005, 0.125, 7.0, -7.0, 1e-300]
    vals += [rnd.uniform(-1000, 1000) for _ in range(300)] + [round(rnd.uniform(-100, 100), 3) for _ in range(300)]
    return vals


def _same(a, b) -> bool:
    return (a != a and b != b) or struct.pack("<d", a) == struct.pack("<d", b)


def test_helpers_match_python_functions():
    import numpy as np

    from statgrid.sas.datastep import runtime as R
    from statgrid.sas.datastep.compiled import rt
    from statgrid.sas.datastep.compiled.kernel import compare_src, truth_src
    from statgrid.sas.functions import lookup_function
    from statgrid.sas.functions.numeric import sas_round
    from statgrid.sas.datastep.runtime import Notes

    fn = {n: lookup_function(n).fn for n in ("INT", "CEIL", "FLOOR", "MOD", "INTZ", "CEILZ", "FLOORZ", "FUZZ",
                                             "LOG2", "LOG", "LOG10", "SQRT", "EXP")}
    vals = _values()
    for x in vals:
        assert _same(rt.f_sign(x), lookup_function("SIGN").fn(None, x))
        for name, kfn in (("INT", rt.f_int), ("CEIL", rt.f_ceil), ("FLOOR", rt.f_floor), ("INTZ", rt.f_intz),
                          ("CEILZ", rt.f_ceilz), ("FLOORZ", rt.f_floorz), ("FUZZ", rt.f_fuzz), ("LOG2", rt.f_log2),
                          ("LOG", rt.f_log), ("LOG10", rt.f_log10), ("SQRT", rt.f_sqrt), ("EXP", rt.f_exp)):
            ist = np.zeros(rt.IST_SIZE, np.int64)
            got = kfn(x, ist)
            if ist[rt.BAIL]:                   # only where Python's function has an invalid argument
                assert math.isinf(x) or (name.startswith("LOG") and x <= 0) or (name == "SQRT" and x < 0) \
                    or (name == "EXP" and x > 709), (name, x)
                continue
            assert _same(got, fn[name](None, x)), (name, x)
        for y in (3.0, -2.5, 0.1, 1e-13, math.inf):
            ist = np.zeros(rt.IST_SIZE, np.int64)
            got = rt.f_mod(x, y, ist)
            if not ist[rt.BAIL]:
                assert _same(got, fn["MOD"](None, x, y)), ("MOD", x, y)
        for unit, k in ((1.0, 0.0), (0.01, 100.0), (0.1, 10.0), (0.5, 2.0), (0.25, 4.0), (5.0, 0.0), (0.001, 1000.0)):
            ist = np.zeros(rt.IST_SIZE, np.int64)
            got = rt.f_round(x, unit, k, ist)
            if ist[rt.BAIL] or x != x:
                continue
            assert _same(got, sas_round(x, unit)), ("ROUND", x, unit)
    notes = Notes()
    add, sub, mul, div, pow_, neg = R.make_ops(notes, None)
    for a in vals[:60]:
        for b in vals[:60]:
            cnt = np.zeros(4, np.int64)
            got = rt.pow_(a, b, cnt, 2, 0)
            before = (sum(notes.missing.values()), sum(notes.invalid_math.values()))
            want = pow_(a, b, (1, 1))
            after = (sum(notes.missing.values()), sum(notes.invalid_math.values()))
            assert _same(got, want), ("**", a, b)
            assert (cnt[0], cnt[2]) == (after[0] - before[0], after[1] - before[1]), ("** notes", a, b)
            for op, want in (("EQ", R.eq(a, b)), ("NE", not R.eq(a, b)), ("LT", R.lt(a, b)), ("LE", R.le(a, b)),
                             ("GT", R.lt(b, a)), ("GE", R.le(b, a))):
                assert eval(compare_src(op, "a", "b"), {}, {"a": a, "b": b}) == want, (op, a, b)
            assert eval(truth_src("a"), {}, {"a": a}) == R.truth(a)
            assert _same(rt.nummax(a, b), R.num_max(a, b)) and _same(rt.nummin(a, b), R.num_min(a, b))


def test_fsum_matches_math_fsum():
    import random

    import numpy as np

    from statgrid.sas.datastep.compiled import rt
    rnd = random.Random(7)
    for n in [1, 2, 3, 6, 25] * 40:                # a few tuple lengths: numba compiles one helper per length
        xs = [rnd.choice([1e16, -1e16, 1.0, 1e-16, rnd.uniform(-1, 1), math.nan, 0.1, -0.3]) for _ in range(n)]
        ist = np.zeros(rt.IST_SIZE, np.int64)
        got = rt.f_sum(tuple(xs), ist)
        present = [x for x in xs if x == x]
        want = math.fsum(present) if present else math.nan
        assert _same(got, want), xs


def test_write_error_inside_the_kernel_is_raised(session, tmp_path, monkeypatch):
    """A failure to write a full buffer (raised in the callback from the kernel) stops the step with that
    error, as in the Python engine; no data set is left."""
    from statgrid.sas.dataset import DatasetWriter
    from statgrid.sas.datastep.compiled import run as R

    real = DatasetWriter.write

    def write(self, arrays):
        if self.spec.member.upper() == "O":
            raise OSError("disk full")
        return real(self, arrays)
    hooked = []
    real_hook = R.Runner._hook

    def hook(self):
        hooked.append(1)
        return real_hook(self)
    monkeypatch.setattr(R, "OUT_ROWS", 4)
    monkeypatch.setattr(DatasetWriter, "write", write)
    monkeypatch.setattr(R.Runner, "_hook", hook)
    code, log, out, engines = _run(session, tmp_path, "data out.o; do i = 1 to 10; output; end; run;", "NUMBA")
    assert code != 0 and "disk full" in log and hooked == [1]
    assert not (out / "o.parquet").exists() and not list(out.glob(".o.parquet*"))
