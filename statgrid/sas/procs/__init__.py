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

from typing import Any, Callable

from statgrid.sas.procs import hpforest, hpmixed, nlmixed
from statgrid.sas.procs import (analytics, append, contents, datasets, format as format_proc, freq, importexport, means, options,
                                models, print as print_proc, rank, reg, sort, sql, tabulate,
                                transpose, univariate)
from statgrid.sas.procs import surveylogistic

PROCS: dict[str, Callable[[Any, Any], None]] = {
    "PRINT": print_proc.run,
    "CONTENTS": contents.run,
    "DATASETS": datasets.run,
    "DELETE": datasets.run_delete,
    "SORT": sort.run,
    "FORMAT": format_proc.run,
    "OPTIONS": options.run,
    "MEANS": means.run,
    "FREQ": freq.run,
    "SQL": sql.run,
    "APPEND": append.run,
    "TRANSPOSE": transpose.run,
    "RANK": rank.run,
    "REG": reg.run,
    "LOGISTIC": models.run_logistic,
    "GLM": models.run_glm,
    "GENMOD": models.run_genmod,
    "MIXED": models.run_mixed,
    "UNIVARIATE": univariate.run,
    "TABULATE": tabulate.run,
    "SURVEYSELECT": analytics.run_surveyselect,
    "STDIZE": analytics.run_stdize,
    "FASTCLUS": analytics.run_fastclus,
    "HPCLUS": analytics.run_hpclus,
    "GLIMMIX": analytics.run_glimmix,
    "IMPORT": importexport.run_import,
    "EXPORT": importexport.run_export,
    "CIMPORT": append.run_cimport,
    "SUMMARY": means.run_summary,
    "SURVEYLOGISTIC": surveylogistic.run,
    "HPMIXED": hpmixed.run,
    "HPFOREST": hpforest.run,
    "HP4SCORE": hpforest.run_hp4score,
    "NLMIXED": nlmixed.run,
}

__all__ = ["PROCS"]
