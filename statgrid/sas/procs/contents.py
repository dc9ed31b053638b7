"""PROC CONTENTS and the CONTENTS statement of PROC DATASETS (SAS 9.4 Base Procedures, CONTENTS /
DATASETS: CONTENTS Statement), in SAS's listing layout:

                            The CONTENTS Procedure

    Data Set Name        WORK.CLASS                       Observations          3
    Member Type          DATA                             Variables             2
    ...
                  Alphabetic List of Variables and Attributes

    #    Variable    Type    Len    Format    Label

    2    age         Num       8
    1    name        Char      8

The Format, Informat and Label columns appear when a variable has one. VARNUM lists the variables in
creation order instead ("Variables in Creation Order"), POSITION adds that list after the alphabetic one,
SHORT prints only the names. DATA=lib._ALL_ describes every member after the library's directory; NODS
prints the directory only. OUT= writes one observation per variable (SAS's OUT= columns: LIBNAME MEMNAME
MEMLABEL TYPEMEM NAME TYPE LENGTH VARNUM LABEL FORMAT FORMATL FORMATD INFORMAT INFORML INFORMD NOBS
ENGINE CRDATE MODATE DELOBS COMPRESS SORTED). Engine is PARQUET: a statgrid data set is a Parquet file.
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from statgrid.sas.dataset import LABEL_KEY, ColumnInfo, column_info, dataset_path, write_dataset

from statgrid.sas.parse.dsname import DatasetSpec
from statgrid.sas.errors import SasError
from statgrid.sas.procs.common import DATASET, FLAG, ProcOptions, input_dataset, statement_error
from statgrid.sas.procs.step import begin

OPTIONS = {"DATA": DATASET, "OUT": DATASET, "OUT2": DATASET, "SHORT": FLAG, "VARNUM": FLAG, "POSITION": FLAG,
           "NODS": FLAG, "NOPRINT": FLAG, "DIRECTORY": FLAG, "DETAILS": FLAG, "NODETAILS": FLAG,
           "MEMTYPE": "value", "ORDER": "value", "FMTLEN": FLAG, "CENTILES": FLAG}
ALIASES = {"MT": "MEMTYPE", "MTYPE": "MEMTYPE", "DIR": "DIRECTORY"}
GAP = " " * 4
SAS_EPOCH_DT = datetime(1960, 1, 1)


def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, OPTIONS, "CONTENTS", ALIASES)
    for stmt in rest:
        if stmt.keyword not in ("TITLE", "FOOTNOTE"):
            raise statement_error(stmt, "CONTENTS", ())
    describe(program, opts, "CONTENTS", first)


def describe(program: Any, opts: ProcOptions, proc: str, first, default_lib: str | None = None) -> None:
    """The CONTENTS output for opts' DATA= (one data set or lib._ALL_), and its OUT=."""
    spec = opts.get("DATA")
    if spec is None and default_lib:
        spec = DatasetSpec(default_lib, "_ALL_")
    if spec is None:
        spec = input_dataset(program, opts, "DATA", first)
    out_rows: list[dict] = []
    members = [spec]
    listing: list[str] = []
    if spec.member == "_ALL_":
        lib = _library(program, spec)
        names = lib.members()
        listing += directory_lines(program, spec.libref, lib)
        members = [DatasetSpec(spec.libref, m.upper()) for m in names]
        if opts.get("NODS"):
            members_to_print = []
        else:
            members_to_print = members
    else:
        members_to_print = members
    for m in members:
        cols = column_info(program, m)
        info = _member_info(program, m)
        out_rows += _out_rows(m, cols, info)
        if m in members_to_print and not opts.get("NOPRINT"):
            if listing:
                listing.append("")
            listing += member_lines(program, m, cols, info, opts, proc)
    if listing and not opts.get("NOPRINT"):
        program.log.listing("\n".join(listing))
    out = opts.get("OUT")
    if out is not None:
        _write_out(program, out, out_rows)


def _library(program: Any, spec: DatasetSpec):
    try:
        return program.session.libraries.get(spec.libref.lower())
    except Exception:  # noqa: BLE001
        raise SasError(f"Libref {spec.libref} is not assigned", spec.line, spec.col, spec.libref,
                       "a library assigned with LIBNAME") from None


def _member_info(program: Any, spec: DatasetSpec) -> dict:
    import pyarrow.parquet as pq

    ref = dataset_path(program, spec)
    if not ref.exists():
        raise SasError(f"File {spec.libref}.{spec.member}.DATA does not exist", spec.line, spec.col, spec.name,
                       "an existing data set")
    meta = pq.read_metadata(ref.path)
    kv = meta.metadata or {}
    st = ref.path.stat()
    codecs = sorted({meta.row_group(i).column(j).compression for i in range(meta.num_row_groups)
                     for j in range(meta.num_columns)}) if meta.num_row_groups else []
    from statgrid.sas.procs.common import SORTED_KEY
    return {"nobs": meta.num_rows, "label": (kv.get(LABEL_KEY.encode()) or b"").decode(),
            "sortedby": (kv.get(SORTED_KEY.encode()) or b"").decode(),
            "modified": datetime.fromtimestamp(st.st_mtime), "path": str(ref.path), "bytes": st.st_size,
            "row_groups": meta.num_row_groups,
            # SAS's words for COMPRESS= (config/dataset_io.py writes NO as uncompressed, CHAR as snappy, BINARY
            # as zstd); a codec statgrid does not write keeps its Parquet name
            "compress": ",".join(dict.fromkeys(CODEC_WORDS.get(c.upper(), c) for c in codecs)) or "NO"}


