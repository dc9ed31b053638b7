"""PROC DATASETS and PROC DELETE (SAS 9.4 Base Procedures, DATASETS / DELETE).

PROC DATASETS LIBRARY=|LIB= NOLIST KILL MEMTYPE= NOWARN DETAILS FORCE; is interactive: the driver hands
its statements one at a time and each runs when the next begins (a statement's sub-statements — MODIFY's
LABEL/FORMAT/INFORMAT/RENAME/ATTRIB, COPY's SELECT/EXCLUDE — are gathered first), until QUIT;.
- the directory of the library is listed unless NOLIST; KILL deletes every member first;
- DELETE names; CHANGE old=new …; EXCHANGE a=b …; SAVE names; (the others are deleted);
- MODIFY name (LABEL='…'); with LABEL var='…', FORMAT vars fmt., INFORMAT vars fmt., RENAME old=new:
  column attributes in the data set's metadata (the values are not touched);
- APPEND BASE= DATA= FORCE: DATA's observations after BASE's (variables by name; FORCE drops those BASE
  has not and accepts type conflicts as missing values, as SAS does);
- CONTENTS DATA= … (as PROC CONTENTS; one-level names are members of the procedure's library);
- COPY OUT= (IN=) MOVE with SELECT / EXCLUDE;
- INDEX CREATE/DELETE: accepted with a NOTE (statgrid reads Parquet through DuckDB's min/max statistics and
  has no indexes).
One-level names in these statements are members of the procedure's library (LIBRARY=, default WORK).
The NOTEs and WARNINGs are SAS's ("Deleting WORK.A (memtype=DATA).", "Changing the name …", "Appending …").
"""
from __future__ import annotations

import json
import os
import shutil
from typing import Any

from statgrid.libraries import atomic_output, parquet_copy_sql, sql_ident
from statgrid.sas.dataset import COLUMNS_KEY, LABEL_KEY, ColumnInfo, column_info, input_sql
from statgrid.sas.parse.dsname import DatasetSpec, parse_dataset
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME
from statgrid.sas.procs.common import (DATASET, FLAG, LIBREF, ProcOptions, cursor, parse_options, proc_statement,
                                       statement_error, write_select)
from statgrid.sas.statement import Statement

OPTIONS = {"LIBRARY": LIBREF, "NOLIST": FLAG, "KILL": FLAG, "MEMTYPE": "value", "NOWARN": FLAG,
           "DETAILS": FLAG, "NODETAILS": FLAG, "FORCE": FLAG, "PW": "value", "ALTER": "value", "GENNUM": "value",
           "NOPRINT": FLAG}
ALIASES = {"LIB": "LIBRARY", "DDNAME": "LIBRARY", "DD": "LIBRARY", "MT": "MEMTYPE", "MTYPE": "MEMTYPE"}
STATEMENTS = ("APPEND", "CHANGE", "CONTENTS", "COPY", "DELETE", "EXCHANGE", "MODIFY", "SAVE", "INDEX",
              "AGE", "REPAIR")
SUB = {"MODIFY": ("LABEL", "FORMAT", "INFORMAT", "RENAME", "ATTRIB", "INDEX", "IC"),
       "COPY": ("SELECT", "EXCLUDE")}
CATALOG_FILE = "formats.fmtcat.json"


