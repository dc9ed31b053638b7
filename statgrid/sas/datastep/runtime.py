"""Run-time helpers called by the generated DATA step code: SAS arithmetic with its missing-value and
division-by-zero NOTEs (counted per place, reported at the step's end as SAS does), comparisons in SAS's
missing order, character/numeric conversions with their NOTEs, array subscripts, LAG queues."""
from __future__ import annotations

import math
from collections import Counter, deque

from statgrid.sas.errors import SasRuntimeError
from statgrid.sas.values import MISSING, num_key

# A DO WHILE/UNTIL loop or GOTO cycle running this many iterations in one pass of the step is stopped
# with an ERROR (statgrid's guard against a hung node; SAS itself has none). Override per program with
# the macro-free extras key program.extras['datastep']['loop_cap'].
LOOP_CAP = 100_000_000

nan = MISSING


class Notes:
    """Counters of the step's run-time NOTEs, by place (line, col)."""

    def __init__(self):
        self.missing: Counter = Counter()
        self.divzero: list = []
        self.char2num: Counter = Counter()
        self.num2char: Counter = Counter()
        self.invalid_math: Counter = Counter()
        self.on_error = None               # the running step's "set _ERROR_ to 1" (a math fault)

    def report_compile(self, log) -> None:
        """The type-conversion NOTEs: SAS writes them when the step is compiled, before anything it runs
        writes (a PUT's lines), once."""
        if getattr(self, "_compile_reported", False):
            return
        self._compile_reported = True
        if self.char2num:
            log.note("Character values have been converted to numeric values at the places given by: "
                     "(Line):(Column).\n" + " ".join(f"{l}:{c}" for l, c in sorted(self.char2num)))
        if self.num2char:
            log.note("Numeric values have been converted to character values at the places given by: "
                     "(Line):(Column).\n" + " ".join(f"{l}:{c}" for l, c in sorted(self.num2char)))

    def report(self, log) -> None:
        """The conversion NOTEs (if not written yet), then the run's: SAS writes these after the files' NOTEs
        and before "There were N observations read from the data set …"."""
        self.report_compile(log)
        if self.invalid_math:
            log.note("Mathematical operations could not be performed at the following places. The results of "
                     "the operations have been set to missing values.\nEach place is given by: "
                     "(Number of times) at (Line):(Column).\n"
                     + " ".join(f"{n} at {l}:{c}" for (l, c), n in sorted(self.invalid_math.items())))
        if self.missing:
            log.note("Missing values were generated as a result of performing an operation on missing values.\n"
                     "Each place is given by: (Number of times) at (Line):(Column).\n"
                     + " ".join(f"{n} at {l}:{c}" for (l, c), n in sorted(self.missing.items())))


def make_ops(notes: Notes, log):
    """The arithmetic helpers bound to one step's counters (closures: fast lookups in generated code)."""
    miss = notes.missing

    def add(a, b, site):
        r = a + b
        if r != r:
            miss[site] += 1
            return nan
        return r

    def sub(a, b, site):
        r = a - b
        if r != r:
            miss[site] += 1
            return nan
        return r

    def mul(a, b, site):
        r = a * b
        if r != r:
            miss[site] += 1
            return nan
        return r

    def div(a, b, site):
        if b != b or a != a:
            miss[site] += 1
            return nan
        if b == 0:
            # SAS: the NOTE (once), _ERROR_ = 1 (the PDV is written), the place counted in the step's
            # "Mathematical operations could not be performed" NOTE
            if not notes.divzero:
                log.note(f"Division by zero detected at line {site[0]} column {site[1]}.")
            notes.divzero.append(site)
            notes.invalid_math[site] += 1
            if notes.on_error is not None:
                notes.on_error()
            return nan
        return a / b

    def pow_(a, b, site):
        if a != a or b != b:
            miss[site] += 1
            return nan
        try:
            r = a ** b
        except (OverflowError, ZeroDivisionError):
            notes.invalid_math[site] += 1
            if notes.on_error is not None:
                notes.on_error()
            return nan
        if isinstance(r, complex):
            notes.invalid_math[site] += 1
            if notes.on_error is not None:
                notes.on_error()
            return nan
        return float(r)

    def neg(a, site):
        if a != a:
            miss[site] += 1
            return nan
        return -a

    return add, sub, mul, div, pow_, neg


def truth(x) -> bool:
    return x == x and x != 0


def num_max(a, b):
    return a if num_key(a) >= num_key(b) else b


def num_min(a, b):
    return a if num_key(a) <= num_key(b) else b


def lt(a, b):
    if a == a and b == b:
        return a < b
    return num_key(a) < num_key(b)


def le(a, b):
    if a == a and b == b:
        return a <= b
    return num_key(a) <= num_key(b)


def eq(a, b):
    if a == b:
        return True
    return a != a and b != b and num_key(a) == num_key(b)


def key(x):
    """Hashable key of a number in SAS's equality (missings by their letter)."""
    return x if x == x else ("M", getattr(x, "code", "."))


def colon_cmp(a: str, b: str):
    """The `=:` family: both cut to the shorter length."""
    n = min(len(a), len(b))
    return a[:n], b[:n]


def best12(x: float) -> str:
    try:
        from statgrid.sas.formats import format_value
        return format_value(x, "BEST12.")
    except Exception:  # noqa: BLE001 - no formats module: a plain rendering
        if x != x:
            return " " * 11 + "."
        return f"{x:>12g}"


def char_to_num(s: str):
    t = s.strip()
    if t == "" or t == ".":
        return nan
    try:
        return float(t.replace(",", "")) if "," not in t else float("x")
    except ValueError:
        return None


def array_slot(slots, lower, subs, name, line, col):
    """The PDV slot of a (multi-dimensional) array element; SAS's ERROR when out of range."""
    idx = 0
    mult = 1
    dims = slots.dims
    for k in range(len(subs) - 1, -1, -1):
        s = subs[k]
        if s != s:
            raise SasRuntimeError(f"Array subscript out of range at line {line} column {col}", line, col, name)
        i = int(s) - lower[k]
        if i < 0 or i >= dims[k]:
            raise SasRuntimeError(f"Array subscript out of range at line {line} column {col}", line, col, name)
        idx += i * mult
        mult *= dims[k]
    return slots[idx]


class ArraySlots(list):
    """The PDV slots of an array's elements (row-major), with its dimensions."""
    dims: tuple = ()


class Lag:
    """One LAGn/DIFn call site's queue (SAS: each call site has its own queue, updated only when executed)."""

    def __init__(self, n: int, missing):
        self.q = deque([missing] * n, maxlen=n) if n > 0 else None

    def __call__(self, x):
        if self.q is None:
            return x
        out = self.q[0]
        self.q.append(x)
        return out


def fmod(a, b):
    return math.fmod(a, b)
