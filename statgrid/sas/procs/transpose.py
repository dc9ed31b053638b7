"""PROC TRANSPOSE (SAS 9.4 Base Procedures: TRANSPOSE).

    PROC TRANSPOSE <DATA=> <OUT=> <PREFIX=> <SUFFIX=> <NAME=> <LABEL=> <LET>;
      BY vars; VAR vars; ID var; IDLABEL var; WHERE expr;

Each variable of VAR (default: every numeric variable not in BY or ID) becomes one observation per BY
group: the BY values, _NAME_ (the variable's name), _LABEL_ (its label, when any variable transposed has
one), then the group's values as COL1 … COLn — or, with ID, as variables named PREFIX + the ID value
(formatted; characters not valid in a name become _, and a value starting with a digit gets a leading _
unless PREFIX is given) + SUFFIX, labelled by IDLABEL. Several observations with the same ID value in a
BY group are an ERROR unless LET (the last one is kept). When any VAR variable is character the new
variables are character (numbers written as BEST12. would). The input must be sorted by BY (SAS's ERROR)
unless the BY statement says NOTSORTED. A BY group is a run of consecutive observations with equal BY values,
in the input's order (with NOTSORTED the same values seen again later are a new group).
"""
from __future__ import annotations

import re
from typing import Any

from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError
from statgrid.sas.procs.common import (DATASET, FLAG, TEXT, check_by_sorted, fetch_rows, format_cell,
                                       observations_read, open_input, resolve_names, statement_error, var_names,
                                       write_rows)
from statgrid.sas.procs.step import Statements, begin, data_input, each_statement
from statgrid.sas.values import special_missing

OPTIONS = {"DATA": DATASET, "OUT": DATASET, "PREFIX": TEXT, "SUFFIX": TEXT, "NAME": TEXT, "LABEL": TEXT,
           "LET": FLAG, "DELIMITER": TEXT, "DELIM": TEXT}
STATEMENTS = ("BY", "VAR", "ID", "IDLABEL", "WHERE", "FORMAT", "LABEL", "ATTRIB")