class Datasets:
    def __init__(self, program: Any, lib: str, opts: ProcOptions):
        self.program, self.lib, self.opts = program, lib, opts
        self.log = program.log

    # -- names ---------------------------------------------------------------------------------------
    def member(self, c, what: str = "a member name") -> DatasetSpec:
        """`name` (in the procedure's library) or `lib.name`."""
        two = c.peek(1).is_(".") and c.peek().touches(c.peek(1))
        spec = parse_dataset(c, self.program)
        if not two:
            spec.libref = self.lib
        return spec

    def ref(self, name: str):
        try:
            return self.program.session.ref(f"{self.lib}.{name}")
        except Exception as exc:  # noqa: BLE001 - a member name that is not valid
            raise SasError(str(exc), text=name) from None

    def _readonly(self) -> None:
        lib = self.program.session.libraries.get(self.lib.lower())
        if lib.readonly:
            raise SasError(f"Write access to member {self.lib} is denied: the library is read-only",
                           text=self.lib)

    def _dry(self) -> bool:
        return bool(getattr(self.program, "syntax_check", False))

    # -- statements -------------------------------------------------------------------------------
    def delete_members(self, names: list[str], stmt_kw: str = "DELETE") -> None:
        self._readonly()
        if self._dry():
            return
        for n in names:
            if n.upper() == "FORMATS" and self._catalog().exists():
                self._delete_catalog()
                continue
            ref = self.ref(n)
            if not ref.exists():
                if not self.opts.get("NOWARN"):
                    self.log.warning(f"The file {self.lib}.{n.upper()} (memtype=DATA) was not found, but appears "
                                     f"on a {stmt_kw} statement.")
                continue
            if not self._dry():
                ref.path.unlink()
            self.log.note(f"Deleting {self.lib}.{n.upper()} (memtype=DATA).")

    def _catalog(self):
        lib = self.program.session.libraries.get(self.lib.lower())
        from pathlib import Path
        return Path(lib.path) / CATALOG_FILE

    def _delete_catalog(self) -> None:
        if not self._dry():
            self._catalog().unlink(missing_ok=True)
            fmts = getattr(self.program, "formats", None)
            mem = getattr(fmts, "_mem", None)
            if isinstance(mem, dict):
                mem.pop((self.lib, "FORMATS"), None)
        self.log.note(f"Deleting {self.lib}.FORMATS (memtype=CATALOG).")

    def kill(self) -> None:
        if self._dry():
            return
        lib = self.program.session.libraries.get(self.lib.lower())
        self.delete_members([m for m in lib.members()])
        if self._catalog().exists():
            self._delete_catalog()

    def change(self, pairs: list[tuple[str, str]], exchange: bool = False) -> None:
        self._readonly()
        if self._dry():
            return
        for old, new in pairs:
            a, b = self.ref(old), self.ref(new)
            if not a.exists():
                raise SasError(f"The file {self.lib}.{old.upper()} (memtype=DATA) was not found, but appears on "
                               f"a {'EXCHANGE' if exchange else 'CHANGE'} statement", text=old)
            if exchange:
                if not b.exists():
                    raise SasError(f"The file {self.lib}.{new.upper()} (memtype=DATA) was not found, but appears "
                                   "on an EXCHANGE statement", text=new)
                if not self._dry():
                    tmp = a.path.with_name(f".{a.path.name}.exchange")
                    os.replace(a.path, tmp)
                    os.replace(b.path, a.path)
                    os.replace(tmp, b.path)
                self.log.note(f"Exchanging the names {self.lib}.{old.upper()} and {self.lib}.{new.upper()} "
                              "(memtype=DATA).")
                continue
            if b.exists():
                raise SasError(f"A file named {self.lib}.{new.upper()}.DATA already exists", text=new,
                               expected="a name not in use")
            if not self._dry():
                os.replace(a.path, b.path)
            self.log.note(f"Changing the name {self.lib}.{old.upper()} to {self.lib}.{new.upper()} (memtype=DATA).")

    def age(self, names: list[str]) -> None:
        """AGE current related1 related2 …: the last related data set is deleted, each other one takes the next
        name, and the current one the first related name (SAS DATASETS, AGE statement)."""
        self._readonly()
        if self._dry() or len(names) < 2:
            return
        if not self.ref(names[0]).exists():
            raise SasError(f"The file {self.lib}.{names[0].upper()} (memtype=DATA) was not found, but appears on an "
                           "AGE statement", text=names[0])
        if self.ref(names[-1]).exists():
            self.delete_members([names[-1].lower()])
        for old, new in reversed(list(zip(names, names[1:]))):
            a = self.ref(old)
            if a.exists():
                os.replace(a.path, self.ref(new).path)
                self.log.note(f"Ageing the name {self.lib}.{old.upper()} to {self.lib}.{new.upper()} (memtype=DATA).")

    def save(self, names: list[str]) -> None:
        if self._dry():
            return
        keep = {n.lower() for n in names}
        lib = self.program.session.libraries.get(self.lib.lower())
        for n in keep:
            if not self.ref(n).exists():
                self.log.warning(f"The file {self.lib}.{n.upper()} (memtype=DATA) was not found, but appears on a "
                                 "SAVE statement.")
        for n in keep & set(lib.members()):
            self.log.note(f"Saving {self.lib}.{n.upper()} (memtype=DATA).")
        self.delete_members([m for m in lib.members() if m not in keep])

    def modify(self, spec: DatasetSpec, ds_label: str | None, subs: list[Statement]) -> None:
        """MODIFY's attribute changes, written into the data set's metadata in one atomic rewrite."""
        self._readonly()
        ref = self.ref(spec.member)
        if not ref.exists():
            raise SasError(f"File {self.lib}.{spec.member}.DATA does not exist", spec.line, spec.col, spec.name,
                           "an existing data set")
        import pyarrow.parquet as pq

        schema = pq.read_schema(ref.path)
        kv = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
        meta = json.loads(kv.get(COLUMNS_KEY, "{}") or "{}")
        names = {n.upper(): n for n in schema.names}
        renames: dict[str, str] = {}

        def col(name: str, c) -> str:
            n = names.get(name.upper())
            if n is None:
                raise c.error(f"Variable {name} not found in {self.lib}.{spec.member}", "a variable of the data set")
            return n
        from statgrid.sas.procs.print import format_statement, label_statement
        for stmt in subs:
            c = cursor(stmt)
            kw = c.next().upper
            cols = [ColumnInfo(n, "num") for n in schema.names]      # names only: what FORMAT lists need
            if kw == "LABEL":
                for k, v in label_statement(c).items():
                    meta.setdefault(col(k, c), {})["label"] = v
            elif kw in ("FORMAT", "INFORMAT"):
                key = kw.lower()
                for k, v in format_statement(c, cols).items():
                    m = meta.setdefault(col(k, c), {})
                    if v:
                        m[key] = v
                    else:
                        m.pop(key, None)
            elif kw == "RENAME":
                while not c.at_end():
                    old = col(c.expect_name("a variable name"), c)
                    c.expect("=", expected="=")
                    new = c.expect_name("a new variable name")
                    if new.upper() in names and new.upper() != old.upper():
                        raise c.error(f"Variable {new} already exists on file {self.lib}.{spec.member}", "a new name")
                    renames[old] = new
                    names.pop(old.upper())
                    names[new.upper()] = old
            elif kw in ("INDEX", "IC"):
                self.log.note(f"{kw} statements are accepted and ignored: statgrid data sets have no indexes.")
            elif kw == "ATTRIB":
                # ATTRIB vars LABEL='…' FORMAT=fmt. INFORMAT=fmt. … (LENGTH= cannot change here, as in SAS)
                while not c.at_end():
                    targets = []
                    while c.peek().kind == NAME and not c.peek(1).is_("="):
                        targets.append(col(c.next().text, c))
                    if not targets:
                        raise c.error("Syntax error in the ATTRIB statement", "a variable name")
                    while c.peek().kind == NAME and c.peek(1).is_("="):
                        opt = c.next().upper
                        c.next()
                        if opt == "LABEL":
                            v = c.expect_kind("STR", "a quoted label").value
                        elif opt in ("FORMAT", "INFORMAT"):
                            v = c.format_name()
                        else:
                            raise c.error(f"{opt}= cannot be changed by MODIFY", "LABEL=, FORMAT= or INFORMAT=")
                        for t in targets:
                            meta.setdefault(t, {})[opt.lower()] = v
        # the stored names after RENAME, the metadata under them
        new_meta = {renames.get(n, n): meta.get(n, {}) for n in schema.names if meta.get(n)}
        kv[COLUMNS_KEY] = json.dumps(new_meta)
        from statgrid.sas.dataset import SPECIALS_KEY, read_specials
        letters = read_specials(ref.path)                   # special missing letters: kept, under the new names
        if letters:
            by_upper = {n.upper(): n for n in schema.names}
            kv[SPECIALS_KEY] = json.dumps({renames.get(by_upper.get(c, c), by_upper.get(c, c)):
                                           {str(r): v for r, v in rows.items()} for c, rows in letters.items()})
        if ds_label is not None:
            kv[LABEL_KEY] = ds_label
        if self._dry():
            return
        for old, new in renames.items():
            self.log.note(f"Renaming variable {old} to {new}.")
        select = ", ".join(f"{sql_ident(n)} AS {sql_ident(renames.get(n, n))}" for n in schema.names)
        session = self.program.session
        group = session.options.dataset_io                    # MODIFY rewrites with the session's BUFSIZE/COMPRESS
        with atomic_output(ref) as tmp:
            session.execute(parquet_copy_sql(f"SELECT {select} FROM {ref.scan_sql()}", tmp, group, kv)).fetchall()

    def append(self, opts: ProcOptions) -> None:
        base, data = opts.get("BASE"), opts.get("DATA")
        if base is None:
            raise SasError("APPEND needs BASE=", expected="BASE=data set")
        if data is None:
            last = (self.program.last or "").upper()
            if not last:
                raise SasError("APPEND needs DATA= (there is no _LAST_ data set)", expected="DATA=data set")
            lib, _, mem = last.rpartition(".")
            data = DatasetSpec(lib or "WORK", mem)
        force = bool(opts.get("FORCE"))
        dcols = column_info(self.program, data)
        dsql = input_sql(self.program, data, dcols)
        self.log.note(f"Appending {data.name} to {base.name}.")
        bref = self.program.session.ref(f"{base.libref}.{base.member}")
        if not bref.exists():
            self.log.note("BASE data set does not exist. DATA file is being copied to BASE file.")
            n = int(self.program.session.execute(f"SELECT count(*) FROM ({dsql})").fetchall()[0][0])
            self.log.note(f"There were {n} observations read from the data set {data.name}.")
            write_select(self.program, base, dsql, dcols)
            return
        bcols = column_info(self.program, DatasetSpec(base.libref, base.member))
        bsql = input_sql(self.program, DatasetSpec(base.libref, base.member), bcols)
        by = {c.name.upper(): c for c in dcols}
        problems = False
        for c in dcols:
            if c.name.upper() not in {b.name.upper() for b in bcols}:
                self.log.warning(f"Variable {c.name} was not found on BASE file. The variable will not be added "
                                 "to the BASE file.")
                problems = True
        select = []
        for b in bcols:
            d = by.get(b.name.upper())
            if d is None:
                self.log.warning(f"Variable {b.name} was not found on DATA file.")
                select.append(f"NULL::{'VARCHAR' if b.type == 'char' else 'DOUBLE'} AS {sql_ident(b.name)}")
            elif d.type != b.type:
                self.log.warning(f"Variable {b.name} has different type on BASE and DATA files.")
                problems = True
                select.append(f"NULL::{'VARCHAR' if b.type == 'char' else 'DOUBLE'} AS {sql_ident(b.name)}")
            else:
                if b.type == "char" and d.length > b.length:
                    self.log.warning(f"Variable {b.name} has different lengths on BASE and DATA files "
                                     f"(BASE {b.length} DATA {d.length}).")
                    problems = True
                    select.append(f"substr({sql_ident(d.name)}, 1, {b.length}) AS {sql_ident(b.name)}")
                else:
                    select.append(f"{sql_ident(d.name)} AS {sql_ident(b.name)}")
        if problems and not force:
            raise SasError("No appending done because of anomalies listed above. Use FORCE option to append "
                           "these files", text=data.name, expected="FORCE")
        n = int(self.program.session.execute(f"SELECT count(*) FROM ({dsql})").fetchall()[0][0])
        self.log.note(f"There were {n} observations read from the data set {data.name}.")
        self.log.note(f"{n} observations added.")
        whole = f"SELECT * FROM ({bsql}) UNION ALL SELECT {', '.join(select)} FROM ({dsql})"
        write_select(self.program, DatasetSpec(base.libref, base.member, line=base.line, col=base.col), whole, bcols)

    def copy(self, opts: ProcOptions, select: list[str] | None, exclude: list[str] | None) -> None:
        out = opts.get("OUT")
        if out is None:
            raise SasError("COPY needs OUT=", expected="OUT=libref")
        src = opts.get("IN") or self.lib
        try:
            slib = self.program.session.libraries.get(src.lower())
            dlib = self.program.session.libraries.get(out.lower())
        except Exception as exc:  # noqa: BLE001
            raise SasError(str(exc), text=out) from None
        if dlib.readonly:
            raise SasError(f"Library {out} is read-only", text=out)
        if slib.path.resolve() == dlib.path.resolve():
            raise SasError(f"The IN= library {src.upper()} and the OUT= library {out.upper()} are the same; a member "
                           "cannot be copied onto itself", text=out, expected="OUT= another library")
        members = slib.members()
        if select is not None:
            wanted = [s.lower() for s in select]
            for w in wanted:
                if w not in members:
                    self.log.warning(f"The file {src}.{w.upper()} (memtype=DATA) was not found, but appears on a "
                                     "SELECT statement.")
            members = [m for m in members if m in wanted]
        if exclude is not None:
            members = [m for m in members if m not in {e.lower() for e in exclude}]
        move = bool(opts.get("MOVE"))
        if self._dry():
            return
        for m in members:
            sp, dp = slib.member_path(m), dlib.member_path(m)
            self.log.note(f"{'Moving' if move else 'Copying'} {src.upper()}.{m.upper()} to {out.upper()}."
                          f"{m.upper()} (memtype=DATA).")
            if self._dry():
                continue
            import pyarrow.parquet as pq
            meta = pq.read_metadata(sp)
            with atomic_output(dp) as tmp:
                shutil.copyfile(sp, tmp)
            self.log.note(f"There were {meta.num_rows} observations read from the data set {src.upper()}.{m.upper()}.")
            self.log.note(f"The data set {out.upper()}.{m.upper()} has {meta.num_rows} observations and "
                          f"{meta.num_columns} variables.")
            if move:
                sp.unlink()


