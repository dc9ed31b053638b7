"""PROC SQL (SAS 9.4 SQL Procedure User's Guide): its statements run one by one as they come, until QUIT;
the query text is SAS's dialect, translated by sqltext.py and run by DuckDB over the data-set layer.

    PROC SQL <NOPRINT> <OUTOBS=n> <INOBS=n> <NUMBER> <NOEXEC> <FEEDBACK> …;
      SELECT …;                                  the rows to the listing (labels as headers, formats kept)
      SELECT … INTO :a, :b | :list SEPARATED BY ', ' | :v1 - :v9 <TRIMMED> FROM …;   macro variables
      CREATE TABLE name AS SELECT …;             column modifiers FORMAT= LABEL= LENGTH= INFORMAT= kept
      CREATE VIEW name AS SELECT …;              stored, run again at each read
      INSERT INTO name <(cols)> VALUES (…) <VALUES (…)> | SELECT … | SET c=v, …;
      UPDATE name SET c = expr, … <WHERE …>;   DELETE FROM name <WHERE …>;   DROP TABLE|VIEW a, b;
      DESCRIBE TABLE name;  RESET options;  VALIDATE SELECT …;
SQLOBS (rows of the last statement) and SQLRC are set. NOTEs as SAS writes them ("Table WORK.X created,
with 3 rows and 2 columns.", "3 rows were inserted into WORK.X.", "No rows were selected."). A computed
column without a name is _TEMA001, _TEMA002 … as in SAS. A query that needs its summary statistics remerged
with the detail rows gets them, with SAS's NOTE (see Query; NOREMERGE: SAS's ERROR). Not built: ALTER TABLE,
indexes (CREATE INDEX is accepted with a NOTE: statgrid's data sets have none).
"""
from __future__ import annotations

import json
from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.dataset import ColumnInfo, column_info
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, NUM, SEMI, STR
from statgrid.sas.parse.dsname import DatasetSpec, parse_dataset
from statgrid.sas.procs.common import FLAG, VALUE, cursor, parse_options, proc_statement, write_select
from statgrid.sas.procs import sqlspecials
from statgrid.sas.procs.sqlout import assign_into, listing, symbol
from statgrid.sas.procs.sqltext import SqlText
from statgrid.sas.procs.sqltext import find_top as _find_top, split_top as _split_top
from statgrid.sas.values import special_missing

OPTIONS = {"NOPRINT": FLAG, "PRINT": FLAG, "OUTOBS": VALUE, "INOBS": VALUE, "NUMBER": FLAG, "NONUMBER": FLAG,
           "EXEC": FLAG, "NOEXEC": FLAG, "FEEDBACK": FLAG, "NOFEEDBACK": FLAG, "DOUBLE": FLAG, "NODOUBLE": FLAG,
           "ERRORSTOP": FLAG, "NOERRORSTOP": FLAG, "STIMER": FLAG, "NOSTIMER": FLAG, "THREADS": FLAG,
           "NOTHREADS": FLAG, "WARNRECURS": FLAG, "NOWARNRECURS": FLAG, "UNDO_POLICY": VALUE, "FLOW": FLAG,
           "NOFLOW": FLAG, "SORTMSG": FLAG, "NOSORTMSG": FLAG, "PROMPT": FLAG, "NOPROMPT": FLAG, "REMERGE": FLAG,
           "NOREMERGE": FLAG, "IPASSTHRU": FLAG, "NOIPASSTHRU": FLAG, "CONSTDATETIME": FLAG, "DQUOTE": VALUE,
           "EXITCODE": FLAG, "BUFFERSIZE": VALUE, "CAPTURESQL": VALUE, "STOPONTRUNC": FLAG}
MODIFIERS = ("FORMAT", "LABEL", "LENGTH", "INFORMAT", "TRANSCODE")