CODEC_WORDS = {"UNCOMPRESSED": "NO", "SNAPPY": "CHAR", "ZSTD": "BINARY"}


def _when(t: datetime) -> str:
    return t.strftime("%m/%d/%Y %H:%M:%S")


def member_lines(program: Any, spec: DatasetSpec, cols: list[ColumnInfo], info: dict, opts: ProcOptions,
                 proc: str) -> list[str]:
    title = f"The {proc} Procedure"
    lines = [title, ""]
    if opts.get("SHORT"):
        alpha = sorted(cols, key=lambda c: c.name.upper())
        order = cols if opts.get("VARNUM") else alpha
        head = ("Variables in Creation Order" if opts.get("VARNUM") else "Alphabetic List of Variables") + \
            f" for {spec.name}"
        return lines + [head, ""] + _wrap([c.name for c in order], int(_opt(program, "LINESIZE", 132)))
    obs_len = sum(c.length for c in cols)
    left = [("Data Set Name", spec.name), ("Member Type", "DATA"), ("Engine", "PARQUET"),
            ("Created", _when(info["modified"])), ("Last Modified", _when(info["modified"])),
            ("Protection", ""), ("Data Set Type", ""), ("Label", info["label"])]
    right = [("Observations", str(info["nobs"])), ("Variables", str(len(cols))), ("Indexes", "0"),
             ("Observation Length", str(obs_len)), ("Deleted Observations", "0"),
             ("Compressed", info["compress"].upper()), ("Sorted", "YES" if info["sortedby"] else "NO")]
    for i, (k, v) in enumerate(left):
        row = f"{k:<21}{v:<33}"
        if i < len(right):
            row += f"{right[i][0]:<22}{right[i][1]}"
        lines.append(row.rstrip())
    lines += ["Data Representation  NATIVE", "Encoding             utf-8  Unicode (UTF-8)", "", "",
              "Engine/Host Dependent Information", "",
              f"{'Number of Row Groups':<26}{info['row_groups']}",
              f"{'File Size (bytes)':<26}{info['bytes']}",
              f"{'File Name':<26}{info['path']}", "", ""]
    numbered = [(i + 1, c) for i, c in enumerate(cols)]
    tail: list[str] = []
    if info["sortedby"]:
        by, _, flag = info["sortedby"].partition(" NODUP")
        tail = ["", "", "Sort Information", "", f"{'Sortedby':<15}{by}", f"{'Validated':<15}YES",
                f"{'Character Set':<15}ASCII"]
        if flag:
            tail.append(f"{'Sort Option':<15}NODUP{flag}")
    if opts.get("VARNUM") or str(opts.get("ORDER", "")).upper() == "VARNUM":
        lines += variable_table("Variables in Creation Order", numbered)
    else:
        lines += variable_table("Alphabetic List of Variables and Attributes",
                                sorted(numbered, key=lambda p: p[1].name.upper()))
        if opts.get("POSITION"):
            lines += ["", ""] + variable_table("Variables in Creation Order", numbered)
    return lines + tail


def variable_table(title: str, numbered: list[tuple[int, ColumnInfo]]) -> list[str]:
    """`#  Variable  Type  Len  [Format]  [Informat]  [Label]`, numbers and lengths right-aligned."""
    heads = ["#", "Variable", "Type", "Len"]
    rows = [[str(n), c.name, "Num" if c.type == "num" else "Char", str(c.length)] for n, c in numbered]
    for name, attr in (("Format", "format"), ("Informat", "informat"), ("Label", "label")):
        if any(getattr(c, attr) for _, c in numbered):
            heads.append(name)
            for r, (_, c) in zip(rows, numbered):
                r.append(getattr(c, attr) or "")
    widths = [max(len(x) for x in [h] + [r[i] for r in rows]) for i, h in enumerate(heads)]
    right = {0, 3}

    def line(cells):
        return GAP.join(x.rjust(w) if i in right else x.ljust(w) for i, (x, w) in enumerate(zip(cells, widths)))
    table = [line(heads).rstrip(), ""] + [line(r).rstrip() for r in rows]
    width = max(len(x) for x in table)
    return [title.center(max(width, len(title))).rstrip(), ""] + table