COPY_OPTIONS = {"OUT": LIBREF, "IN": LIBREF, "MOVE": FLAG, "MEMTYPE": "value", "CONSTRAINT": "value",
                "INDEX": "value", "DATECOPY": FLAG, "FORCE": FLAG, "CLONE": FLAG, "NOCLONE": FLAG}
APPEND_OPTIONS = {"BASE": DATASET, "DATA": DATASET, "FORCE": FLAG, "NOWARN": FLAG, "GETSORT": FLAG,
                  "APPENDVER": "value"}


def _names(c) -> list[str]:
    out = []
    while not c.at_end() and not c.at("/"):
        out.append(c.expect_name("a member name"))
    if c.accept("/"):
        while not c.at_end():
            c.next()                                 # MEMTYPE=, GENNUM=: accepted
    return out


def _pairs(c) -> list[tuple[str, str]]:
    out = []
    while not c.at_end() and not c.at("/"):
        a = c.expect_name("a member name")
        c.expect("=", expected="=")
        out.append((a, c.expect_name("a new member name")))
    if c.accept("/"):
        while not c.at_end():
            c.next()
    return out


def run(statements, program: Any) -> None:
    it = iter(statements)
    first = next(it)
    opts = parse_options(proc_statement(first), OPTIONS, program, "PROC DATASETS", ALIASES)
    lib = (opts.get("LIBRARY") or _default_lib(program)).upper()
    try:
        library = program.session.libraries.get(lib.lower())
    except Exception:  # noqa: BLE001
        t = first.tokens[0]
        line, col = opts.where.get("LIBRARY", (t.line, t.col))
        raise SasError(f"Libref {lib} is not assigned", line, col, lib, "a library assigned with LIBNAME") from None
    ds = Datasets(program, lib, opts)
    if not opts.get("NOLIST") and not opts.get("NOPRINT"):
        from statgrid.sas.procs.contents import directory_lines
        program.log.listing("\n".join(directory_lines(program, lib, library)))
    if opts.get("KILL"):
        ds.kill()
    group: list[Statement] = []
    head: Statement | None = None

    def flush() -> None:
        nonlocal head, group
        if head is not None:
            _run_group(ds, head, group, program)
        head, group = None, []
    for stmt in it:
        kw = stmt.keyword
        if head is not None and kw in SUB.get(head.keyword, ()):
            group.append(stmt)
            continue
        flush()
        if kw in ("TITLE", "FOOTNOTE"):
            continue
        if kw not in STATEMENTS:
            raise statement_error(stmt, "DATASETS", STATEMENTS)
        if kw in SUB:
            head = stmt                          # runs when its sub-statements are all in
        else:
            _run_group(ds, stmt, [], program)
    flush()