def run(statements: Any, program: Any) -> None:
    it = iter(statements)
    first = next(it)
    state = {"opts": parse_options(proc_statement(first), OPTIONS, program, "PROC SQL")}
    con = program.session.con
    before = con.execute("SELECT current_setting('default_null_order')").fetchall()[0][0]
    con.execute("SET default_null_order = 'nulls_first_on_asc_last_on_desc'")   # SAS: missing sorts lowest
    try:
        for stmt in it:
            stmt = _Statement(stmt)
            try:
                _statement(program, stmt, state)
                symbol(program, "SQLRC", "0")
            except SasError:
                symbol(program, "SQLRC", "8")
                raise
            except Exception as exc:  # noqa: BLE001 - the engine's message, as SAS shows the SQL error
                symbol(program, "SQLRC", "8")
                t = stmt.tokens[0]
                msg, udf = str(exc).split("\n")[0], "while executing the UDF: SasError: "
                # a SAS function's own ERROR inside the query (sqludf.py) is logged as SAS says it
                msg = msg.split(udf, 1)[1] if udf in msg else f"PROC SQL: {msg}"
                raise SasError(msg, t.line, t.col, t.text, "", stmt.source) from None
    finally:
        con.execute(f"SET default_null_order = '{before}'")


class _Statement:
    """A statement without its closing semicolon (the translation reads tokens to the end)."""

    def __init__(self, stmt):
        self.tokens = [t for t in stmt.tokens if t.kind != SEMI]
        self.keyword, self.source, self.line, self.text = stmt.keyword, stmt.source, stmt.line, stmt.text


def _statement(program: Any, stmt, state: dict) -> None:
    kw = stmt.keyword
    toks = stmt.tokens
    opts = state["opts"]
    if kw == "SELECT":
        _select(program, stmt, opts)
    elif kw == "CREATE":
        _create(program, stmt, opts)
    elif kw == "INSERT":
        _insert(program, stmt)
    elif kw == "DELETE":
        _delete(program, stmt)
    elif kw == "UPDATE":
        _update(program, stmt)
    elif kw == "DROP":
        _drop(program, stmt)
    elif kw == "DESCRIBE":
        _describe(program, stmt)
    elif kw == "RESET":
        c = cursor(stmt)
        c.next()
        new = parse_options(c, OPTIONS, program, "RESET")
        opts.values.update(new.values)
        if "PRINT" in new:
            opts.values.pop("NOPRINT", None)
    elif kw == "VALIDATE":
        text = SqlText(program, toks, stmt.source)
        program.session.con.execute(f"EXPLAIN {text.translate(1)}")
        program.log.note("PROC SQL statement has valid syntax.")
    elif kw == "TITLE" or kw.startswith("TITLE") or kw.startswith("FOOTNOTE"):
        return
    else:
        t = toks[0]
        raise SasError(f"Statement {t.text.upper()} is not valid in PROC SQL", t.line, t.col, t.text,
                       "SELECT, CREATE, INSERT, UPDATE, DELETE, DROP, DESCRIBE, RESET, VALIDATE or QUIT",
                       stmt.source)


