"""The hash-lookup pattern as a join (SAS 9.4 Component Objects: Hash Object; hashobj.py is the Python
engine's object):

    if 0 then set L;                                  (L's variables into the PDV, first)
    if _n_ = 1 then do;
      declare hash h(dataset: 'L2'); h.defineKey('k', …); h.defineData('v', …); h.defineDone();
    end;
    set B;
    if h.find() = 0;          or      rc = h.find(); if rc = 0;

B's rows whose key is in L2, in B's order, with the data variables from the first row of L2 holding that key
(the hash keeps the first of duplicate keys). A missing key finds a missing key (the object compares SAS
values: all missings in a Parquet file are '.'): the join is IS NOT DISTINCT FROM. Numeric keys and data
only (a character key is cut to its PDV length on one side only: refused)."""
from __future__ import annotations

from dataclasses import dataclass, field

from statgrid.libraries import sql_ident
from statgrid.sas.parse import ast as A
from statgrid.sas.parse import dsast as D
from statgrid.sas.datastep.sqlplan.exprsql import Refuse
from statgrid.sas.datastep.sqlplan.rowwise import char_input_sql, check_pdv, check_set, declarative

HASH_OPTIONS = ("DATASET", "ORDERED", "HASHEXP")


@dataclass
class HashPlan:
    l_stmt: object                    # the `if 0 then set L` SET statement
    b_stmt: object                    # SET B
    name: str                         # the hash object's name
    dataset: str                      # its DATASET: text
    keys: list = field(default_factory=list)
    data: list = field(default_factory=list)
    rc: str = ""                      # the variable given FIND's return code, if any


def _str_args(m) -> list[str]:
    out = []
    for tag, e in m.args:
        if tag or not isinstance(e, A.Str):
            raise Refuse(f"a {m.method} argument that is not a constant name")
        out.append(e.value.strip())
    return out


def _is_find(n, name: str) -> bool:
    return isinstance(n, A.Method) and n.obj == name and n.method == "FIND" and not n.args


def _is_zero(n) -> bool:
    return isinstance(n, A.Num) and n.value == 0


def _declare_block(st) -> tuple[str, str, list, list]:
    """The `if _n_ = 1 then do; declare …; define…; end;` block → (name, dataset, keys, data)."""
    c = st.cond
    if not (isinstance(st, D.If) and st.else_ is None and isinstance(c, A.Compare) and c.op == "EQ" and
            isinstance(c.left, A.Var) and c.left.name == "_N_" and isinstance(c.right, A.Num) and c.right.value == 1
            and isinstance(st.then, D.Do) and st.then.kind == "block"):
        raise Refuse("not the hash-lookup pattern (if _n_ = 1 then do; declare …)")
    sts = st.then.body
    if not sts or not isinstance(sts[0], D.Declare) or sts[0].kind != "HASH":
        raise Refuse("not the hash-lookup pattern (DECLARE HASH)")
    dec = sts[0]
    opts = {}
    for tag, e in dec.args:
        if tag not in HASH_OPTIONS or not isinstance(e, (A.Str, A.Num)):
            raise Refuse(f"the hash option {tag or '(none)'}")
        opts[tag] = e.value
    if not isinstance(opts.get("DATASET"), str):
        raise Refuse("a hash object without DATASET:")
    keys, data, done = [], [], False
    for s in sts[1:]:
        if not isinstance(s, D.MethodStmt) or s.call.obj != dec.name or done:
            raise Refuse("a statement other than DEFINEKEY/DEFINEDATA/DEFINEDONE in the hash block")
        m = s.call
        if m.method == "DEFINEKEY":
            keys += _str_args(m)
        elif m.method == "DEFINEDATA":
            data += _str_args(m)
        elif m.method == "DEFINEDONE" and not m.args:
            done = True
        else:
            raise Refuse(f"the hash method {m.method}")
    if not done or not keys:
        raise Refuse("a hash object without keys or DEFINEDONE")
    return dec.name, opts["DATASET"].strip(), keys, data or list(keys)


