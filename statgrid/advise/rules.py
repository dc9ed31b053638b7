"""The advice engine: rules kept as data (rules_data.RULES), each checked over the items of its scope —
the grid, each machine, each library mount, each grid host, each job — and one Result per check, which
feeds the terminal (TuneD-style `verify:` lines, then the findings), `--json` and the report's findings.

A rule's conditions are text in a small expression language, parsed with Python's `ast` and walked
here; nothing is eval'd. Allowed: names (dotted: `lib.gpfs.pagepool_bytes`), numbers, strings,
True/False, comparisons (== != < <= > >= in, not in), and/or/not, + - * / %, `x if c else y`,
tuples of constants (for `in`), and the functions min, max, abs and first (the first argument that
has a value). Why expressions rather than structured (value, op, threshold) fields: the seeds' rules
compare two read values with arithmetic — maxMBpS against 2 × the throughput needed, a block size
against BUFSIZE and the stripe — which a (value, op, threshold) triple cannot say without growing
into an expression tree of its own; as text the condition reads as the source states it, is shown
verbatim in `--json`, and what a rule reads is derived from it (Rule.reads), so it cannot drift.

Bounded, so a rule cannot hang or exhaust the run (checked when the rule is defined, the rule's id named):
a condition of at most MAX_TEXT_CHARS characters, MAX_NODES parts and MAX_DEPTH levels of nesting; number
constants within ±MAX_CONSTANT, strings of at most MAX_STRING_CHARS characters, tuples of at most
MAX_TUPLE constants; arithmetic (+ - * / %) on numbers only (no 'a' * 10**9, no '%s' % x, and there is
no `**`); the advice's and label's {name:spec} specs only number formats of a few digits. When checked,
arithmetic on a value read that is not a number, or beyond ±MAX_MAGNITUDE, stops that check ("not
evaluated", with the reason), and so does any error a rule raises: it never ends the run.

A name whose value is absent or null is *missing*: reading it stops the check, and the result says
"not evaluated" and which value it needed (a rule needing run figures, without a bundle: "needs a
bundle"). and/or/if read lazily, so `a or b` needs b only when a is false.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

SEVERITIES = ("info", "warning", "critical")
SCOPES = ("grid", "machine", "library", "host", "job")
STATUSES = ("passed", "failed", "not evaluated", "not applicable")
# Names every scope can read, and the one each scope adds (the item's own record).
COMMON_PREFIXES = ("grid", "session", "site", "run", "DATA", "WORK", "UTIL")
SCOPE_PREFIXES = {"grid": (), "machine": ("node", "machine"), "library": ("lib",), "host": ("host",), "job": ("job",)}
# Names measured in a run: a rule reading one needs a bundle.
RUN_PREFIXES = ("run", "host", "job")
NEEDS_BUNDLE = "needs a bundle (run figures): give `statgrid advise BUNDLE`"
CONSTANTS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "True": True, "False": False}


class Missing(Exception):
    """A name the expression read has no value."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


class RuleError(ValueError):
    """An expression outside the language (raised when the rule is defined, so a bad rule never ships)."""


class BoundError(ValueError):
    """A value the expression computes with is not a number, or too large (raised while checking)."""


# The language's bounds (module docstring): the seeds' rules use at most 207 characters, 52 parts, 9 levels.
MAX_TEXT_CHARS = 1000
MAX_NODES = 200
MAX_DEPTH = 30
MAX_CONSTANT = 10 ** 18          # a constant: 1 EiB is 1.2e18 bytes
MAX_STRING_CHARS = 200
MAX_TUPLE = 64
MAX_MAGNITUDE = 10 ** 30         # a number read, or computed by + - * / %
_FIELD = re.compile(r"\{([A-Za-z_][\w.]*)(?::([^{}]*))?\}")      # {name} / {name:spec} in advice and labels
_SPEC = re.compile(r"[<>^=]?[+\- ]?\d{0,2},?(\.\d{1,2})?[defgn%]?")    # {name:spec}: .1f, >8,.0f, .2%


