"""PROC GLM's MEANS statement (SAS/STAT User's Guide, The GLM Procedure, MEANS statement), read into the
engine's requests (procs/glm_means.py computes them), and its tables by SAS's ODS names:

    MEANS effects </ DUNCAN TUKEY BON SIDAK SCHEFFE LSD T SNK ALPHA=p LINES CLDIFF DEPONLY>;

    Means          the means and standard deviations per level (columns Mean_<var>, SD_<var>)
    MCLinesInfo    the test's alpha, error DF and mean square, critical value, minimum significant difference
    MCLinesRange   Duncan's and SNK's critical range per number of means
    MCLines        the grouping letters (Group, Mean, N and the level under the variable's name)
    CLDiffsInfo    as MCLinesInfo, for intervals
    CLDiffs        every ordered pair of levels: Comparison, Difference, LowerCL, UpperCL, Significance ('***')
The multiple-comparison options SAS has beyond these (DUNNETT, REGWQ, WALLER, GABRIEL, GT2, SMM, E=, WELCH,
HOVTEST …) are an ERROR naming the option.
"""
from __future__ import annotations

from typing import Any

from statgrid.procs._base import format_value
from statgrid.procs.glm_means import METHODS, MeansRequest
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME
from statgrid.sas.ods import OdsColumn as Col, OdsTable

FLAGS = {"LINES", "CLDIFF", "DEPONLY"}
NOT_BUILT = {"DUNNETT", "DUNNETTL", "DUNNETTU", "GABRIEL", "GT2", "REGWQ", "SMM", "WALLER", "KRATIO", "E", "ETYPE",
             "HTYPE", "HOVTEST", "WELCH", "CLM", "NOSORT"}
VALID = "DUNCAN, TUKEY, BON, SIDAK, SCHEFFE, LSD, T, SNK, ALPHA=, LINES, CLDIFF, DEPONLY"


def parse(c) -> MeansRequest:
    """The MEANS statement after its keyword → a MeansRequest."""
    effects: list[str] = []
    while not c.at_end() and not c.at("/"):
        parts = [c.next().text]
        while not c.at_end() and c.at("*"):
            parts += [c.next().text, c.next().text]
        effects.append("".join(parts))
    req = MeansRequest(effects)
    if c.accept("/"):
        while not c.at_end():
            t = c.next()
            name = t.upper if t.kind == NAME else t.text
            if name in METHODS:
                req.methods.append(name)
            elif name in FLAGS:
                setattr(req, name.lower(), True)
            elif name == "ALPHA":
                c.expect("=", expected="= after ALPHA")
                v = c.next()
                req.alpha = float(v.value) if isinstance(v.value, (int, float)) else float("nan")
                if not 0 < req.alpha < 1:
                    raise SasError(f"ALPHA={v.text} in the MEANS statement must be between 0 and 1", v.line, v.col,
                                   v.text, "ALPHA=0.05")
            elif name in NOT_BUILT:
                raise SasError(f"The {name} option of GLM's MEANS statement is not supported by statgrid yet", t.line,
                               t.col, t.text, VALID)
            else:
                raise SasError(f"The option {t.text} is not recognized in the MEANS statement", t.line, t.col, t.text,
                               VALID)
    if not effects:
        raise c.error("MEANS needs at least one effect", "MEANS a / TUKEY;")
    return req


def tables(result: Any) -> list[OdsTable]:
    out = []
    for block in (getattr(result, "stats", None) or {}).get("means") or []:
        out += {"means": _means, "lines": _lines, "cldiff": _cldiff}[block["kind"]](block)
    return out


def _means(b: dict) -> list[OdsTable]:
    cols = [Col("Effect", type="char", hidden=True), *[Col(c, f"Level of {c}", "char") for c in b["classes"]],
            Col("N", fmt="int")]
    for v in b["variables"]:
        cols += [Col(f"Mean_{v}", f"{v} Mean", fmt="d8"), Col(f"SD_{v}", f"{v} Std Dev", fmt="d8")]
    k = len(b["classes"])
    rows = [[b["effect"], *[format_value(x) for x in r[:k]], *r[k:]] for r in b["rows"]]
    return [OdsTable("Means", "", cols, rows, "Glm")]


def _keys(b: dict) -> list[Col]:
    return [Col("Effect", type="char", hidden=True), Col("Dependent", type="char", hidden=True),
            Col("Method", type="char", hidden=True)]


def _info(name: str, b: dict) -> OdsTable:
    rows = [[b["effect"], b["dependent"], b["method"], label, value] for label, value in b["info"]]
    return OdsTable(name, b["title"], [*_keys(b), Col("Label1", "", "char"), Col("nValue1", "", fmt="best")],
                    rows, "Glm", headings=False)


def _lines(b: dict) -> list[OdsTable]:
    out = [_info("MCLinesInfo", b)]
    key = [b["effect"], b["dependent"], b["method"]]
    if b.get("ranges"):
        out.append(OdsTable("MCLinesRange", "", [*_keys(b), Col("NumberOfMeans", "Number of Means", fmt="int"),
                                                 Col("CriticalRange", "Critical Range", fmt="d4")],
                            [[*key, p, r] for p, r in b["ranges"]], "Glm"))
    short = b["method"].split("'")[0].split()[0]
    out.append(OdsTable("MCLines", "Means with the same letter are not significantly different.", [
        *_keys(b), Col("Group", f"{short} Grouping", "char", right=True), Col("Mean", fmt="d6"),
        Col("N", fmt="int"), Col(b["effect"], type="char")],
        [[*key, *r[:3], format_value(r[3])] for r in b["rows"]], "Glm"))
    return out


def _cldiff(b: dict) -> list[OdsTable]:
    alpha = dict(b["info"])["Alpha"]
    key = [b["effect"], b["dependent"], b["method"]]
    level = f"Simultaneous {100 * (1 - alpha):g}%"
    return [_info("CLDiffsInfo", b), OdsTable(
        "CLDiffs", f"Comparisons significant at the {alpha:g} level are indicated by ***.", [
            *_keys(b), Col("Comparison", f"{b['effect']} Comparison", "char"),
            Col("Difference", "Difference Between Means", fmt="d6"), Col("LowerCL", f"{level} Lower", fmt="d6"),
            Col("UpperCL", f"{level} Upper", fmt="d6"), Col("Significance", "", "char")],
        [[*key, *r] for r in b["rows"]], "Glm")]
