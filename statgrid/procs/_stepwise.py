"""The FORWARD / BACKWARD / STEPWISE loop that PROC REG and PROC LOGISTIC share (procs/regression.py,
procs/logistic.py): each says which term would enter or leave and how it records the step; the order of the
steps and when the selection ends are the same for both (SAS: "each forward selection step can be followed by
one or more backward elimination steps"). Standard library only.
"""
from __future__ import annotations

from typing import Callable


def stepwise(method: str, start: list[int], enter: Callable[[list[int]], int | None],
             remove: Callable[[list[int]], int | None]) -> list[int]:
    """The terms chosen from `start`. `enter(current)`: the term that enters at SLE (its step recorded), or None;
    `remove(current)`: the term that leaves at SLS likewise. FORWARD only enters, BACKWARD removes one term per
    step, STEPWISE follows each entry by every removal due. Ends when a step changes nothing or the model is one
    seen before (a cycle)."""
    current = list(start)
    seen = set()
    while True:
        changed = False
        if method in ("forward", "stepwise"):
            term = enter(current)
            if term is not None:
                current = current + [term]
                changed = True
        while method in ("backward", "stepwise"):
            term = remove(current)
            if term is None:
                break
            current = [c for c in current if c != term]
            changed = True
            if method == "backward":
                break
        state = tuple(sorted(current))
        if not changed or state in seen:
            break
        seen.add(state)
    return current