_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.Mod: lambda a, b: a % b}
_CMPOPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
           ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_FUNCS = {"min": min, "max": max, "abs": abs}


def _dotted(node: ast.AST) -> str | None:
    """`a.b.c` as the string 'a.b.c' (None if the node is not a plain dotted name)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


class Expr:
    """One condition of the language above: parsed and checked once, evaluated over a namespace."""

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise RuleError(f"{text!r} is not an expression (a condition is text)")
        self.text = text
        if len(text) > MAX_TEXT_CHARS:
            raise RuleError(f"{_clip(text)}: {len(text):,} characters, more than the {MAX_TEXT_CHARS:,} a condition "
                            "may have; split the rule")
        try:
            self._tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as exc:
            raise RuleError(f"{text!r} is not an expression ({exc.msg})") from None
        except (ValueError, RecursionError, MemoryError) as exc:         # NUL bytes; nesting the parser refuses
            raise RuleError(f"{_clip(text)} is not an expression ({type(exc).__name__}: {exc})") from None
        self.names: list[str] = []
        self._nodes = 0
        self._check(self._tree, 1)

    def _check(self, node: ast.AST, depth: int) -> None:
        self._nodes += 1
        if self._nodes > MAX_NODES or depth > MAX_DEPTH:
            what = f"more than {MAX_NODES} parts" if self._nodes > MAX_NODES else f"nested deeper than {MAX_DEPTH}"
            raise RuleError(f"{_clip(self.text)}: {what}; split the rule")
        name = _dotted(node)
        if name is not None:
            if name not in CONSTANTS and name not in self.names:
                self.names.append(name)
            return
        if isinstance(node, ast.Constant):
            v = node.value
            if not isinstance(v, (int, float, str, bool)):
                raise RuleError(f"{self.text!r}: constant {v!r} is not a number, string or boolean")
            if isinstance(v, str) and len(v) > MAX_STRING_CHARS:
                raise RuleError(f"{_clip(self.text)}: a string of {len(v):,} characters (at most {MAX_STRING_CHARS})")
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not abs(v) <= MAX_CONSTANT:
                raise RuleError(f"{_clip(self.text)}: the number {_clip(repr(v), 30)} is beyond ±{MAX_CONSTANT:.0e} "
                                "(give sizes with KiB, MiB, GiB)")
            return
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            for side in (node.left, node.right):
                if (isinstance(side, (ast.Tuple, ast.List, ast.JoinedStr))
                        or isinstance(side, ast.Constant) and isinstance(side.value, str)):
                    raise RuleError(f"{_clip(self.text)}: + - * / % take numbers only, not a string or tuple "
                                    f"({_cut(ast.unparse(node), 60)})")
        if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) > MAX_TUPLE:
            raise RuleError(f"{_clip(self.text)}: a tuple of {len(node.elts)} values (at most {MAX_TUPLE})")
        kids: list[ast.AST]
        if isinstance(node, ast.BoolOp) and isinstance(node.op, (ast.And, ast.Or)):
            kids = node.values
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
            kids = [node.operand]
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            kids = [node.left, node.right]
        elif isinstance(node, ast.Compare) and all(type(op) in _CMPOPS for op in node.ops):
            kids = [node.left, *node.comparators]
        elif isinstance(node, ast.IfExp):
            kids = [node.test, node.body, node.orelse]
        elif isinstance(node, (ast.Tuple, ast.List)):
            if not all(isinstance(e, ast.Constant) for e in node.elts):
                raise RuleError(f"{self.text!r}: a tuple may hold constants only")
            kids = list(node.elts)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in (*_FUNCS, "first") and not node.keywords and node.args):
            kids = list(node.args)
        else:
            raise RuleError(f"{self.text!r}: {ast.unparse(node)!r} is outside the rule language (names, numbers, "
                            "strings, comparisons, and/or/not, + - * / %, if-else, min/max/abs/first)")
        for k in kids:
            self._check(k, depth + 1)

    def eval(self, ns: Mapping[str, Any]) -> Any:
        return self._eval(self._tree, ns)

    def _eval(self, node: ast.AST, ns: Mapping[str, Any]) -> Any:
        name = _dotted(node)
        if name is not None:
            if name in CONSTANTS:
                return CONSTANTS[name]
            value = ns.get(name)
            if value is None:
                raise Missing(name)
            return value
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BoolOp):
            want = isinstance(node.op, ast.Or)
            for v in node.values:
                if bool(self._eval(v, ns)) == want:
                    return want
            return not want
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, ns)
            if isinstance(node.op, ast.Not):
                return not v
            v = _number(v, node.operand)
            return -v if isinstance(node.op, ast.USub) else +v
        if isinstance(node, ast.BinOp):
            left, right = self._eval(node.left, ns), self._eval(node.right, ns)
            return _number(_BINOPS[type(node.op)](_number(left, node.left), _number(right, node.right)), node)
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, ns)
            for op, right_node in zip(node.ops, node.comparators):
                right = self._eval(right_node, ns)
                if not _CMPOPS[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self._eval(node.body if self._eval(node.test, ns) else node.orelse, ns)
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(e.value for e in node.elts)
        if isinstance(node, ast.Call):
            if node.func.id == "first":
                for a in node.args:
                    try:
                        return self._eval(a, ns)
                    except Missing:
                        continue
                raise Missing(_dotted(node.args[0]) or ast.unparse(node.args[0]))
            return _FUNCS[node.func.id](*(self._eval(a, ns) for a in node.args))
        raise RuleError(f"{self.text!r}: cannot evaluate {ast.unparse(node)!r}")    # _check let it through


def _cut(text: Any, n: int = 120) -> str:
    """A long text cut for a message (a refused condition, or a value read, may be huge)."""
    text = str(text)
    return text if len(text) <= n else text[:n] + f"… ({len(text):,} characters)"


def _clip(text: Any, n: int = 80) -> str:
    """_cut, quoted."""
    text = str(text)
    return repr(text) if len(text) <= n else repr(text[:n]) + f"… ({len(text):,} characters)"


def _number(v: Any, node: ast.AST) -> int | float:
    """v, when it is a number within ±MAX_MAGNITUDE (bool counts as 0/1); else BoundError naming the part."""
    if isinstance(v, (int, float)):
        if isinstance(v, float) and v != v:
            return v                                          # NaN compares false: the check says so
        try:
            ok = abs(v) <= MAX_MAGNITUDE
        except OverflowError:
            ok = False
        if ok or (isinstance(v, float) and abs(v) == float("inf")):
            return v
        raise BoundError(f"{_clip(ast.unparse(node), 60)} is beyond ±{MAX_MAGNITUDE:.0e}")
    raise BoundError(f"{_clip(ast.unparse(node), 60)} is {_cut(repr(v), 40)}, not a number: + - * / % take numbers")


@dataclass(frozen=True)
class Rule:
    """One piece of advice, as data. `check` holds when the item is as the source advises (passed);
    `applies` (optional) says whether the rule concerns the item at all (false: not applicable)."""
    id: str              # dotted, area first: gpfs.pagepool, job.short_of_cpu
    title: str           # what is checked, in a few words
    scope: str           # SCOPES: the items it is checked on
    check: str           # expression: true → passed
    expected: str        # the check in words, shown as "expected …"
    severity: str        # SEVERITIES: how much a failed check costs, as the source reports it
    advice: str          # what to do; {name} and {name:spec} are filled from the item's values
    apply: str           # how: the command or setting
    effect: str          # what the source reports the change did
    source: str          # seed paper and section, or the public document
    applies: str = ""    # expression: the rule concerns this item (empty: always)
    shows: tuple[str, ...] = ()   # the values shown as "found" (default: every name `check` reads)
    label: str = ""      # a job's or host's one-line finding (the report's per-job flag), {name} filled

    def __post_init__(self):
        if self.scope not in SCOPES:
            raise RuleError(f"rule {self.id!r}: scope {self.scope!r} is not one of {', '.join(SCOPES)}")
        if self.severity not in SEVERITIES:
            raise RuleError(f"rule {self.id!r}: severity {self.severity!r} is not one of {', '.join(SEVERITIES)}")
        for what, template in (("advice", self.advice), ("label", self.label)):
            for m in _FIELD.finditer(template):
                if m.group(2) is not None and not _SPEC.fullmatch(m.group(2)):
                    raise RuleError(f"rule {self.id!r}: {what} field {_clip(m.group(0), 40)}: format spec "
                                    f"{_clip(m.group(2), 20)} is not a number format of a few digits (e.g. .1f)")
        try:
            object.__setattr__(self, "_check", Expr(self.check))
            object.__setattr__(self, "_applies", Expr(self.applies) if self.applies.strip() else None)
        except RuleError as exc:
            raise RuleError(f"rule {self.id!r}: {exc}") from None

    @property
    def reads(self) -> list[str]:
        """Every name the rule's conditions read."""
        names = list(self._applies.names) if self._applies else []
        return names + [n for n in self._check.names if n not in names]