# -- SELECT ------------------------------------------------------------------------------------------------
class Query:
    """A SELECT's pieces: the translated SQL with output names fixed, each column's modifiers, the INTO
    targets (removed from the SQL).

    Remerging (SAS SQL Procedure User's Guide, "Remerging Summary Statistics"): a query that selects a
    column neither grouped nor summarized beside a summary function (`select g, x, x / sum(x) from t group
    by g`; HAVING with no GROUP BY) is answered by SAS with every detail row and its group's statistics,
    and a NOTE. Such a query is the one DuckDB refuses to bind ("must appear in the GROUP BY clause"): it
    is then built again with its aggregates as window functions over the groups (PARTITION BY the GROUP BY
    keys, or the whole table), GROUP BY dropped and HAVING a QUALIFY. NOREMERGE makes it SAS's ERROR."""

    def __init__(self, program: Any, stmt, start: int, remerge: bool = True):
        self.program, self.stmt = program, stmt
        self.remerged = False
        self._build(start, over=None)
        if self.carried is not None and not self._binds():      # an aggregate query: no letters to carry
            self.close()
            self._build(start, over=None, carry=False)
        if self._needs_remerge():
            toks = stmt.tokens
            if not remerge:
                t = toks[start]
                raise SasError("The query requires remerging summary statistics back with the original data. "
                               "This is disallowed due to the NOREMERGE proc option or NOSQLREMERGE system option",
                               t.line, t.col, t.text, "a GROUP BY of every selected column that is not summarized, "
                               "or PROC SQL REMERGE", stmt.source)
            end = len(toks)
            group = _find_top(toks, start, end, "GROUP")
            keys = ""
            if group >= 0:
                stop_g = _find_top(toks, group + 2, end, "HAVING", "ORDER")
                parts = []
                for a, b in _split_top(toks, group + 2, stop_g if stop_g >= 0 else end):
                    if b - a == 1 and toks[a].kind == NUM and 1 <= int(toks[a].value) <= len(self.exprs):
                        parts.append(self.exprs[int(toks[a].value) - 1])     # GROUP BY 1: the first column
                    else:
                        parts.append(self.text.translate_sub(a, b))
                keys = ", ".join(parts)
            self._build(start, over=f"OVER (PARTITION BY {keys})" if keys else "OVER ()")
            self.remerged = True
            program.log.note("The query requires remerging summary statistics back with the original data.")

    def _binds(self) -> bool:
        import duckdb
        try:
            self.program.session.con.execute(f"SELECT * FROM ({self.sql}) LIMIT 0")
        except duckdb.Error:
            return False
        return True

    def close(self) -> None:
        """Drops the table of special missing letters a query over one data set may have made."""
        if self.carried is not None:
            self.carried.drop()

    def _needs_remerge(self) -> bool:
        import duckdb
        toks = self.stmt.tokens
        if _find_top(toks, 0, len(toks), "UNION", "EXCEPT", "INTERSECT", "OUTER") >= 0:
            return False
        try:
            self.program.session.con.execute(f"SELECT * FROM ({self.sql}) LIMIT 0")
        except duckdb.BinderException as exc:
            return "must appear in the GROUP BY clause" in str(exc) or "must be part of an aggregate" in str(exc)
        except duckdb.Error:
            return False
        return False

    def _build(self, start: int, over: str | None, carry: bool = True) -> None:
        program, stmt = self.program, self.stmt
        toks = stmt.tokens
        end = len(toks)
        self.into: list = []
        into = _find_top(toks, start, end, "INTO")
        frm = _find_top(toks, start, end, "FROM")
        stop = into if into >= 0 else frm if frm >= 0 else _first_clause(toks, start + 1, end)
        text = SqlText(program, toks, stmt.source)
        text._prescan(start, end)
        text.over = over
        items, self.modifiers, self.names, self.exprs = [], [], [], []
        distinct = ""
        k0 = start + 1
        if k0 < end and toks[k0].is_("DISTINCT"):
            distinct, k0 = "DISTINCT ", k0 + 1
        self.carried = sqlspecials.plan(program, text, toks, start, end, frm, bool(distinct)) \
            if carry and over is None else None
        outputs = []                                        # (name, plain column's source name, is `*`)
        for n, (a, b) in enumerate(_split_top(toks, k0, stop)):
            mods: dict[str, str] = {}
            # column modifiers at the end of the item: FORMAT=fmt LABEL='x' LENGTH=n
            while b - a >= 3:
                k = next((j for j in range(b - 2, a, -1) if toks[j].kind == NAME and toks[j].upper in MODIFIERS
                          and toks[j + 1].text == "="), -1)
                if k < 0:
                    break
                val = "".join(x.text for x in toks[k + 2:b]) if toks[k + 2].kind != STR else toks[k + 2].value
                mods[toks[k].upper] = str(val).upper() if toks[k].upper in ("FORMAT", "INFORMAT") else str(val)
                b = k
            alias = None
            if b - a >= 2 and toks[b - 2].is_("AS"):
                alias = toks[b - 1].text if toks[b - 1].kind == NAME else str(toks[b - 1].value)
                b -= 2
            sql = text.translate_sub(a, b)
            plain = b - a == 1 and toks[a].kind == NAME or (b - a == 3 and toks[a + 1].text == "."
                                                             and toks[a + 2].kind == NAME)
            star = toks[b - 1].text == "*" and (b - a == 1 or toks[b - 2].text == ".")
            if alias is None and not plain and not star:
                alias = f"_TEMA{len([m for m in self.names if m and m.startswith('_TEMA')]) + 1:03d}"
            src = text.columns.get("".join(x.text for x in toks[a:b]).upper()) if plain else None
            if star and self.carried is not None:
                sql += sqlspecials.hidden(self.carried)
            outputs.append((alias or (toks[b - 1].text if plain else None), toks[b - 1].text if plain else None, star))
            items.append(sql + (f" AS {sql_ident(alias)}" if alias else ""))
            self.exprs.append(sql)
            self.names.append(alias or (toks[b - 1].text if plain else None))
            self.modifiers.append((mods, src, star))
        if into >= 0:
            self.into = _into(toks, into + 1, frm if frm >= 0 else end)
        group = _find_top(toks, start, end, "GROUP")
        stop_g = _find_top(toks, group + 2, end, "HAVING") if group >= 0 else -1
        order = _find_top(toks, start, end, "ORDER")
        if self.carried is not None:
            items += sqlspecials.letter_items(self.carried, outputs)
            rest = text.translate_sub(frm, order if order >= 0 else end)
            if order >= 0:
                rest += " " + sqlspecials.order_by(self.carried, text, toks, order, end, outputs)
        elif over is None or frm < 0:
            rest = text.translate_sub(frm, end) if frm >= 0 else ""
        else:                                   # remerged: no GROUP BY; HAVING filters the detail rows
            having = _find_top(toks, frm, end, "HAVING")
            tail = _find_top(toks, frm, end, "ORDER")
            cut = min(k for k in (group, having, tail, end) if k >= 0)
            rest = text.translate_sub(frm, cut)
            if having >= 0:
                rest += " QUALIFY " + text.translate_sub(having + 1, tail if tail >= 0 else end)
            if tail >= 0:
                rest += " " + text.translate_sub(tail, end)
        self.sql = f"SELECT {distinct}{', '.join(items)} {rest}"
        # SAS returns DISTINCT and GROUP BY results sorted (it sorts to find them); DuckDB's hash order is
        # arbitrary: without ORDER BY, sort by the group keys (DISTINCT: by every column), missing first
        if _find_top(toks, start, end, "ORDER", "UNION", "EXCEPT", "INTERSECT", "OUTER") < 0:
            if group >= 0:
                stop_k = stop_g if stop_g >= 0 else end
                keys = text.translate_sub(group + 2, stop_k)
                self.sql += f" ORDER BY {keys}"
            elif distinct:
                self.sql = f"SELECT * FROM ({self.sql}) ORDER BY ALL"
        self.text = text

    def columns(self) -> list[ColumnInfo]:
        """The result's columns with SAS attributes: a plain column keeps its source's, modifiers win; the
        columns a `*` brings keep their sources'."""
        desc = self.program.session.con.execute(f"SELECT * FROM ({self.sql}) LIMIT 0").description
        named = {n.upper(): (mods, src) for n, (mods, src, star) in zip(self.names, self.modifiers)
                 if n and not star}
        out: list[ColumnInfo] = []
        for name, typ, *_ in desc:
            if str(name).startswith("__sas_"):
                continue                                    # a special missing value's letter (sqlspecials)
            mods, src = named.get(str(name).upper(), ({}, self.text.columns.get(str(name).upper())))
            ctype = "char" if str(typ).upper() in ("STRING", "VARCHAR") else "num"
            if src is not None and src.type != ctype:
                src = None
            length = int(mods.get("LENGTH", src.length if src is not None else 8 if ctype == "num" else 200))
            out.append(ColumnInfo(str(name), ctype, length,
                                  mods.get("FORMAT", src.format if src is not None else ""),
                                  mods.get("INFORMAT", src.informat if src is not None else ""),
                                  mods.get("LABEL", src.label if src is not None else "")))
        return out


