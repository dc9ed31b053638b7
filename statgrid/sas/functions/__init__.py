"""The DATA step's functions and CALL routines (SAS 9.4 Functions and CALL Routines: Reference): the
registry (registry.py: `FUNCTIONS`, `CALL_ROUTINES`, `lookup_function(name)`, `lookup_call(name)`,
`call_function`, `invalid_argument`) filled by the families — numeric, character, dates, random, files,
special — each registering its functions when imported here.
"""
from __future__ import annotations

from statgrid.sas.functions.registry import (CALL_ROUTINES, FUNCTIONS, MAX_CHAR, ORDINALS, CallRoutine,  # noqa: F401
                                             Function, call_function, call_routine, check_arity, function,
                                             invalid_argument, lookup_call, lookup_function)
from statgrid.sas.functions import numeric, character, dates, random, files, special  # noqa: F401,E402  registers
from statgrid.sas.functions import probability, descriptive, regex, moretext, moredates, extra  # noqa: F401,E402  registers

__all__ = ["CALL_ROUTINES", "FUNCTIONS", "MAX_CHAR", "ORDINALS", "CallRoutine", "Function", "call_function",
           "call_routine", "check_arity", "function", "invalid_argument", "lookup_call", "lookup_function",
           "numeric", "character", "dates", "random", "files", "special", "probability", "descriptive", "regex",
           "moretext", "moredates", "extra"]
