"""The SAS log's and listing's exact text shapes (SasLog), written out by hand from SAS 9.4's documented
layout: the numbered source echo, NOTE/WARNING/ERROR continuation indent, the STIMER and FULLSTIMER step
notes from a STIMER record, MPRINT lines, page headers with DATE/NUMBER/CENTER, footnotes, form feeds."""
from __future__ import annotations

import io
import json
from datetime import datetime

from statgrid.sas.errors import SasSyntaxError
from statgrid.sas.options import SasOptions
from statgrid.sas.saslog import SasLog, format_sas_block, step_title
from statgrid.session.log import SessionLog
from statgrid.session.stimer import StepRecord

WHEN = datetime(2020, 1, 6, 10, 32)


def _rec(**kw) -> StepRecord:
    base = dict(session_id="s", step=1, name="DATA", status="ok", start_ts="2020-01-06T10:32:15.000+00:00",
                real_s=1.234, user_cpu_s=0.5, sys_cpu_s=0.25, memory_bytes=685_783, os_memory_bytes=25_325_568,
                os_memory_reset=True, page_faults=3, page_reclaims=125, voluntary_ctx_switches=7,
                involuntary_ctx_switches=2, block_input_ops=0, block_output_ops=264, read_bytes=0, write_bytes=0,
                logical_read_bytes=0, logical_write_bytes=0)
    base.update(kw)
    return StepRecord(**base)


def _log(**opts):
    text, lst, jsonl = io.StringIO(), io.StringIO(), io.StringIO()
    options = SasOptions()
    for k, v in opts.items():
        options.set(k, v) if v is not None and v is not True else options.set(k)
    log = SasLog(SessionLog(text=text, jsonl=jsonl, listing=lst), options, started=WHEN)
    return log, text, lst, jsonl


def test_step_titles():
    assert step_title("DATA") == "DATA statement"
    assert step_title("PROC SORT") == "PROCEDURE SORT"


def test_stimer_block_is_real_and_cpu_time():
    assert format_sas_block(_rec(), full=False) == [
        "NOTE: DATA statement used (Total process time):",
        "      real time           1.23 seconds",
        "      cpu time            0.75 seconds",
        "      "]


def test_fullstimer_block_rows_in_sas_order():
    lines = format_sas_block(_rec(name="PROC SORT"), full=True)
    assert lines == [
        "NOTE: PROCEDURE SORT used (Total process time):",
        "      real time           1.23 seconds",
        "      user cpu time       0.50 seconds",
        "      system cpu time     0.25 seconds",
        "      memory              669.71k",              # 685783 / 1024
        "      OS Memory           24732.00k",            # 25325568 / 1024
        "      Timestamp           01/06/2020 10:32:15 AM",
        "      Page Faults                       3",
        "      Page Reclaims                     125",
        "      Page Swaps                        0",
        "      Voluntary Context Switches        7",
        "      Involuntary Context Switches      2",
        "      Block Input Operations            0",
        "      Block Output Operations           264",
        "      "]


def test_step_record_goes_to_jsonl_and_log_under_options():
    log, text, _, jsonl = _log(FULLSTIMER=True)
    log.step(_rec())
    assert json.loads(jsonl.getvalue())["name"] == "DATA"
    assert "      user cpu time       0.50 seconds" in text.getvalue()
    log2, text2, _, jsonl2 = _log(NOSTIMER=True)
    log2.step(_rec())
    assert "used (Total process time)" not in text2.getvalue() and jsonl2.getvalue()


def test_source_echo_numbers_in_eleven_columns():
    log, text, _, _ = _log()
    log.set_source("data a;\n  x = 1;\n\nrun;\n\n")
    log.echo_through(2)
    log.echo_rest()
    assert text.getvalue() == "1          data a;\n2            x = 1;\n3\n4          run;\n"


def test_nosource_hides_echo_and_source2_shows_included_with_plus():
    log, text, _, _ = _log(NOSOURCE=True, SOURCE2=True)
    log.set_source("data a;\nrun;")
    log.echo_through(2)
    log.included("proc print;")
    assert text.getvalue() == "3         +proc print;\n"


def test_messages_wrap_with_sas_continuation_indent():
    log, text, _, _ = _log(LS=64)
    log.error("File WORK.NOPE.DATA does not exist and this sentence is long enough to wrap around.")
    log.warning("two\nlines")
    assert text.getvalue().split("\n")[:4] == [
        "ERROR: File WORK.NOPE.DATA does not exist and this sentence is",
        "       long enough to wrap around.",
        "WARNING: two",
        "         lines"]
    assert (log.errors, log.warnings) == (1, 1)


def test_nonotes_drops_notes_not_errors():
    log, text, _, _ = _log(NONOTES=True)
    log.note("hidden")
    log.error("shown")
    assert text.getvalue() == "ERROR: shown\n"


def test_sas_error_names_place_text_and_expectation():
    log, text, _, _ = _log()
    log.sas_error(SasSyntaxError("Syntax error", 12, 9, "dta", "DATA="))
    assert text.getvalue() == "ERROR: Syntax error at 'dta'; expecting DATA= (line 12, column 9)\n"


def test_mprint_lines_only_under_mprint():
    log, text, _, _ = _log()
    log.mprint("mymac", "data a;")
    assert text.getvalue() == ""
    log.options.set("MPRINT")
    log.mprint("mymac", "data a;")
    assert text.getvalue() == "MPRINT(MYMAC):   data a;\n"


def test_listing_page_header_date_number_center():
    log, _, lst, _ = _log(LS=80, PS=20)
    log.titles = {1: "Sales"}
    log.listing("x\n1")
    first = lst.getvalue().split("\n")[0]
    right = "10:32 Monday, January 6, 2020   1"
    assert first == " " * 37 + "Sales" + " " * (80 - 37 - 5 - len(right)) + right     # centred: (80-5)//2 = 37
    assert len(first) == 80 and first.endswith(right)


def test_listing_nodate_nonumber_nocenter_and_form_feed_between_pages():
    log, _, lst, _ = _log(LS=64, PS=15, NODATE=True, NONUMBER=True, NOCENTER=True)
    log.titles = {1: "T1", 3: "T3"}
    log.listing("\n".join(f"row {i}" for i in range(20)))
    pages = lst.getvalue().split("\f")
    assert len(pages) == 2                                   # 15 - 4 header lines = 11 rows a page
    assert pages[0].split("\n")[:5] == ["T1", "", "T3", "", "row 0"]
    assert pages[1].split("\n")[4] == "row 11"


def test_listing_footnotes_sit_at_the_bottom_of_the_page():
    log, _, lst, _ = _log(LS=64, PS=15, NODATE=True, NOCENTER=True)
    log.titles, log.footnotes = {1: "T"}, {1: "F"}
    log.listing("a")
    page = lst.getvalue().rstrip("\n").split("\n")
    assert len(page) == 15 and page[0] == "T" + " " * 62 + "1" and page[-1] == "F"


def test_long_title_moves_left_of_the_date():
    log, _, lst, _ = _log(LS=64)
    log.titles = {1: "Twenty characters ok"}
    log.listing("a")
    right = "10:32 Monday, January 6, 2020   1"              # 33 characters: the title ends one blank before it
    assert lst.getvalue().split("\n")[0] == " " * 10 + "Twenty characters ok" + " " + right


def test_pageno_resets_numbering():
    log, _, lst, _ = _log(LS=64, NODATE=True, NOCENTER=True)
    log.titles = {}
    log.set_page(7)
    log.listing("a")
    assert lst.getvalue().split("\n")[0] == " " * 63 + "7"
