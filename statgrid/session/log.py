"""The session log: NOTE/WARNING/ERROR lines, one STIMER block per step, JSON lines, listing.

Three streams, as a SAS batch job has a .log and a .lst:
- text: the readable log (messages and STIMER blocks),
- jsonl: one JSON object per step plus the session total — the record everything else reads,
- listing: procedure output (tables), like the SAS listing.
Any stream may be None. Every write is flushed so a killed session leaves a complete log.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from statgrid.job.jobdir import SESSION_STEM
from statgrid.sas.saslog import LevelMessages
from statgrid.session.stimer import StepRecord

_LABEL_WIDTH = 30


def _kib(n_bytes: int) -> str:
    return f"{n_bytes / 1024:,.2f}k"


def format_step_block(rec: StepRecord) -> str:
    """The readable STIMER block for one step (or the session total), like SAS FULLSTIMER."""
    head = (f"NOTE: session {rec.session_id} used (Total process time):" if rec.record == "total"
            else f"NOTE: {rec.name} used (Total process time):")
    if rec.status != "ok" and rec.record != "total":
        head = f"NOTE: {rec.name} ({rec.status}) used (Total process time):"
    rows = [
        ("real time", f"{rec.real_s:.2f} seconds"),
        ("user cpu time", f"{rec.user_cpu_s:.2f} seconds"),
        ("system cpu time", f"{rec.sys_cpu_s:.2f} seconds"),
        ("memory", _kib(rec.memory_bytes)),
        ("OS Memory", _kib(rec.os_memory_bytes) + ("" if rec.os_memory_reset else " (process peak)")),
        ("Timestamp", rec.start_ts),
        ("Page Faults", f"{rec.page_faults:,}"),
        ("Page Reclaims", f"{rec.page_reclaims:,}"),
        ("Voluntary Context Switches", f"{rec.voluntary_ctx_switches:,}"),
        ("Involuntary Context Switches", f"{rec.involuntary_ctx_switches:,}"),
        ("Block Input Operations", f"{rec.block_input_ops:,}"),
        ("Block Output Operations", f"{rec.block_output_ops:,}"),
        ("Bytes Read", f"{rec.read_bytes:,}"),
        ("Bytes Written", f"{rec.write_bytes:,}"),
        ("Logical Bytes Read", f"{rec.logical_read_bytes:,}"),
        ("Logical Bytes Written", f"{rec.logical_write_bytes:,}"),
    ]
    if rec.record == "total":
        rows.insert(0, ("steps", f"{rec.step}"))
    return "\n".join([head] + [f"      {label:<{_LABEL_WIDTH}}{value}" for label, value in rows])


class SessionLog(LevelMessages):
    def __init__(self, text: TextIO | None | str = "stderr", jsonl: TextIO | None = None,
                 listing: TextIO | None | str = "stdout"):
        # the defaults name the streams, resolved now, not at import (tests and callers may
        # have redirected sys.stdout/sys.stderr since)
        self.text = sys.stderr if text == "stderr" else text
        self._listing = sys.stdout if listing == "stdout" else listing
        self.jsonl = jsonl
        self._owned: list[TextIO] = []

    @classmethod
    def to_directory(cls, directory: Path, stem: str = SESSION_STEM, text_echo: TextIO | None = None,
                     listing_echo: TextIO | None = None, jsonl_echo: TextIO | None = None,
                     append: bool = False) -> "SessionLog":
        """Write <stem>.log, <stem>.lst and <stem>.stimer.jsonl under `directory`, each also
        echoed to the matching stream when one is given (e.g. the terminal); `append`: after what they
        hold (a kernel restarted in its job: one job's sessions, one after the other)."""
        directory.mkdir(parents=True, exist_ok=True)
        files: list[TextIO] = []
        try:
            for ext in (".log", ".lst", ".stimer.jsonl"):
                files.append(open(directory / f"{stem}{ext}", "a" if append else "w"))
        except OSError:
            for f in files:
                f.close()
            raise
        text, lst, jsonl = (_Tee(f, echo) if echo else f
                            for f, echo in zip(files, (text_echo, listing_echo, jsonl_echo)))
        log = cls(text=text, jsonl=jsonl, listing=lst)
        log._owned = files
        return log

    def _emit(self, stream: TextIO | None, text: str) -> None:
        if stream is not None:
            stream.write(text if text.endswith("\n") else text + "\n")
            stream.flush()

    def message(self, level: str, msg: str) -> None:
        lines = msg.splitlines() or [""]
        prefix = f"{level}: "
        self._emit(self.text, "\n".join([prefix + lines[0]] + [" " * len(prefix) + ln for ln in lines[1:]]))

    def step(self, rec: StepRecord) -> None:
        self._emit(self.text, format_step_block(rec) + "\n")
        self._emit(self.jsonl, json.dumps(rec.to_json_dict(), sort_keys=False))

    def listing(self, text: str) -> None:
        self._emit(self._listing, text + "\n")

    def close(self) -> None:
        for f in self._owned:
            f.close()
        self._owned = []


class _Tee:
    """Write to a file and echo to a terminal stream."""

    def __init__(self, *streams: TextIO):
        self.streams = streams

    def write(self, text: str) -> None:
        for s in self.streams:
            s.write(text)

    def flush(self) -> None:
        for s in self.streams:
            s.flush()