def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, OPTIONS, "TRANSPOSE", {"DELIM": "DELIMITER"})
    src, cols = data_input(program, opts, first)
    st, idv, idlabel = Statements(src, cols), None, None
    for stmt, kw, c in each_statement(rest):
        if kw == "ID":
            idv = var_names(c, cols)
        elif kw == "IDLABEL":
            idlabel = var_names(c, cols)[0]
        elif not st.read(kw, c):
            raise statement_error(stmt, "TRANSPOSE", STATEMENTS)
    line, by = first.line, st.by
    byc = resolve_names([n for n, _ in by], cols, src, line)
    idc = resolve_names(idv, cols, src, line) if idv else []
    labc = resolve_names([idlabel], cols, src, line)[0] if idlabel else None
    used = {c.name.upper() for c in byc + idc} | ({labc.name.upper()} if labc else set())
    varc = st.analysis_vars(line, used)
    if byc:
        check_by_sorted(program, src, cols, by)
    from statgrid.sas.dataset import input_sql
    from statgrid.sas.specials_sql import file_specials
    cols2, _ = open_input(program, src)
    names, rows = fetch_rows(program, input_sql(program, src, cols2, row_number="__sas_tr_row",
                                                row_number_type="BIGINT"))
    pos = {n.upper(): i for i, n in enumerate(names)}
    analysed = {v.name.upper() for v in varc}        # a VAR value's special missing letter goes with it (.A → A)
    letters = {c: per for c, per in file_specials(program, src).items() if c in analysed}
    for r in rows if letters else ():
        for c, per in letters.items():
            if r[pos["__SAS_TR_ROW"]] in per and c in pos and r[pos[c]] is None:
                r[pos[c]] = special_missing(per[r[pos["__SAS_TR_ROW"]]])
    observations_read(program, len(rows), src)

    out_spec = opts.get("OUT")
    if out_spec is None:
        from statgrid.sas.parse.dsname import DatasetSpec, next_data_name
        out_spec = DatasetSpec("WORK", next_data_name(program, "WORK"))
    char_out = any(v.type == "char" for v in varc)
    name_col = str(opts.get("NAME") or "_NAME_")
    label_col = str(opts.get("LABEL") or "_LABEL_")
    with_label = any(v.label for v in varc)
    prefix = opts.get("PREFIX")
    suffix = str(opts.get("SUFFIX") or "")

    # BY groups in input order
    groups: list[tuple[tuple, list]] = []
    for r in rows:
        key = tuple(r[pos[b.name.upper()]] for b in byc)
        if not groups or not _same_by(groups[-1][0], key, byc):
            groups.append((key, []))
        groups[-1][1].append(r)

    new_cols: list[str] = []
    new_labels: dict[str, str] = {}
    if idc:
        for key, grp in groups:
            seen: set[str] = set()
            for r in grp:
                n = _id_name(program, [r[pos[c.name.upper()]] for c in idc], idc, prefix, suffix,
                             str(opts.get("DELIMITER") or ""))
                if n.upper() in seen and not opts.get("LET"):
                    shown = " ".join(f"{b.name}={v}" for b, v in zip(byc, key))
                    raise SasError(f"The ID value \"{n}\" occurs twice in the same BY group" +
                                   (f" ({shown})" if shown else ""), line, 0, n, "unique ID values, or the LET option")
                seen.add(n.upper())
                if n.upper() not in {x.upper() for x in new_cols}:
                    new_cols.append(n)
                    if labc is not None:
                        new_labels[n] = format_cell(program, r[pos[labc.name.upper()]], labc.format, labc.type)
    else:
        width = max((len(g) for _, g in groups), default=0)
        new_cols = [f"{prefix or 'COL'}{i}{suffix}" for i in range(1, width + 1)]

    out_cols = [ColumnInfo(b.name, b.type, b.length, b.format, b.informat, b.label) for b in byc]
    out_cols.append(ColumnInfo(name_col, "char", 8, label="NAME OF FORMER VARIABLE"))
    if with_label:
        out_cols.append(ColumnInfo(label_col, "char", 40, label="LABEL OF FORMER VARIABLE"))
    fmt = varc[0].format if len({v.format for v in varc}) == 1 and varc else ""
    length = max((v.length for v in varc if v.type == "char"), default=8) if char_out else 8
    out_cols += [ColumnInfo(n, "char" if char_out else "num", length, "" if char_out else fmt, "",
                            new_labels.get(n, "")) for n in new_cols]
    index = {n.upper(): j for j, n in enumerate(new_cols)}
    out_rows = []
    for key, grp in groups:
        for v in varc:
            vals: list[Any] = [None] * len(new_cols)
            for j, r in enumerate(grp):
                x = r[pos[v.name.upper()]]
                if char_out and v.type == "num":
                    x = None if x is None else format_cell(program, x, "BEST12.", "num")
                if idc:
                    n = _id_name(program, [r[pos[c.name.upper()]] for c in idc], idc, prefix, suffix,
                                 str(opts.get("DELIMITER") or ""))
                    vals[index[n.upper()]] = x
                else:
                    vals[j] = x
            row = list(key) + [v.name] + ([v.label or v.name] if with_label else []) + vals
            out_rows.append(row)
    write_rows(program, out_spec, out_cols, out_rows)


def _same_by(a: tuple, b: tuple, byc) -> bool:
    """Two rows' BY values equal as SAS compares them: a character value without its trailing blanks, a blank
    string the same missing value as NULL."""
    return all((x or "").rstrip() == (y or "").rstrip() if c.type == "char" else x == y
               for x, y, c in zip(a, b, byc))


def _id_name(program, values, idc, prefix, suffix: str, delimiter: str) -> str:
    parts = [format_cell(program, v, c.format, c.type).strip() for v, c in zip(values, idc)]
    text = delimiter.join(parts)
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    if prefix is not None:
        name = str(prefix) + name
    elif name and name[0].isdigit():
        name = "_" + name
    name = (name + suffix)[:32]
    return name or "_"