def _first_clause(toks, a, b) -> int:
    k = _find_top(toks, a, b, "WHERE", "GROUP", "HAVING", "ORDER")
    return b if k < 0 else k


def _into(toks: list, a: int, b: int) -> list[dict]:
    """INTO targets: [{'names': [...], 'sep': str|None, 'trimmed': bool}]."""
    out = []
    for x, y in _split_top(toks, a, b):
        k = x
        if toks[k].text != ":":
            raise SasError("Syntax error in INTO: a macro variable name starts with ':'", toks[k].line,
                           toks[k].col, toks[k].text, ":name")
        names = [toks[k + 1].text]
        k += 2
        if k < y and toks[k].text == "-":
            k += 1
            if toks[k].text == ":":
                k += 1
            last = toks[k].text
            k += 1
            from statgrid.sas.parse.varlist import expand_numbered
            names = expand_numbered(names[0], last)
            target = {"names": names, "sep": None, "range": True}
        else:
            target = {"names": names, "sep": None, "range": False}
        if k < y and toks[k].is_("SEPARATED"):
            k += 2                                      # SEPARATED BY
            target["sep"] = str(toks[k].value)
            k += 1
        target["trimmed"] = any(t.is_("TRIMMED") for t in toks[k:y])
        out.append(target)
    return out