def plan_hash(step) -> HashPlan:
    body = [s for s in step.body if not declarative(s)]
    if len(body) not in (4, 5) or len(step.plan.readers) != 2:
        raise Refuse("not the hash-lookup pattern")
    s0 = body[0]
    if not (isinstance(s0, D.If) and _is_zero(s0.cond) and isinstance(s0.then, D.SetStmt) and s0.else_ is None):
        raise Refuse("not the hash-lookup pattern (if 0 then set …)")
    check_set(step, s0.then)
    name, dataset, keys, data = _declare_block(body[1])
    check_set(step, body[2])
    rest, rc = body[3:], ""
    if len(rest) == 2:
        a, f = rest
        if not (isinstance(a, D.Assign) and isinstance(a.target, A.Var) and _is_find(a.expr, name)):
            raise Refuse("not the hash-lookup pattern (rc = h.find())")
        rc = a.target.name
        c = f.cond if isinstance(f, D.If) else None
        ok = isinstance(c, A.Compare) and c.op == "EQ" and isinstance(c.left, A.Var) and c.left.name == rc \
            and _is_zero(c.right)
    else:
        f = rest[0]
        c = f.cond if isinstance(f, D.If) else None
        ok = isinstance(c, A.Compare) and c.op == "EQ" and _is_find(c.left, name) and _is_zero(c.right)
    if not ok or f.then is not None:
        raise Refuse("not the hash-lookup pattern (if h.find() = 0;)")
    check_pdv(step)
    pdv = step.pdv
    for n in keys + data:
        var = pdv.get(n)
        if var is None or var.type != "num":
            raise Refuse(f"hash key or data {n} is not a numeric variable of the step")
    return HashPlan(s0.then, body[2], name, dataset, [k.upper() for k in keys], [d.upper() for d in data], rc)


def hash_sql(step, hp: HashPlan, spec, names: list[str], l_sql: str, l_cols: set, b_sql: str, b_info) -> str:
    """The join in B's order, its columns the output's (names: PDV names, upper case, in output order)."""
    pdv = step.pdv
    b_cols = {c.name.upper(): c.name for c in b_info}
    for k in hp.keys:
        if k not in b_cols:
            raise Refuse(f"hash key {k} is not a column of the SET data set")
    for n in hp.keys + hp.data:
        if n not in l_cols:
            raise Refuse(f"hash key or data {n} is not a column of the hash's data set")
    lk = list(dict.fromkeys(hp.keys + hp.data))
    lsel = ", ".join(f"{sql_ident(l_cols[n])} AS {sql_ident('l_' + n)}" for n in lk)
    part = ", ".join(sql_ident(l_cols[k]) for k in hp.keys)
    dedup = (f"SELECT {lsel} FROM (SELECT *, row_number() OVER (PARTITION BY {part} ORDER BY __r) AS __rn "
             f"FROM ({l_sql})) WHERE __rn = 1")
    on = " AND ".join(f"b.{sql_ident(b_cols[k])} IS NOT DISTINCT FROM l.{sql_ident('l_' + k)}" for k in hp.keys)
    sel = []
    for n in names:
        var = pdv.vars[n]
        new = step.rename.get(n) or spec.rename.get(n) or var.name
        if n in hp.data:
            e = f"l.{sql_ident('l_' + n)}"
        elif n == hp.rc:
            e = "CAST('0.0' AS DOUBLE)"
        elif n in b_cols:
            col = f"b.{sql_ident(b_cols[n])}"
            e = col if var.type == "num" else char_input_sql(col, var.length)
        else:
            e = "NULL" if var.type == "num" else "''"
        sel.append(f"CAST({e} AS {'DOUBLE' if var.type == 'num' else 'VARCHAR'}) AS {sql_ident(new)}")
    return (f"SELECT {', '.join(sel)} FROM ({b_sql}) b JOIN ({dedup}) l ON {on} ORDER BY b.__r")