def _run_group(ds: Datasets, stmt: Statement, subs: list[Statement], program: Any) -> None:
    c = cursor(stmt)
    kw = c.next().upper
    if kw == "DELETE":
        ds.delete_members(_names(c))
    elif kw == "SAVE":
        ds.save(_names(c))
    elif kw in ("CHANGE", "EXCHANGE"):
        ds.change(_pairs(c), exchange=kw == "EXCHANGE")
    elif kw == "MODIFY":
        spec = ds.member(c)
        label = spec.label
        if c.accept("/"):
            while not c.at_end():
                c.next()
        ds.modify(spec, label, subs)
    elif kw == "APPEND":
        o = parse_options(c, APPEND_OPTIONS, program, "APPEND", {"OUT": "BASE", "NEW": "DATA"})
        for k in ("BASE", "DATA"):
            spec = o.get(k)
            if spec is not None and not _two_level(stmt, k):
                spec.libref = ds.lib
        ds.append(o)
    elif kw == "CONTENTS":
        from statgrid.sas.procs.contents import OPTIONS as COPTS, ALIASES as CALIAS, describe
        o = parse_options(c, COPTS, program, "CONTENTS", CALIAS)
        spec = o.get("DATA")
        if spec is not None and not _two_level(stmt, "DATA"):
            spec.libref = ds.lib
        describe(program, o, "DATASETS", stmt, default_lib=ds.lib)
    elif kw == "COPY":
        o = parse_options(c, COPY_OPTIONS, program, "COPY", {"INLIB": "IN", "INDD": "IN", "OUTLIB": "OUT",
                                                             "OUTDD": "OUT", "MT": "MEMTYPE", "MTYPE": "MEMTYPE"})
        ds.copy(o, *_select_exclude(subs))
    elif kw == "INDEX":
        ds.log.note(f"{stmt.text.strip().rstrip(';')}: accepted and ignored; statgrid data sets have no indexes "
                    "(DuckDB skips row groups by their min/max statistics).")
    elif kw == "AGE":
        ds.age(_names(c))
    elif kw == "REPAIR":
        ds.log.note(f"The {kw} statement is accepted and does nothing here.")


