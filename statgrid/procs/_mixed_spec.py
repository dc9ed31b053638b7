"""PROC MIXED's RANDOM and REPEATED statements as data: the statements checked against the data set,
the variables they need, and — over the rows used — each RANDOM's Z and subject codes, the REPEATED's
subject, level index and coordinates, and the blocks of V (rows linked by any shared subject or
random-effect column: scipy's connected components of rows × (statement, subject, column))."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import design as _design
from statgrid.procs._base import check_columns
from statgrid.procs._mixed_cov import RANDOM_TYPES, REPEATED_TYPES, GSide, RSide
from statgrid.procs.design import Effect

INTERCEPTS = ("intercept", "int")


@dataclass
class RandomSpec:
    effects: list[Effect]
    subject: list[str]
    subject_name: str
    type: str = "vc"


@dataclass
class RepeatedSpec:
    effect: list[str]                 # the REPEATED effect's variables (may be empty)
    subject: list[str]
    subject_name: str
    type: str = "vc"
    coords: list[str] = field(default_factory=list)
    local: bool = False


def _subject(text, names, where) -> tuple[list[str], str]:
    if text is None or (isinstance(text, str) and text.strip().lower() in ("", "intercept")):
        return [], "" if text is None else str(text).strip()
    if not isinstance(text, str):
        cols = check_columns(list(text), names, "SUBJECT", where)
        return cols, "*".join(cols)
    token = text.strip()
    cols = check_columns([p for p in re.split(r"[*()\s]+", token) if p], names, "SUBJECT", where)
    return cols, token


def parse_random(spec: dict, names: list[str], dsname: str) -> RandomSpec:
    """{'effects': 'intercept x a b(a)', 'subject': 'id(trt)', 'type': 'vc'|'un'} → RandomSpec."""
    text = str(spec.get("effects") or "").strip()
    if not text:
        raise StatgridError("a RANDOM statement names no effect; write e.g. random='intercept' with subject=.")
    rtype = str(spec.get("type") or "vc").lower()
    if rtype not in RANDOM_TYPES:
        raise StatgridError(f"RANDOM TYPE={rtype.upper()} is not built; statgrid's PROC MIXED takes TYPE= "
                            f"{', '.join(t.upper() for t in RANDOM_TYPES)} on RANDOM.")
    effects: list[Effect] = []
    for tok in _design._tokens(text):
        for e in ([Effect(())] if tok.lower() in INTERCEPTS else _design.parse_effects(tok, names, "RANDOM")):
            if e not in effects:
                effects.append(e)
    subj, subj_name = _subject(spec.get("subject"), names, dsname)
    return RandomSpec(effects, subj, subj_name, rtype)


def parse_repeated(effect, subject, type_: str, coords, local: bool, names: list[str], dsname: str
                   ) -> RepeatedSpec:
    t = str(type_ or "vc").lower().strip()
    m = re.fullmatch(r"(sp\s*\(\s*(?:sph|exp)\s*\))\s*(?:\((.*)\))?", t)
    if m:
        t = m.group(1)
        if m.group(2) and not coords:
            coords = m.group(2).replace(",", " ")
    t = t.replace(" ", "")
    if t not in REPEATED_TYPES:
        raise StatgridError(f"REPEATED TYPE={type_!s} is not built; statgrid's PROC MIXED takes TYPE= "
                            f"{', '.join(x.upper() for x in REPEATED_TYPES)} (SP types with coordinates, e.g. "
                            "SP(SPH)(x y)) on REPEATED.")
    eff = [] if effect in (None, True, False) or not str(effect).strip() else \
        check_columns(str(effect).split(), names, "REPEATED", dsname)
    coord_cols = check_columns(str(coords).split(), names, "SP coordinates", dsname) if coords else []
    if t.startswith("sp") and not coord_cols:
        raise StatgridError(f"REPEATED TYPE={t.upper()} needs its coordinates, e.g. TYPE={t.upper()}(x y).")
    if local and not t.startswith("sp"):
        raise StatgridError(f"LOCAL (a nugget effect) is built for the SP types only, not TYPE={t.upper()}.")
    subj, subj_name = _subject(subject, names, dsname)
    return RepeatedSpec(eff, subj, subj_name, t, coord_cols, bool(local))


def variables(randoms: list[RandomSpec], rep: RepeatedSpec | None, class_vars: list[str]) -> tuple[list, list]:
    """(numeric RANDOM variables and coordinates, variables read as they are)."""
    numeric, raw = [], []
    for r in randoms:
        for e in r.effects:
            for v in e.variables:
                (raw if v in class_vars else numeric).append(v)
        raw += r.subject
    if rep is not None:
        raw += rep.subject + rep.effect
        numeric += rep.coords
    return list(dict.fromkeys(numeric)), list(dict.fromkeys(raw))


def _codes(df, cols: list[str]) -> np.ndarray:
    if not cols:
        return np.zeros(len(df), dtype=np.int64)
    return df.groupby(cols, sort=True, dropna=False).ngroup().to_numpy().astype(np.int64)


def random_z(df, r: RandomSpec, class_vars: list[str]) -> tuple[np.ndarray, list[list[int]], list[np.ndarray]]:
    """Z (n × q), the columns of each effect, and each effect's own columns (for containment)."""
    blocks, cols, start = [], [], 0
    for e in r.effects:
        cont = np.ones(len(df))
        for v in e.variables:
            if v not in class_vars:
                cont = cont * df[v].to_numpy(dtype=float)
        cls = [v for v in dict.fromkeys(e.variables) if v in class_vars]
        if cls:
            code = _codes(df, cls)
            Zi = np.zeros((len(df), int(code.max()) + 1))
            Zi[np.arange(len(df)), code] = cont
        else:
            Zi = cont[:, None]
        blocks.append(Zi)
        cols.append(list(range(start, start + Zi.shape[1])))
        start += Zi.shape[1]
    return np.hstack(blocks), cols, blocks


