"""A job's lifecycle: its states, how they are shown, and the one function that changes them.

Every change of a job's state (and every other change of a job the master records as an event)
goes through `change()`, which looks the event up in TRANSITIONS: the states the job may be in
before it, the states it may be in after it, and the fields it sets to fixed values (a requeue
forgets the ended attempt's host, times and exit). Flux's job-manager/event.c and Slurm's
job_state_set() are the model: one function, one table, so that a new event is one new row and
a change from a wrong state is refused (IllegalTransition) instead of silently written.

    submit ─▶ PEND ──dispatch──▶ RUN ──finish / lost──▶ DONE | EXIT | KILLED
               ▲  ╲                │ ╲                        │
               │   ╲──kill──▶ KILLED  start, kill, suspend,   │ (grid down of a rerunnable job:
               │    ╲──dependency──▶ EXIT   resume (RUN→RUN)  │  its end is turned into a requeue)
               └──────────── requeue ◀─────────────────────────┘

USUSP is shown, never stored: a RUN job that `statgrid suspend` stopped (suspend_ts set) shows as
USUSP (LSF's user-suspended); the store and the nodes keep it RUN. `shown_state` and
`SHOWN_STATE_SQL` are the only spellings of that rule.

Standard library only (and protocol-free): the store, the master, the API, the client and the
console all import it.
"""
from __future__ import annotations

import dataclasses
import enum
import logging
from dataclasses import dataclass
from typing import Any, Mapping, TypeVar

log = logging.getLogger("statgrid.lifecycle")


class JobState(str, enum.Enum):
    """A job's state, as LSF's bjobs names them: PEND (queued), RUN (handed to a node), DONE (exit
    code 0), EXIT (non-zero exit, a signal, a launch error, or the host lost), KILLED (ended after `kill`)."""
    PEND = "PEND"
    RUN = "RUN"
    DONE = "DONE"
    EXIT = "EXIT"
    KILLED = "KILLED"
    # Shown, never stored (shown_state): a suspended RUN job.
    USUSP = "USUSP"

    @property
    def finished(self) -> bool:
        return self in FINISHED_STATES


FINISHED_STATES = (JobState.DONE, JobState.EXIT, JobState.KILLED)
FINISHED_NAMES = tuple(s.value for s in FINISHED_STATES)                 # as the API's JSON spells them
RUNNING_NAMES = (JobState.RUN.value, JobState.USUSP.value)              # shown states of a job on a node
UNFINISHED_NAMES = (JobState.PEND.value, *RUNNING_NAMES)                 # shown states of a job not yet ended
SHOWN_NAMES = (*UNFINISHED_NAMES, *FINISHED_NAMES)                       # every state a user may see


def shown_state(state: str | JobState, suspend_ts: float | None) -> str:
    """The state as users see it: RUN shows as USUSP while the job is suspended."""
    value = state.value if isinstance(state, JobState) else state
    return JobState.USUSP.value if value == JobState.RUN.value and suspend_ts is not None else value


def stored_state(shown: str) -> JobState:
    """shown_state's inverse for the store: USUSP is stored as RUN."""
    return JobState.RUN if shown == JobState.USUSP.value else JobState(shown)


# The same rule in SQL, over the jobs table's columns (store.py filters and sorts with it).
SHOWN_STATE_SQL = "CASE WHEN state = 'RUN' AND suspend_ts IS NOT NULL THEN 'USUSP' ELSE state END"


def killed_state(kill_as: str | None) -> JobState:
    """The state a job whose kill was requested ends in: Job.kill_as (EXIT for a run limit, as LSF's
    TERM_RUNLIMIT), else KILLED."""
    return JobState(kill_as) if kill_as else JobState.KILLED


class IllegalTransition(RuntimeError):
    """An event a job's state does not allow (a bug of the caller: the change is not applied)."""


_ANY = frozenset(JobState) - {JobState.USUSP}
_ENDED = frozenset(FINISHED_STATES)


@dataclass(frozen=True)
class Transition:
    """One event of the table: from which states to which, and what it sets."""
    event: str                                          # its name in the store's job_events
    moves: Mapping[JobState, frozenset[JobState]]       # prior state → allowed next states
    sets: Mapping[str, Any] = dataclasses.field(default_factory=dict)   # fields set to these values
    bumps: tuple[str, ...] = ()                         # integer fields incremented by one