@dataclass
class Result:
    """One rule checked on one item (or, for jobs, on every job: `items` lists the ones that failed)."""
    rule: Rule
    subject: str                  # "grid", a machine, "DATA, WORK on /dev/vda1 (ext4)", "node2", "36 jobs"
    status: str                   # STATUSES
    found: dict[str, Any] = field(default_factory=dict)   # name → value read
    reason: str = ""              # why not evaluated / not applicable
    advice: str = ""              # the rule's advice with this item's values filled in
    items: list[dict] = field(default_factory=list)       # job/host scope: {subject, found, label} that failed

    def to_json(self) -> dict:
        r = self.rule
        return {"rule": r.id, "title": r.title, "scope": r.scope, "subject": self.subject, "status": self.status,
                "severity": r.severity, "expected": r.expected, "found": self.found, "reason": self.reason or None,
                "advice": self.advice or r.advice, "apply": r.apply, "effect": r.effect, "source": r.source,
                "condition": r.check, "applies": r.applies or None, "reads": r.reads, "items": self.items}


# -- checking --------------------------------------------------------------------------------------


def fill(template: str, ns: Mapping[str, Any]) -> str:
    """{name} / {name:spec} from ns (a name without a value shows as '?'); nothing else is formatted."""
    def one(m: re.Match) -> str:
        v = CONSTANTS.get(m.group(1), ns.get(m.group(1)))
        if v is None:
            return "?"
        if m.group(2):
            try:
                return format(v, m.group(2))
            except (TypeError, ValueError, OverflowError):
                pass
        try:
            return _cut(show(m.group(1), v), 200)
        except (TypeError, ValueError, OverflowError):         # e.g. an integer of more digits than str() gives
            return "?"
    return _FIELD.sub(one, template)