def _select(program, stmt, opts) -> None:
    q = Query(program, stmt, 0, remerge=not opts.get("NOREMERGE"))
    try:
        cols = q.columns()
        limit = f" LIMIT {int(opts.get('OUTOBS'))}" if opts.get("OUTOBS") is not None else ""
        table = program.session.fetch_arrow(f"SELECT * FROM ({q.sql}){limit}")
    finally:
        q.close()
    visible, letters = sqlspecials.split_letters(table.column_names)
    rows = [[special_missing(r[letters[j]]) if j in letters and r[letters[j]] is not None else r[j]
             for j in visible] for r in (list(d.values()) for d in table.to_pylist())]
    symbol(program, "SQLOBS", str(len(rows)))
    if q.into:
        assign_into(program, q.into, cols, rows)
        return
    if not rows:
        program.log.note("No rows were selected.")
        return
    if opts.get("NOPRINT"):
        return
    program.log.listing(listing(program, cols, rows, bool(opts.get("NUMBER"))))


# -- CREATE, INSERT, UPDATE, DELETE, DROP, DESCRIBE ------------------------------------------------------------
def _target(program, stmt, k: int) -> tuple[DatasetSpec, int]:
    c = cursor(stmt)
    c.i = k
    spec = parse_dataset(c, program)
    return spec, c.i


def _create(program, stmt, opts) -> None:
    toks = stmt.tokens
    if len(toks) < 3:
        raise SasError("Syntax error in CREATE", toks[0].line, toks[0].col, "CREATE", "CREATE TABLE name AS SELECT …")
    what = toks[1].upper
    if what in ("INDEX", "UNIQUE"):
        program.log.note("statgrid's data sets have no indexes: CREATE INDEX is accepted and does nothing.")
        return
    if what not in ("TABLE", "VIEW"):
        raise SasError(f"CREATE {toks[1].text} is not supported in PROC SQL", toks[1].line, toks[1].col,
                       toks[1].text, "CREATE TABLE or CREATE VIEW")
    spec, k = _target(program, stmt, 2)
    if k < len(toks) and toks[k].is_("LIKE"):
        src, _ = _target(program, stmt, k + 1)
        cols = column_info(program, src)
        from statgrid.sas.dataset import input_sql
        write_select(program, spec, f"SELECT * FROM ({input_sql(program, src, cols)}) WHERE FALSE", cols)
        return
    if not (k < len(toks) and toks[k].is_("AS")):
        raise SasError("CREATE TABLE needs AS SELECT … (or LIKE)", toks[k - 1].line, toks[k - 1].col,
                       toks[k - 1].text, "AS SELECT")
    if what == "VIEW":
        _create_view(program, stmt, spec, k + 1)
        return
    q = Query(program, stmt, k + 1, remerge=not opts.get("NOREMERGE"))
    try:
        cols = q.columns()
        if opts.get("OUTOBS") is not None:          # SAS: OUTOBS= limits the rows a table gets, too
            q.sql = _outobs(program, q.sql, int(opts.get("OUTOBS")))
        sqlspecials.write_rows(program, q, spec, cols, lambda sql, kv: _write(program, spec, sql, cols, "created", kv))
    finally:
        q.close()


