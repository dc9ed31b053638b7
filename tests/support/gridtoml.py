"""grid.toml for tests, built from arguments instead of pasted text: the hosts and their slots, the
queues, and any other section's options. One writer of the file's shape, so a test says only what
its grid has that others do not.

    toml_text({"node1": 2, "node2": {"slots": 1, "open": False}}, {"normal": {"priority": 30}})

gives (sections in this order: master, the others given, hosts, queues, groups, monitor)

    [master]
    port = {port}

    [hosts.node1]
    slots = 2
    ...

The result is a str.format template, as gridtest.Grid and the tests' own grids fill it: `{port}`, and
any {name} in a string value ("{root}/data") or a Raw value, is left for them; the braces of an inline
table (a dict value) are doubled so they survive .format.
The `grid_toml` fixture of tests/conftest.py writes it to a file with the port filled in."""
from __future__ import annotations

import json
from typing import Any, Mapping

# Sections whose place in the text is fixed (others follow [master] in the order given); tests that
# edit the text (reconfig) look for "[hosts.node1]\nslots = 2" and "[monitor]\nenabled = false".
_LAST = ("groups", "monitor")


class Raw(str):
    """A value written as it is: a placeholder such as Raw("{port}") or Raw("%s"), or TOML text the
    builder does not spell (an inline table of names filled in later)."""


def _value(v: Any) -> str:
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):            # template text, as the file is: "{root}/data" is filled in later
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, Mapping):        # an inline table; braces doubled for .format
        return "{{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }}"
    raise TypeError(f"grid.toml value {v!r} of type {type(v).__name__}: give a bool, number, string, list, "
                    "dict or Raw(text)")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def _section(name: str, options: Mapping[str, Any]) -> str:
    return "\n".join([f"[{name}]", *(f"{_key(k)} = {_value(v)}" for k, v in options.items())]) + "\n"


def toml_text(hosts: Mapping[str, int | Mapping[str, Any]] | None = None,
              queues: Mapping[str, Mapping[str, Any]] | None = None, *,
              port: Any = Raw("{port}"), monitor: bool | Mapping[str, Any] = False,
              **sections: Mapping[str, Any]) -> str:
    """grid.toml's text: [master] with `port` (None: no port line) and sections["master"]'s options;
    every other section of `sections` ([grid], [session], [scheduling], [groups], …) with its options;
    one [hosts.NAME] per host (an int is its slots, a dict its options); one [queues.NAME] per queue
    (an empty dict: the queue with the defaults); [monitor] last: False → enabled = false, True → no
    [monitor] section (the default: on), a dict → those options."""
    master = dict(sections.pop("master", {}))
    if port is not None:
        master = {"port": port, **master}
    parts = [_section("master", master)] if master else []
    parts += [_section(name, opts) for name, opts in sections.items() if name not in _LAST]
    for name, opts in (hosts or {}).items():
        parts.append(_section(f"hosts.{name}", {"slots": opts} if isinstance(opts, int) else opts))
    for name, opts in (queues or {}).items():
        parts.append(_section(f"queues.{name}", opts))
    if "groups" in sections:
        parts.append(_section("groups", sections["groups"]))
    if monitor is False:
        parts.append(_section("monitor", {"enabled": False}))
    elif isinstance(monitor, Mapping):
        parts.append(_section("monitor", monitor))
    return "\n" + "\n".join(parts)


# What every grid shared by real users has (tests/grid/test_multiuser_grid.py's SharedGrid fills in
# {admin} and {root}): its administrator, and libraries under its root.
SHARED_SECTIONS = {"grid": {"admins": ["{admin}"]},
                   "libraries": {"data": "{root}/data", "work": "{root}/work", "util": "{root}/util"}}

# One host, one slot, no monitor: the grid most API tests need.
ONE_SLOT_TOML = toml_text({"node1": 1})