def show(name: str, value: Any) -> str:
    """A value as the verify lines print it, unit from the name's suffix."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        if name.endswith("_bytes"):
            for unit, n in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
                if abs(value) >= n:
                    return f"{value / n:g} {unit}" if value % n == 0 else f"{value / n:.3g} {unit}"
            return f"{value:g} B"
        if name.endswith("_kb"):
            return f"{value:g} KiB"
        text = f"{value:,.3g}" if isinstance(value, float) else f"{value:,}"
        if "e" in text and isinstance(value, float):
            text = f"{value:,.0f}"
        for suffix, unit in (("mb_s_per_core", " MB/s per core"), ("mb_s_peak_per_machine", " MB/s"),
                             ("_mb_s", " MB/s"), ("_pct", " %"), ("_s", " s")):
            if name.endswith(suffix):
                return text + unit
        return text
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    return str(value)


def check_one(rule: Rule, ns: Mapping[str, Any], has_run: bool) -> tuple[str, dict, str]:
    """(status, found, reason) of one rule on one item's namespace."""
    if rule.scope in ("host", "job") and not has_run:
        return "not evaluated", {}, NEEDS_BUNDLE
    if rule._applies is not None:
        try:
            if not rule._applies.eval(ns):
                return "not applicable", {}, f"does not apply ({rule.applies})"
        except Missing as m:
            return "not applicable", {}, f"does not apply ({m.name} unknown)"
        except _CHECK_ERRORS as exc:
            return "not evaluated", {}, f"cannot tell whether it applies: {_failure(exc)}"
    shown = rule.shows or tuple(rule._check.names)
    found = {n: ns.get(n) for n in shown}
    try:
        ok = bool(rule._check.eval(ns))
    except Missing as m:
        return "not evaluated", found, _why_missing(m.name, has_run)
    except _CHECK_ERRORS as exc:
        return "not evaluated", found, _failure(exc)
    return ("passed" if ok else "failed"), found, ""