def _outobs(program, sql: str, n: int) -> str:
    """`sql` limited to n rows, with SAS's WARNING when the query had more."""
    more = program.session.execute(f"SELECT count(*) FROM (SELECT 1 FROM ({sql}) LIMIT {n + 1})").fetchall()[0][0]
    if more > n:
        program.log.warning(f"Statement terminated early due to OUTOBS={n} option.")
    return f"SELECT * FROM ({sql}) LIMIT {n}"


def _write(program, spec: DatasetSpec, sql: str, cols: list[ColumnInfo], verb: str, kv: dict | None = None) -> int:
    before = program.log.note
    notes = []
    program.log.note = notes.append                   # the data-set layer's NOTE is SAS SQL's own here
    try:
        rows = write_select(program, spec, sql, cols, kv)
    finally:
        program.log.note = before
    for n in notes:
        if not n.startswith("The data set "):
            program.log.note(n)
    symbol(program, "SQLOBS", str(rows))
    if verb == "created":
        program.log.note(f"Table {spec.name} created, with {rows} rows and {len(cols)} columns.")
    return rows


def _create_view(program, stmt, spec: DatasetSpec, k: int) -> None:
    from statgrid.sas.dataset import view_path
    ref = program.session.libraries.for_write(f"{spec.libref}.{spec.member}")
    # the query after AS SELECT, as written (its SELECT keyword left out: materialize_view puts it back)
    start = stmt.tokens[k + 1].pos - stmt.tokens[0].pos if k + 1 < len(stmt.tokens) else len(stmt.text)
    text = stmt.text[start:].rstrip().rstrip(";")
    if not stmt.tokens[k].is_("SELECT"):
        raise SasError("CREATE VIEW needs AS SELECT …", stmt.tokens[k].line, stmt.tokens[k].col, stmt.tokens[k].text,
                       "SELECT")
    q = Query(program, stmt, k)
    q.columns()                                       # checked now, as SAS checks a view when it is defined
    q.close()
    view_path(ref).write_text(json.dumps({"version": 1, "sql": text, "line": stmt.line}))
    program.log.note(f"SQL view {spec.name} has been defined.")


def _existing(program, spec: DatasetSpec) -> tuple[list[ColumnInfo], str]:
    from statgrid.sas.dataset import input_sql
    cols = column_info(program, spec)
    return cols, input_sql(program, DatasetSpec(spec.libref, spec.member), cols)


