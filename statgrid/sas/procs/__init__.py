"""The Base SAS procedures of a SAS program (issue 26, item 7), in SAS 9.4's layout (Base Procedures
Guide): PRINT, CONTENTS, DATASETS, DELETE, SORT, FORMAT, OPTIONS.

`PROCS[name](statements, program)`: `statements` are the PROC statement and those after it up to RUN;
or QUIT; (exclusive) — a list, or for DATASETS the driver's lazy iterator (its statements run as they
come, until QUIT;). An unknown option or statement raises SasError naming it, its line and column; the
driver (statgrid/sas/program.py) logs it and goes on in syntax-check mode. Listings go through
`program.log.listing(text)` (titles, page headers and centring are the log's), data sets through the
data-set layer (statgrid/sas/dataset.py).
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Callable, Iterator

# name → "module:function" in this package; imported on first use, so a program pays only for its PROCs
# (importing all of them cost ~0.19 s at every .sas job's start)
_WHERE: dict[str, str] = {
    "PRINT": "print:run", "CONTENTS": "contents:run", "DATASETS": "datasets:run", "DELETE": "datasets:run_delete",
    "SORT": "sort:run", "FORMAT": "format:run", "OPTIONS": "options:run", "MEANS": "means:run", "FREQ": "freq:run",
    "SQL": "sql:run", "APPEND": "append:run", "TRANSPOSE": "transpose:run", "RANK": "rank:run", "REG": "reg:run",
    "LOGISTIC": "models:run_logistic", "GLM": "models:run_glm", "GENMOD": "models:run_genmod",
    "MIXED": "models:run_mixed", "UNIVARIATE": "univariate:run", "TABULATE": "tabulate:run",
    "SURVEYSELECT": "analytics:run_surveyselect", "STDIZE": "analytics:run_stdize",
    "FASTCLUS": "analytics:run_fastclus", "HPCLUS": "analytics:run_hpclus", "GLIMMIX": "analytics:run_glimmix",
    "IMPORT": "importexport:run_import", "EXPORT": "importexport:run_export", "CIMPORT": "append:run_cimport",
    "SUMMARY": "means:run_summary", "SURVEYLOGISTIC": "surveylogistic:run", "HPMIXED": "hpmixed:run",
    "HPFOREST": "hpforest:run", "HP4SCORE": "hpforest:run_hp4score", "NLMIXED": "nlmixed:run",
    "PRINTTO": "printto:run", "COPY": "datasets:run_copy",
    "CORR": "corr:run",
    "TTEST": "ttest:run",
}


class _Procs(Mapping):
    """PROCS[name] → the PROC's runner, its module imported when first asked for."""

    def __init__(self, where: dict[str, str]):
        self._where, self._loaded = where, {}

    def __getitem__(self, name: str) -> Callable[[Any, Any], None]:
        if name not in self._loaded:
            module, attr = self._where[name].split(":")
            self._loaded[name] = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, name: object) -> bool:
        return name in self._where


PROCS: Mapping[str, Callable[[Any, Any], None]] = _Procs(_WHERE)

__all__ = ["PROCS"]