# What a check may raise over odd values read (a string where a number was due, max() of an empty list, an
# integer too large for a float): the check is "not evaluated" with the reason.
_CHECK_ERRORS = (BoundError, TypeError, ZeroDivisionError, ValueError, OverflowError, ArithmeticError)


def _failure(exc: BaseException) -> str:
    if isinstance(exc, BoundError):
        return f"cannot compute with the values read ({_cut(exc, 200)})"
    return f"cannot compare the values read ({type(exc).__name__}: {_cut(exc)})"


def _why_missing(name: str, has_run: bool) -> str:
    head = name.split(".")[0]
    if head in RUN_PREFIXES and not has_run:
        return NEEDS_BUNDLE + f" ({name})"
    if head in RUN_PREFIXES:
        return f"needs {name} (not in this bundle's records or monitor series)"
    if head == "site":
        return f"needs {name}, a fact of the site no machine can read: give it with --set {name[5:]}=VALUE"
    return f"needs {name} (not in the inventory: unreadable here, or an inventory without it)"


def evaluate(rules, items: Mapping[str, list[tuple[str, dict]]], has_run: bool) -> list[Result]:
    """Every rule over the items of its scope (scope → [(subject, namespace)]). Grid, machine and
    library rules give one result per item; host and job rules one result each, over all items."""
    out = []
    for rule in rules:
        scoped = items.get(rule.scope, [])
        if rule.scope in ("host", "job"):
            out.append(_guarded(rule, f"{rule.scope}s", lambda: _aggregate(rule, scoped, has_run)))
            continue
        if not scoped:
            out.append(Result(rule, rule.scope, "not evaluated", reason=f"no {rule.scope} in the inventory"))
            continue
        for subject, ns in scoped:
            out.append(_guarded(rule, subject, lambda: Result(rule, subject, *check_one(rule, ns, has_run),
                                                              fill(rule.advice, ns))))
    return out


def _guarded(rule: Rule, subject: str, check) -> Result:
    """check(), or — whatever it raised — the rule "not evaluated" on the subject, with the reason: one rule
    going wrong never ends the run (the others are still checked and printed)."""
    try:
        return check()
    except (Exception, RecursionError) as exc:          # noqa: BLE001 — any failure of one rule stays in it
        return Result(rule, subject, "not evaluated", reason=f"the rule failed ({type(exc).__name__}: {_cut(exc)})")


def _aggregate(rule: Rule, scoped: list[tuple[str, dict]], has_run: bool) -> Result:
    noun = "jobs" if rule.scope == "job" else "hosts"
    if not has_run or not scoped:
        status, _, reason = check_one(rule, {}, has_run)
        return Result(rule, noun, "not evaluated", reason=reason if not has_run else f"no {noun} in the bundle")
    counts = {s: 0 for s in STATUSES}
    failed, reasons = [], []
    for subject, ns in scoped:
        status, found, reason = check_one(rule, ns, has_run)
        counts[status] += 1
        if status == "failed":
            failed.append({"subject": subject, "id": ns.get("job.id", subject), "found": found,
                           "label": fill(rule.label or rule.title, ns)})
        elif status == "not evaluated":
            reasons.append(reason)
    checked = counts["passed"] + counts["failed"]
    found = {"checked": checked, "failed": counts["failed"], "not_applicable": counts["not applicable"],
             "not_evaluated": counts["not evaluated"]}
    if failed:
        status = "failed"
    elif checked:
        status = "passed"
    elif counts["not evaluated"]:
        status = "not evaluated"
    else:
        status = "not applicable"
    reason = ""
    if status == "not evaluated":
        reason = max(set(reasons), key=reasons.count)
    elif status == "not applicable":
        reason = f"does not apply to any of the {len(scoped)} {noun} ({rule.applies})"
    return Result(rule, f"{len(scoped)} {noun}", status, found, reason, rule.advice, failed)