def _insert(program, stmt) -> None:
    toks = stmt.tokens
    if not toks[1].is_("INTO"):
        raise SasError("Syntax error in INSERT", toks[1].line, toks[1].col, toks[1].text, "INSERT INTO")
    spec, k = _target(program, stmt, 2)
    cols, current = _existing(program, spec)
    names = [c.name for c in cols]
    if k < len(toks) and toks[k].text == "(":
        close = next(j for j in range(k, len(toks)) if toks[j].text == ")")
        names = [t.text for t in toks[k + 1:close] if t.kind == NAME]
        k = close + 1
    text = SqlText(program, toks, stmt.source)
    if toks[k].is_("VALUES"):
        rows = []
        j = k
        while j < len(toks) and toks[j].is_("VALUES"):
            close = text._close(j + 1, len(toks))
            rows.append("(" + ", ".join(text.translate_sub(a, b) for a, b in _split_top(toks, j + 2, close)) + ")")
            j = close + 1
        new = f"SELECT * FROM (VALUES {', '.join(rows)}) AS v({', '.join(sql_ident(n) for n in names)})"
    elif toks[k].is_("SET"):
        sets = []
        for a, b in _split_top(toks, k + 1, len(toks)):
            sets.append(f"{text.translate_sub(a + 2, b)} AS {sql_ident(toks[a].text)}")
        new = f"SELECT {', '.join(sets)}"
        names = [toks[a].text for a, _ in _split_top(toks, k + 1, len(toks))]
    else:
        q = Query(program, stmt, k)
        new = q.sql
        desc = program.session.con.execute(f"SELECT * FROM ({new}) LIMIT 0").description
        new = f"SELECT * FROM ({new}) AS v({', '.join(sql_ident(n) for n in names[:len(desc)])})"
    chosen = {n.upper() for n in names}
    sel = ", ".join((f"CAST(v.{sql_ident(next(n for n in names if n.upper() == c.name.upper()))} AS "
                     f"{'VARCHAR' if c.type == 'char' else 'DOUBLE'})") if c.name.upper() in chosen
                    else f"NULL AS {sql_ident(c.name)}" for c in cols)
    added = program.session.con.execute(f"SELECT count(*) FROM ({new}) AS v").fetchall()[0][0]
    union = f"SELECT * FROM ({current}) UNION ALL SELECT {sel} FROM ({new}) AS v"
    _write(program, DatasetSpec(spec.libref, spec.member), union, cols, "inserted",
           sqlspecials.kept_letters(program, spec, cols))
    symbol(program, "SQLOBS", str(added))
    program.log.note(f"{added} rows were inserted into {spec.name}.")


def _where_of(program, stmt, k: int, text=None) -> str:
    toks = stmt.tokens
    if k < len(toks) and toks[k].is_("WHERE"):
        return (text or SqlText(program, toks, stmt.source)).translate(k + 1)
    return ""


def _delete(program, stmt) -> None:
    spec, k = _target(program, stmt, 2)
    cols, current = _existing(program, spec)
    text = SqlText(program, stmt.tokens, stmt.source)
    carried = sqlspecials.dml_frame(program, spec, cols, text)      # special missing letters: WHERE x = .A
    current = carried.sql if carried is not None else current
    cond = _where_of(program, stmt, k, text)
    alias = spec.member.lower()
    if cond:
        n = program.session.con.execute(f"SELECT count(*) FROM ({current}) AS {alias} WHERE {cond}").fetchall()[0][0]
        keep = f"SELECT * FROM ({current}) AS {alias} WHERE NOT coalesce(({cond}), FALSE)"
    else:
        n = program.session.con.execute(f"SELECT count(*) FROM ({current})").fetchall()[0][0]
        keep = f"SELECT * FROM ({current}) WHERE FALSE"
    letters = carried.letters_of(keep, sqlspecials.ROW, spec, cols) if carried is not None else None
    _write(program, DatasetSpec(spec.libref, spec.member), keep, cols, "deleted", letters or None)
    symbol(program, "SQLOBS", str(n))
    program.log.note(f"{n} rows were deleted from {spec.name}.")


