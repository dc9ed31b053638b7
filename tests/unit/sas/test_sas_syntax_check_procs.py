"""After an ERROR the program goes on in syntax-check mode (OBS=0): an analysis PROC reads its statements and
runs nothing, adding no ERROR of its own (it used to fail on its empty internal staging member, one spurious
ERROR per PROC, inflating SYSCC's error count)."""
from __future__ import annotations

import io

from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog

PROCS = """proc mixed data=a; class g; model y = x; run;
proc glm data=a; class g; model y = g; run;
proc reg data=a; model y = x; run;
proc genmod data=a; model y = x; run;
proc logistic data=a; model g = x; run;
proc surveylogistic data=a; model g = x; run;
proc hpmixed data=a; class g; model y = x; random intercept / subject=g; run;
proc hpforest data=a; target y / level=interval; input x / level=interval; run;
proc nlmixed data=a; parms b0=0 b1=1 s2=1; m = b0 + b1 * x; model y ~ normal(m, s2); run;
proc univariate data=a; var x; run;
proc fastclus data=a maxclusters=2; var x y; run;
"""


def run(session, text):
    out = io.StringIO()
    code = run_program(text, session, SasLog(SessionLog(text=out, jsonl=io.StringIO(), listing=io.StringIO())))
    return code, out.getvalue()


def test_analysis_procs_add_no_error_in_syntax_check_mode(session):
    data = "data a; do i = 1 to 20; x = i; y = 2 * i + ranuni(1); g = mod(i, 2); output; end; run;\n"
    code, log = run(session, data + "proc print data=nosuch; run;\n" + PROCS)
    assert code != 0
    errors = [line for line in log.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "NOSUCH" in errors[0], errors
    assert "_SG" not in log.upper().replace("SYSCC", "")
    code, log = run(session, data + PROCS)           # the same PROCs run without the earlier ERROR
    assert code == 0, log