# -- text ------------------------------------------------------------------------------------------
def verify_line(r: Result) -> str:
    """TuneD's shape: `verify: passed|failed  <rule id>  <what>  … expected <x>, found <y>`."""
    head = f"verify: {r.status:<14} {r.rule.id:<26} {r.subject}: {r.rule.title}"
    if r.status in ("passed", "failed"):
        return f"{head} … expected {r.rule.expected}, found {found_text(r)}"
    return f"{head} … {r.reason}"


def found_text(r: Result) -> str:
    if r.rule.scope in ("host", "job"):
        f = r.found
        noun = "jobs" if r.rule.scope == "job" else "hosts"
        extra = f" ({f['not_applicable']} not concerned)" if f.get("not_applicable") else ""
        named = f": {', '.join(str(it['subject']) for it in r.items)}" if noun == "hosts" and r.items else ""
        return f"{f['failed']} of {f['checked']} {noun} checked flagged{extra}{named}"
    return ", ".join(f"{_short(n)} {show(n, v)}" for n, v in r.found.items() if v is not None) or "—"


def _short(name: str) -> str:
    """A found value's name without the item's own prefix (lib., node., run. …); WORK.x, site.x stay whole."""
    head, _, rest = name.partition(".")
    return rest if rest and head in ("lib", "node", "machine", "host", "job", "run", "session", "grid") else name


FOLD_AT = 3     # not-evaluated checks sharing one reason this often print as one line


def render(results: list[Result], max_items: int = 8) -> str:
    """The verify lines (not-applicable ones folded into one line), then each failed check's finding."""
    by_reason: dict[str, list[str]] = {}
    for r in results:
        if r.status == "not evaluated":
            by_reason.setdefault(r.reason, []).append(r.rule.id)
    folded = {reason for reason, ids in by_reason.items() if len(ids) >= FOLD_AT}
    lines = [verify_line(r) for r in results if r.status != "not applicable" and
             not (r.status == "not evaluated" and r.reason in folded)]
    for reason in folded:
        lines.append(f"not evaluated ({reason}): {', '.join(dict.fromkeys(by_reason[reason]))}")
    na = [r for r in results if r.status == "not applicable"]
    if na:
        lines.append(f"not applicable: {', '.join(dict.fromkeys(r.rule.id for r in na))}")
    failed = sorted((r for r in results if r.status == "failed"),
                    key=lambda r: -SEVERITIES.index(r.rule.severity))
    counts = {s: sum(r.status == s for r in results) for s in STATUSES}
    lines.append("")
    lines.append(f"{counts['passed']} passed, {counts['failed']} failed, {counts['not evaluated']} not evaluated, "
                 f"{counts['not applicable']} not applicable")
    for r in failed:
        lines += ["", f"[{r.rule.severity}] {r.rule.id} — {r.subject}: {r.rule.title}",
                  f"  evidence: {found_text(r)} (expected {r.rule.expected})"]
        for it in r.items[:max_items]:
            lines.append(f"    {it['subject']}: {it['label']}")
        if len(r.items) > max_items:
            lines.append(f"    … and {len(r.items) - max_items} more (--json lists them all)")
        lines += [f"  advice: {r.advice or r.rule.advice}", f"  apply: {r.rule.apply}",
                  f"  effect reported: {r.rule.effect}", f"  source: {r.rule.source}"]
    return "\n".join(lines)