def _two_level(stmt: Statement, key: str) -> bool:
    """Whether `KEY=` is followed by a two-level name (lib.member) in this statement."""
    toks = stmt.tokens
    for i, t in enumerate(toks[:-3]):
        if t.is_(key) and toks[i + 1].is_("="):
            return toks[i + 3].is_(".") and toks[i + 2].touches(toks[i + 3])
    return False


def _default_lib(program: Any) -> str:
    try:
        user = program.options.get("USER")
    except Exception:  # noqa: BLE001
        user = None
    return str(user) if user else "WORK"


# -- PROC DELETE ---------------------------------------------------------------------------------------------
DELETE_OPTIONS = {"DATA": DATASET, "LIBRARY": LIBREF, "MEMTYPE": "value", "GENNUM": "value"}


def run_delete(statements: list, program: Any) -> None:
    """PROC DELETE DATA=a lib.b …; (SAS 9.4: several names after DATA=)."""
    first, *rest = list(statements)
    c = proc_statement(first)
    specs: list[DatasetSpec] = []
    lib = None
    while not c.at_end():
        t = c.peek()
        if t.kind != NAME:
            raise c.error("Syntax error in the PROC DELETE statement", "DATA=")
        up = t.upper
        if up in ("DATA", "LIBRARY", "LIB", "MEMTYPE", "MT", "GENNUM") and c.peek(1).is_("="):
            c.next(), c.next()
            if up == "DATA":
                specs.append(parse_dataset(c, program))
                while c.peek().kind == NAME and not c.peek(1).is_("="):
                    specs.append(parse_dataset(c, program))
            elif up in ("LIBRARY", "LIB"):
                lib = c.expect_name("a libref").upper()
            else:
                c.next()
        else:
            raise c.error(f"The option or parameter {t.text} is not recognized in the PROC DELETE statement",
                          "one of the following: ;, DATA, LIBRARY, MEMTYPE")
    for stmt in rest:
        if stmt.keyword not in ("TITLE", "FOOTNOTE"):
            raise statement_error(stmt, "DELETE", ())
    if not specs:
        last = (program.last or "").upper()
        if not last:
            t = first.tokens[0]
            raise SasError("There is not a default input data set (_LAST_ is _NULL_)", t.line, t.col, "", "DATA=")
        l2, _, mem = last.rpartition(".")
        specs = [DatasetSpec(l2 or "WORK", mem)]
    for spec in specs:
        if lib and spec.libref == "WORK":
            spec.libref = lib
        try:
            ref = program.session.ref(f"{spec.libref}.{spec.member}")
            if ref.library.readonly:
                raise SasError(f"Write access to member {spec.name}.DATA is denied", spec.line, spec.col, spec.name)
        except SasError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise SasError(str(exc), spec.line, spec.col, spec.name) from None
        if getattr(program, "syntax_check", False):
            continue                       # syntax-check mode: nothing is deleted
        if not ref.exists():
            program.log.warning(f"File {spec.name}.DATA does not exist.")
            continue
        ref.path.unlink()
        program.log.note(f"Deleting {spec.name} (memtype=DATA).")


