"""The layout of the state a compiled DATA step keeps between kernel calls (shared by the code generator,
the run-time helpers and the driver; no numba here, so that deciding whether to take a step costs no
numba import).

  ist  int64[IST_SIZE + one per LAG call site]: the slots below, then each LAG queue's head position;
  cnt  int64[2 * places]: "Missing values were generated" counts per place, then "Mathematical
       operations could not be performed" counts per place.
A kernel pass returns one of the ST_ codes."""
from __future__ import annotations

OUTCOUNT = 0        # rows in the output buffer
BAIL = 1            # non-zero: stop, the Python engine runs the step (an ERROR or a NOTE only it writes)
DIVZERO = 2         # 1 + the place of the first division by zero (0: none)
NITER = 3           # _N_ so far
ROWSREAD = 4        # observations read by the SET statement
RAN_X = 5           # the RANUNI stream's last value
RAN_ON = 6          # 1 once the RANUNI stream is started
IST_SIZE = 7

ST_OK, ST_DEL, ST_STOP, ST_BAIL = 0, 1, 2, 3
