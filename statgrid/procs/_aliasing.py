"""The aliasing rule of the model procedures (reg, glm, genmod, logistic, mixed), in one place.

A design column is aliased — estimate 0 with 0 DF, as SAS's G2 generalized inverse leaves it — when
it is (numerically) a linear combination of the columns before it. Read from the triangular factor
R of the columns in model order: |R_jj| is column j's distance from the span of columns 0…j−1 and
‖R[:, j]‖ = ‖x_j‖ its length, so column j is aliased when |R_jj| ≤ ALIAS_TOL·‖x_j‖ (a column of
zeros always is). The test is relative to the column's own length, so it does not depend on the
units of x_j; 1e-9 leaves room for the rounding of a QR of columns up to ~1e6 times longer than
their distinct part, and treats anything closer than that to the span as the span.
"""
from __future__ import annotations

import numpy as np

ALIAS_TOL = 1e-9


def split_aliased(R: np.ndarray, k: int | None = None) -> tuple[list[int], list[int]]:
    """Positions of R's first k columns (default all) that are kept and that are aliased. R may
    have fewer rows than columns (a QR of fewer rows): the missing diagonal counts as 0."""
    k = R.shape[1] if k is None else k
    norms = np.linalg.norm(R[:, :k], axis=0)
    diag = np.zeros(k)
    d = min(k, R.shape[0])
    diag[:d] = np.abs(np.diag(R[:d, :d]))
    kept, aliased = [], []
    for j in range(k):
        (kept if norms[j] > 0 and diag[j] > ALIAS_TOL * norms[j] else aliased).append(j)
    return kept, aliased