_SAME_RUN = {JobState.RUN: frozenset({JobState.RUN})}
_SAME_PEND = {JobState.PEND: frozenset({JobState.PEND})}

TRANSITIONS: dict[str, Transition] = {t.event: t for t in (
    # A new attempt on a host: nothing of the previous attempt's run survives.
    Transition("dispatch", {JobState.PEND: frozenset({JobState.RUN})},
               sets={"start_ts": None, "end_ts": None, "pid": None, "suspend_ts": None, "suspended_s": 0.0,
                     "kill_as": None},
               bumps=("attempt",)),
    Transition("start", _SAME_RUN),                     # the node's launcher started it (pid, start_ts)
    Transition("finish", {JobState.RUN: _ENDED}),       # its node said how it ended
    Transition("lost", {JobState.RUN: frozenset({JobState.EXIT, JobState.KILLED})}),   # ended with no word
    # Back to the queue: from RUN (host lost, dispatch failed), or from the end a `grid down` gave a
    # rerunnable job (master._finish requeues it in the same transaction).
    Transition("requeue", {JobState.RUN: frozenset({JobState.PEND}), **{s: frozenset({JobState.PEND}) for s in _ENDED}},
               sets={"host": None, "pid": None, "dispatch_ts": None, "start_ts": None, "end_ts": None,
                     "exit_code": None, "signal": None, "exit_reason": None, "kill_requested": False,
                     "kill_as": None, "suspend_ts": None, "suspended_s": 0.0},
               bumps=("requeues",)),
    # A pending job ends at once; a running one is marked and ends when its node says so.
    Transition("kill", {JobState.PEND: frozenset({JobState.KILLED}), JobState.RUN: frozenset({JobState.RUN})},
               sets={"kill_requested": True}),
    Transition("dependency", {JobState.PEND: frozenset({JobState.EXIT})}),   # can never be met
    Transition("suspend", _SAME_RUN),
    Transition("resume", _SAME_RUN),
    Transition("modify", _SAME_PEND),
    Transition("top", _SAME_PEND),
    Transition("bottom", _SAME_PEND),
)}

J = TypeVar("J")


def change(job: J, event: str, to: JobState | None = None, **fields: Any) -> J:
    """`job` (a record.Job) after `event`: its state becomes `to` (None: the event's only next state
    from the job's state), the event's fixed fields are set, its counters bumped, then `fields`
    applied. Raises IllegalTransition (and logs it) if the table does not allow the event from the
    job's state, or to `to`; nothing is changed then."""
    transition = TRANSITIONS.get(event)
    state: JobState = job.state                                          # type: ignore[attr-defined]
    job_id = getattr(job, "id", None)
    if transition is None:
        return _refuse(f"job {job_id}: unknown event {event!r}; events: {', '.join(TRANSITIONS)}")
    allowed = transition.moves.get(state)
    if allowed is None:
        return _refuse(f"job {job_id}: {event!r} is not allowed from state {state.value} (allowed from: "
                       f"{', '.join(s.value for s in transition.moves)})")
    if to is None:
        if len(allowed) != 1:
            return _refuse(f"job {job_id}: {event!r} from {state.value} needs a next state, one of "
                           f"{sorted(s.value for s in allowed)}")
        (to,) = allowed
    elif to not in allowed:
        return _refuse(f"job {job_id}: {event!r} cannot take a {state.value} job to {to.value} (allowed: "
                       f"{', '.join(sorted(s.value for s in allowed))})")
    clash = (set(fields) & (set(transition.sets) | set(transition.bumps))) | ({"state"} & set(fields))
    if clash:
        return _refuse(f"job {job_id}: {event!r} sets {', '.join(sorted(clash))} itself; do not pass them")
    bumped = {name: getattr(job, name) + 1 for name in transition.bumps}
    return dataclasses.replace(job, state=to, **transition.sets, **bumped, **fields)   # type: ignore[type-var]


def _refuse(message: str):
    log.error("lifecycle: %s", message)
    raise IllegalTransition(message)