def directory_lines(program: Any, libref: str, lib) -> list[str]:
    """The library's directory (CONTENTS DATA=lib._ALL_, DATASETS without NOLIST)."""
    lines = ["Directory", "", f"{'Libref':<19}{libref.upper()}", f"{'Engine':<19}PARQUET",
             f"{'Physical Name':<19}{lib.path}", f"{'Filename':<19}{lib.path}", ""]
    members = lib.members()
    rows = []
    for i, m in enumerate(members, 1):
        p = lib.member_path(m)
        st = p.stat()
        rows.append([str(i), m.upper(), "DATA", str(st.st_size), _when(datetime.fromtimestamp(st.st_mtime))])
    heads = [("", "#"), ("", "Name"), ("Member", "Type"), ("", "File Size"), ("", "Last Modified")]
    widths = [max([len(a), len(b)] + [len(r[i]) for r in rows]) for i, (a, b) in enumerate(heads)]
    right = {0, 3}

    def line(cells):
        return "  ".join(x.rjust(w) if i in right else x.ljust(w) for i, (x, w) in enumerate(zip(cells, widths)))
    if not rows:
        return lines + ["(no members)"]
    return lines + [line([a for a, _ in heads]).rstrip(), line([b for _, b in heads]).rstrip(), ""] + \
        [line(r).rstrip() for r in rows]


def _wrap(words: list[str], width: int) -> list[str]:
    out, cur = [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            out.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        out.append(cur)
    return out


_FMT_RE = re.compile(r"^(\$?[A-Za-z_]*?)(\d*)\.(\d*)$")


def _split_format(text: str) -> tuple[str, float, float]:
    """'COMMA10.2' → ('COMMA', 10, 2); '' → ('', 0, 0) (SAS's FORMAT FORMATL FORMATD)."""
    m = _FMT_RE.match(text or "")
    if not m:
        return (text or "", 0.0, 0.0)
    return (m.group(1).upper(), float(m.group(2) or 0), float(m.group(3) or 0))


def _out_rows(spec: DatasetSpec, cols: list[ColumnInfo], info: dict) -> list[dict]:
    stamp = (info["modified"] - SAS_EPOCH_DT).total_seconds()
    rows = []
    for i, c in enumerate(cols, 1):
        f, fl, fd = _split_format(c.format)
        inf, il, idd = _split_format(c.informat)
        rows.append({"LIBNAME": spec.libref, "MEMNAME": spec.member, "MEMLABEL": info["label"], "TYPEMEM": "",
                     "NAME": c.name, "TYPE": 1.0 if c.type == "num" else 2.0, "LENGTH": float(c.length),
                     "VARNUM": float(i), "LABEL": c.label, "FORMAT": f, "FORMATL": fl, "FORMATD": fd,
                     "INFORMAT": inf, "INFORML": il, "INFORMD": idd, "NOBS": float(info["nobs"]),
                     "ENGINE": "PARQUET", "CRDATE": stamp, "MODATE": stamp, "DELOBS": 0.0,
                     "COMPRESS": info["compress"].upper(), "SORTED": 1.0 if info["sortedby"] else 0.0})
    return rows


_OUT_META = {"LIBNAME": {"length": 8, "label": "Library Name"},
             "MEMNAME": {"length": 32, "label": "Library Member Name"},
             "MEMLABEL": {"length": 256, "label": "Data Set Label"},
             "TYPEMEM": {"length": 8, "label": "Special Data Set Type"},
             "NAME": {"length": 32, "label": "Variable Name"}, "TYPE": {"label": "Variable Type"},
             "LENGTH": {"label": "Variable Length"}, "VARNUM": {"label": "Variable Number"},
             "LABEL": {"length": 256, "label": "Variable Label"}, "FORMAT": {"length": 32, "label": "Variable Format"},
             "FORMATL": {"label": "Format Length"}, "FORMATD": {"label": "Number of Format Decimals"},
             "INFORMAT": {"length": 32, "label": "Variable Informat"}, "INFORML": {"label": "Informat Length"},
             "INFORMD": {"label": "Number of Informat Decimals"}, "NOBS": {"label": "Observations in Data Set"},
             "ENGINE": {"length": 8, "label": "Engine Name"},
             "CRDATE": {"format": "DATETIME16.", "label": "Create Date"},
             "MODATE": {"format": "DATETIME16.", "label": "Last Modified Date"},
             "DELOBS": {"label": "Deleted Observations in Data Set"},
             "COMPRESS": {"length": 8, "label": "Compression Routine"},
             "SORTED": {"label": "Sorted and/or Validated"}}


def _write_out(program: Any, out: DatasetSpec, rows: list[dict]) -> None:
    import pyarrow as pa

    names = list(_OUT_META)
    arrays = []
    for n in names:
        vals = [r[n] for r in rows]
        is_char = "length" in _OUT_META[n]
        arrays.append(pa.array(vals, pa.string() if is_char else pa.float64()))
    table = pa.table(dict(zip(names, arrays)))
    write_dataset(program, out, table, {n: {"length": 8, **m} for n, m in _OUT_META.items()})


def _opt(program: Any, name: str, default: Any) -> Any:
    try:
        return program.options.get(name)
    except Exception:  # noqa: BLE001
        return default