__all__ = ["run", "run_delete", "Datasets"]


def run_copy(statements, program: Any) -> None:
    """PROC COPY IN= OUT= <MOVE> <MEMTYPE=>; SELECT names; EXCLUDE names; — the COPY statement of
    DATASETS as a procedure of its own (Base SAS Procedures: COPY)."""
    first, *rest = list(statements)
    o = parse_options(proc_statement(first), COPY_OPTIONS, program, "PROC COPY",
                      {"INLIB": "IN", "INDD": "IN", "OUTLIB": "OUT", "OUTDD": "OUT", "MT": "MEMTYPE",
                       "MTYPE": "MEMTYPE"})
    subs = [stmt for stmt in rest if stmt.keyword not in ("TITLE", "FOOTNOTE")]
    for stmt in subs:
        if stmt.keyword not in ("SELECT", "EXCLUDE"):
            raise statement_error(stmt, "COPY", ("SELECT", "EXCLUDE"))
    lib = (o.get("IN") or _default_lib(program)).upper()
    Datasets(program, lib, o).copy(o, *_select_exclude(subs))


def _select_exclude(subs: list[Statement]) -> tuple[list[str] | None, list[str] | None]:
    """The members a COPY's SELECT and EXCLUDE statements name (None: the statement was not given)."""
    select = exclude = None
    for stmt in subs:
        sc = cursor(stmt)
        which = sc.next().upper
        names = _names(sc)
        if which == "SELECT":
            select = (select or []) + names
        else:
            exclude = (exclude or []) + names
    return select, exclude