def _update(program, stmt) -> None:
    toks = stmt.tokens
    spec, k = _target(program, stmt, 1)
    cols, current = _existing(program, spec)
    if not toks[k].is_("SET"):
        raise SasError("Syntax error in UPDATE", toks[k].line, toks[k].col, toks[k].text, "SET")
    w = _find_top(toks, k + 1, len(toks), "WHERE")
    end = w if w >= 0 else len(toks)
    text = SqlText(program, toks, stmt.source)
    text._prescan(0, len(toks))
    for c in cols:
        text.columns.setdefault(c.name.upper(), c)
    carried = sqlspecials.dml_frame(program, spec, cols, text)      # special missing letters: WHERE x = .A
    current = carried.sql if carried is not None else current
    sets, set_toks = {}, {}
    for a, b in _split_top(toks, k + 1, end):
        sets[toks[a].text.upper()] = text.translate_sub(a + 2, b)
        set_toks[toks[a].text.upper()] = toks[a + 2:b]
    cond = text.translate(w + 1) if w >= 0 else "TRUE"
    alias = spec.member.lower()
    sel = ", ".join(f"CASE WHEN coalesce(({cond}), FALSE) THEN CAST(({sets[c.name.upper()]}) AS "
                    f"{'VARCHAR' if c.type == 'char' else 'DOUBLE'}) ELSE {sql_ident(c.name)} END AS {sql_ident(c.name)}"
                    if c.name.upper() in sets else sql_ident(c.name) for c in cols)
    n = program.session.con.execute(f"SELECT count(*) FROM ({current}) AS {alias} WHERE {cond}").fetchall()[0][0]
    rows, letters = f"SELECT {sel} FROM ({current}) AS {alias}", None
    if carried is not None:                         # the letters after SET (kept, moved or given: x = .Z)
        rows = f"SELECT {sel}, {sqlspecials.updated_codes(carried, set_toks, cond)} FROM ({current}) AS {alias}"
        letters = carried.letters_of(rows, sqlspecials.ROW, spec, cols)
    _write(program, DatasetSpec(spec.libref, spec.member), rows, cols, "updated", letters or None)
    symbol(program, "SQLOBS", str(n))
    program.log.note(f"{n} rows were updated in {spec.name}.")


def _drop(program, stmt) -> None:
    toks = stmt.tokens
    kind = toks[1].upper if len(toks) > 1 else ""
    if kind not in ("TABLE", "VIEW", "INDEX"):
        raise SasError("Syntax error in DROP", toks[0].line, toks[0].col, "DROP", "DROP TABLE or DROP VIEW")
    if kind == "INDEX":
        return
    from statgrid.sas.dataset import view_path
    for a, b in _split_top(toks, 2, len(toks)):
        spec, _ = _target(program, stmt, a)
        ref = program.session.libraries.for_write(f"{spec.libref}.{spec.member}")
        path = view_path(ref) if kind == "VIEW" else ref.path
        if not path.exists():
            program.log.warning(f"File {spec.name}.{'VIEW' if kind == 'VIEW' else 'DATA'} does not exist.")
            continue
        path.unlink()
        program.log.note(f"{'View' if kind == 'VIEW' else 'Table'} {spec.name} has been dropped.")


def _describe(program, stmt) -> None:
    spec, _ = _target(program, stmt, 2)
    cols = column_info(program, spec)
    lines = [f"NOTE: SQL table {spec.name} was created like:", "", f"create table {spec.name}( bufsize=65536 )"]
    parts = []
    for c in cols:
        t = f"char({c.length})" if c.type == "char" else "num"
        extra = (f" format={c.format}" if c.format else "") + (f" label='{c.label}'" if c.label else "")
        parts.append(f"  {c.name} {t}{extra}")
    lines += [",\n".join(parts), "  );"]
    program.log.put("\n".join(lines))


def materialize_view(program: Any, stored: dict, member: str) -> None:
    """Run a stored SQL view's query into WORK.member (dataset.materialize_view calls this for a view
    CREATE VIEW wrote): the query text is tokenized again and run as CREATE TABLE would."""
    from statgrid.sas.statement import statements_of

    stmts = statements_of(f"select {stored['sql']};", int(stored.get("line", 1)))
    if not stmts:
        raise SasError("The stored SQL view is empty", 0, 0, member, "a view made by CREATE VIEW")
    stmt = _Statement(stmts[0])
    q = Query(program, stmt, 0)
    con = program.session.con
    before = con.execute("SELECT current_setting('default_null_order')").fetchall()[0][0]
    con.execute("SET default_null_order = 'nulls_first_on_asc_last_on_desc'")
    try:
        out, cols = DatasetSpec("WORK", member.upper()), q.columns()
        sqlspecials.write_rows(program, q, out, cols, lambda sql, kv: write_select(program, out, sql, cols, kv))
    finally:
        q.close()
        con.execute(f"SET default_null_order = '{before}'")
