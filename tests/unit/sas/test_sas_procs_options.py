"""PROC OPTIONS through a real session: the log lines SAS writes (SAS 9.4 Base Procedures, OPTIONS: one
option a line, its description from column 20, on the next line when the setting is longer), GROUP=,
OPTION=, SHORT, DEFINE/VALUE, and its ERRORs. Values come from the program's options (OPTIONS statement)."""
from __future__ import annotations

import io

from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


def run_sas(session, text):
    t = io.StringIO()
    log = SasLog(SessionLog(text=t, jsonl=io.StringIO(), listing=io.StringIO()))
    code = run_program(text, session, log)
    return code, t.getvalue()


def block(log: str, start: str) -> list[str]:
    lines = log.split("\n")
    i = lines.index(start)
    out = []
    for ln in lines[i:]:
        if ln.startswith("NOTE:"):
            break
        out.append(ln)
    return out


def test_group_memory_and_option_list(session):
    code, log = run_sas(session, """options sortsize=2G nocenter ls=120;
proc options group=memory; run;
proc options option=(center obs) ; run;""")
    assert code == 0, log
    assert block(log, "Group=MEMORY")[:5] == [
        "Group=MEMORY",
        " SORTSIZE=2147483648",
        "                   Specifies the amount of memory that is available to the SORT procedure.",
        " MEMSIZE=536870912 Specifies the limit on the amount of virtual memory that can be used during a SAS session.",
        ""]
    assert " NOCENTER          Centers SAS procedure output." in log
    # the description wrapped at LINESIZE=120: 101 characters from column 20
    assert (" OBS=MAX           Specifies the observation that is used to determine the last observation to "
            "process, or specifies the\n                   last record to process.") in log


def test_short_performance_define_value(session):
    code, log = run_sas(session, """options nothreads bufsize=64k;
proc options group=performance short; run;
proc options option=bufsize value; run;
proc options option=memsize define; run;""")
    assert code == 0, log
    lines = log.split("\n")
    assert lines[lines.index("Group=PERFORMANCE") + 1] == \
        " NOTHREADS BUFSIZE=65536 COMPRESS=BINARY CPUCOUNT=2 MEXECSIZE=65536"   # COMPRESS: the session's (zstd)
    assert "Option Value Information For SAS Option BUFSIZE" in lines
    assert "    Value: 65536" in lines and "    Scope: SAS Session" in lines
    assert "Option Definition Information for SAS Option MEMSIZE" in lines
    assert "    When Can Set: Startup" in lines


def test_errors(session):
    code, log = run_sas(session, "proc options group=memry; run;")
    log = " ".join(x.strip() for x in log.split("\n"))
    assert code == 1 and "ERROR: Invalid group name MEMRY" in log and "(line 1, column 20)" in log
    code, log = run_sas(session, "proc options option=nosuch; run;")
    assert code == 1 and "ERROR: Invalid option name NOSUCH" in log
    code, log = run_sas(session, "proc options grop=memory; run;")
    assert code == 1 and "The option or parameter grop is not recognized in the PROC OPTIONS statement" in log
