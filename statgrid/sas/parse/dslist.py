"""SET/MERGE's data set lists (SAS 9.4 Statements, SET: "data-set-list"): a numbered range `sales1-sales4`
and a prefix `sales:`, expanded against the library's members when the step compiles."""
from __future__ import annotations

import copy
import re

from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME
from statgrid.sas.parse.dsname import DatasetSpec, _parse_options as _parse_dataset_options, default_libref, parse_dataset


def dataset_list(cur, program) -> list:
    """One data set, or a data set list (SAS 9.4 Statements, SET: "data-set-list"): a numbered range
    `sales1-sales4` (`lib.a1-lib.a3`; every member must exist) or the members whose names begin with a
    prefix, `sales:` (in name order). The options written after the list apply to each member."""
    t = cur.peek()
    if cur.peek().kind == NAME and (cur.peek(1).is_(":") or (cur.peek(1).is_(".") and cur.peek(2).kind == NAME
                                                              and cur.peek(3).is_(":"))):
        text = cur.dotted_name("a data set name")
        cur.expect(":")
        lib, prefix = (text.upper().split(".") if "." in text else (default_libref(program), text.upper()))
        names = [m.upper() for m in _members(program, lib, t) if m.upper().startswith(prefix)]
        if not names:
            raise SasError(f"No data set in library {lib} has a name beginning with {prefix}", t.line, t.col,
                           text + ":", "an existing member's prefix")
        spec = DatasetSpec(lib, names[0], line=t.line, col=t.col)
        if cur.at("("):
            cur.next()
            _parse_dataset_options(cur, spec)
        return [_renamed(copy.deepcopy(spec), n) for n in names]
    first = parse_dataset(cur, program)
    if not (cur.at("-") and cur.peek(1).kind == NAME) or first.options:
        return [first]
    cur.next()
    last = parse_dataset(cur, program)
    a, b = _numbered(first.member), _numbered(last.member)
    if a is None or b is None or a[0] != b[0] or first.libref != last.libref or a[1] > b[1]:
        raise SasError(f"The data set list {first.member}-{last.member} is not a numbered range", t.line, t.col,
                       f"{first.member}-{last.member}", "names with the same prefix and ascending numbers, e.g. "
                       "sales1-sales4")
    width = len(a[2]) if a[2].startswith("0") else 0
    have = {m.upper() for m in _members(program, first.libref, t)}
    names = []
    for k in range(a[1], b[1] + 1):              # every member must exist: the first missing one ends it
        name = f"{a[0]}{str(k).zfill(width)}"
        if name not in have:
            raise SasError(f"File {first.libref}.{name}.DATA does not exist", t.line, t.col,
                           f"{first.member}-{last.member}", "every member of a numbered range")
        names.append(name)
    return [_renamed(copy.deepcopy(last), n) for n in names]


def _numbered(member: str):
    m = re.fullmatch(r"(.*?)(\d+)", member)
    return (m.group(1), int(m.group(2)), m.group(2)) if m else None


def _members(program, lib: str, t) -> list[str]:
    try:
        return program.session.libraries.get(lib.lower()).members()
    except Exception:  # noqa: BLE001
        raise SasError(f"Libref {lib} is not assigned", t.line, t.col, lib, "a library assigned with LIBNAME") \
            from None


def _renamed(spec, member: str):
    spec.member = member
    return spec