def build(df, randoms: list[RandomSpec], rep: RepeatedSpec | None, class_vars: list[str], memsize: int):
    """→ (block of each row, [GSide], RSide, containment list [(variables, Z_e, subject codes)])."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(df)
    gsides, contain = [], []
    rows_l, nodes_l, offset = [], [], 0
    for r in randoms:
        Z, cols, per_effect = random_z(df, r, class_vars)
        subj = _codes(df, r.subject)
        names = [e.name for e in r.effects]
        q = Z.shape[1]
        if r.type == "un" and q > 30:
            raise StatgridError(f"RANDOM TYPE=UN over {q} columns would have {q * (q + 1) // 2} parameters; "
                                "use TYPE=VC or fewer random effects.")
        gsides.append(GSide(Z, subj, cols, names, r.subject_name, r.type))
        for e, Ze in zip(r.effects, per_effect):
            contain.append(({*e.variables, *r.subject}, Ze, subj))
        nz_r, nz_c = np.nonzero(Z)
        rows_l.append(nz_r)
        nodes_l.append(offset + subj[nz_r] * q + nz_c)
        offset += (int(subj.max()) + 1) * q
    rtype = rep.type if rep is not None else "vc"
    r_subj = _codes(df, rep.subject) if rep is not None else np.zeros(n, dtype=np.int64)
    if rtype != "vc":
        rows_l.append(np.arange(n))
        nodes_l.append(offset + r_subj)
        offset += int(r_subj.max()) + 1
    pos, n_levels, coords = None, 0, None
    if rep is not None and rtype in ("ar(1)", "un"):
        if rep.effect:
            pos = _codes(df, rep.effect)
        else:                                               # position within the subject, in data order
            pos = df.assign(_s=r_subj).groupby("_s").cumcount().to_numpy()
        n_levels = int(pos.max()) + 1
    if rep is not None and rep.coords:
        coords = df[rep.coords].to_numpy(dtype=float)
    rside = RSide(rtype, r_subj, rep.subject_name if rep is not None else "", pos, coords,
                  rep.local if rep is not None else False, n_levels)
    if rows_l:
        rr, nn = np.concatenate(rows_l), np.concatenate(nodes_l)
        A = coo_matrix((np.ones(len(rr)), (rr, n + nn)), shape=(n + offset, n + offset))
        _, label = connected_components(A, directed=False)
        block = np.unique(label[:n], return_inverse=True)[1]
    else:
        block = np.arange(n)
    sizes = np.bincount(block)
    K = sum(len(g.params) for g in gsides) + len(rside.params)
    need = float(np.sum(sizes.astype(float) ** 2)) * 8 * (K + 4)
    if need > memsize:
        raise StatgridError(f"V's blocks need {need / 2**20:.0f} MiB in memory (largest block {int(sizes.max())} "
                            f"rows, {K} covariance parameters), above memsize; give the RANDOM/REPEATED statements "
                            "a SUBJECT= that splits the data into smaller blocks, or raise memsize.")
    return block, gsides, rside, contain
