"""SET and MERGE at run time (SAS 9.4 Statements: SET, MERGE; Language Reference: Concepts, "Combining
SAS Data Sets"). One DuckDB query per statement puts the rows of its data sets in SAS's order —
concatenated (by data set, then file order), interleaved by the BY values, or match-merged (by BY value,
then the n-th row of each data set in its BY group) — streamed in Arrow record batches through its own
cursor; Python loads each row into the PDV and sets IN=, END=, FIRST./LAST.
"""
from __future__ import annotations

from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.dataset import column_info, input_sql
from statgrid.sas.errors import SasRuntimeError
from statgrid.sas.datastep.runtime import key
from statgrid.sas.values import MISSING, special_missing

BATCH_ROWS = 65536


def _order_key(col: str, char: bool) -> str:
    return f"rtrim(coalesce({col}, ''))" if char else f"coalesce({col}, '-infinity'::DOUBLE)"


class SetReader:
    def __init__(self, program: Any, pdv, stmt, by: list | None, notsorted: bool):
        self.program, self.pdv, self.stmt = program, pdv, stmt
        self.by, self.notsorted = by or [], notsorted
        self.merge = stmt.kind == "MERGE"
        self.infos = [column_info(program, ds) for ds in stmt.datasets]
        self.counts = [0] * len(stmt.datasets)
        self.point_rows = None

    # -- compile phase: declare the variables ---------------------------------------------------------------------
    def declare(self) -> None:
        pdv = self.pdv
        for info in self.infos:
            for c in info:
                var = pdv.declare(c.name, c.type, c.length if c.type == "char" else 8, self.stmt.line, self.stmt.col)
                var.from_input = True
                var.len_explicit = True
                var.retained = True
                var.uninit = False
                var.format = var.format or c.format
                var.label = var.label or c.label
                var.informat = var.informat or c.informat
        self.in_slots = []
        for ds in self.stmt.datasets:
            self.in_slots.append(pdv.auto_var(ds.in_var).slot if ds.in_var else None)
        self.end_slot = pdv.auto_var(self.stmt.end).slot if self.stmt.end else None
        for name, _ in self.by:
            if pdv.get(name) is None:
                raise SasRuntimeError(f"BY variable {name} is not on input data set "
                                      f"{self.stmt.datasets[0].name}", self.stmt.line, self.stmt.col, name)
        self.first_slots = [pdv.auto_var(f"FIRST.{n}").slot for n, _ in self.by]
        self.last_slots = [pdv.auto_var(f"LAST.{n}").slot for n, _ in self.by]
        self.point_slot = pdv.auto_var(self.stmt.point).slot if self.stmt.point else None
        self.nobs_slot = pdv.auto_var(self.stmt.nobs).slot if self.stmt.nobs else None

    # -- the query ------------------------------------------------------------------------------------------------
    def _sql(self) -> str:
        union: dict[str, Any] = {}
        for info in self.infos:
            for c in info:
                union.setdefault(c.name.upper(), c)
        parts = []
        for i, (ds, info) in enumerate(zip(self.stmt.datasets, self.infos)):
            have = {c.name.upper(): c for c in info}
            cols = [f"{sql_ident(have[u].name) if u in have else ('NULL::VARCHAR' if c.type == 'char' else 'NULL::DOUBLE')}"
                    f" AS {sql_ident(u)}" for u, c in union.items()]
            extra = []
            if any(self.raw_marks):                # the file's row number: where its special missing letters are
                extra = ["__frow" if self.raw_marks[i] else "NULL::DOUBLE AS __frow"]
            inner = input_sql(self.program, ds, info, row_number="__frow" if self.raw_marks[i] else "")
            parts.append(f"SELECT {', '.join(cols + [f'{i} AS __src', 'row_number() OVER () AS __row'] + extra)} "
                         f"FROM ({inner})")
        self.columns = list(union)
        self.types = {u: c.type for u, c in union.items()}
        sql = " UNION ALL ".join(f"({p})" for p in parts)
        keys = [(sql_ident(n.upper()), desc, self.types.get(n.upper()) == "char") for n, desc in self.by]
        korder = ", ".join(f"{_order_key(k, ch)} {'DESC' if desc else 'ASC'}" for k, desc, ch in keys)
        if self.merge:
            part = ", ".join(_order_key(k, ch) for k, _, ch in keys)
            rn = f"row_number() OVER (PARTITION BY __src{', ' + part if part else ''} ORDER BY __row)"
            sql = f"SELECT *, {rn} AS __rn FROM ({sql})"
            order = f"{korder + ', ' if korder else ''}__rn, __src"
        elif keys and not self.notsorted and len(self.stmt.datasets) > 1:
            order = f"{korder}, __src, __row"
        else:
            order = "__src, __row"
        return f"SELECT * FROM ({sql}) ORDER BY {order}"

    def _file_order(self) -> bool:
        """The rows reach the PDV in the data set's own order (one data set, SET, no POINT=)."""
        return not self.merge and len(self.stmt.datasets) == 1 and self.point_slot is None and not self.py_where

    def check_sorted(self) -> None:
        """SAS's ERROR for a BY group out of order, checked per input data set before they are combined.
        With one data set read in order the ERROR waits for the row at fault (self.unsorted_at)."""
        self.unsorted_at = None
        if not self.by or self.notsorted:
            return
        for ds, info in zip(self.stmt.datasets, self.infos):
            types = {c.name.upper(): c.type for c in info}
            keys = [(_order_key(sql_ident(n.upper()), types.get(n.upper()) == "char"), desc) for n, desc in self.by]
            lags = ", ".join(f"{k} AS __k{j}, lag({k}) OVER (ORDER BY __r) AS __p{j}" for j, (k, _) in enumerate(keys))
            # lexicographic "this row sorts before the previous one"
            cond, eq = [], []
            for j, (_, desc) in enumerate(keys):
                op = ">" if desc else "<"
                cond.append("(" + " AND ".join(eq + [f"__k{j} {op} __p{j}"]) + ")")
                eq.append(f"__k{j} = __p{j}")
            sql = (f"SELECT min(__r) FROM (SELECT __r, {lags} FROM (SELECT *, row_number() OVER () AS __r FROM "
                   f"({input_sql(self.program, ds, info)}))) WHERE {' OR '.join(cond)}")
            bad = self.program.session.con.cursor().execute(sql).fetchone()[0]
            if bad is not None and self._file_order():
                # rows arrive in file order: SAS finds the fault when its look-ahead (for LAST.) reads the
                # out-of-order row, so the observations before it run first (__call__ raises there)
                self.unsorted_at = int(bad)
                return
            if bad is not None:
                raise SasRuntimeError(f"BY variables are not properly sorted on data set {ds.name}",
                                      self.stmt.line, self.stmt.col, ds.name, "a data set sorted by the BY variables")

    # -- run time -------------------------------------------------------------------------------------------------
    def start(self, v: list, make_filter=None) -> None:
        self.v = v
        self.py_where: dict[int, Any] = {}
        from statgrid.sas.where_sql import WhereNotSql
        for i, (ds, info) in enumerate(zip(self.stmt.datasets, self.infos)):
            if ds.where is None or make_filter is None:
                continue
            try:
                input_sql(self.program, ds, info)
            except WhereNotSql:
                # a WHERE that SQL cannot say: the rows are filtered here, by the DATA step's own evaluator
                self.py_where[i], ds.where = ds.where, None
        self.check_sorted()
        cur = self.program.session.con.cursor()
        from statgrid.sas.where_sql import register_udfs
        register_udfs(cur)
        self.raw_marks = self._raw_marks()
        sql = self._sql()
        if self.point_slot is not None or self.nobs_slot is not None:
            n = cur.execute(f"SELECT count(*) FROM ({sql})").fetchall()[0][0]
            if self.nobs_slot is not None:
                v[self.nobs_slot] = float(n)
        self.result = cur.sql(sql).to_arrow_reader(BATCH_ROWS)
        self.cur = cur
        self.names = (self.columns + ["__src", "__row"] + (["__frow"] if any(self.raw_marks) else [])
                      + (["__rn"] if self.merge else []))
        self.index = {u: i for i, u in enumerate(self.columns)}
        self.loads = []                        # per source: [(slot, column index, char length or 0)]
        for info in self.infos:
            load = []
            for c in info:
                var = self.pdv.get(c.name)
                load.append((var.slot, self.index[c.name.upper()], var.length if var.type == "char" else 0))
            self.loads.append(load)
        self.all_slots = [(self.pdv.get(u).slot, self.pdv.get(u)) for u in self.columns]
        self.marks = self._specials()
        self.filters = {i: make_filter(node, self) for i, node in self.py_where.items()}
        self.key_idx = [self.index[n.upper()] for n, _ in self.by]
        self.rows = iter(())
        self.pending = None
        self.done = False
        self.prev_key = None
        self.prev_src = None
        if self.point_slot is not None:
            self.point_rows = [r for r in self._all_rows()]

    def _all_rows(self):
        filters, src_i = self.filters, len(self.columns)
        for batch in self.result:
            cols = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
            if not filters:
                yield from zip(*cols)
                continue
            for row in zip(*cols):
                f = filters.get(row[src_i])
                if f is None or f(row):
                    yield row

    def _next_row(self):
        if self.pending is not None:
            r, self.pending = self.pending, None
            return r
        if not hasattr(self, "_gen"):
            self._gen = self._all_rows()
        return next(self._gen, None)

    def _peek(self):
        if self.pending is None:
            self.pending = self._next_row()
        return self.pending

    def _key(self, row):
        out = []
        for i in self.key_idx:
            x = row[i]
            out.append(("" if x is None else x.rstrip(" ")) if self.types[self.columns[i]] == "char"
                       else (("M", ".") if x is None else key(x)))
        return tuple(out)

    def _raw_marks(self) -> list:
        """Per input data set, the special missing letters its file keeps ({COLUMN: {0-based row: letter}},
        dataset.SPECIALS_KEY); {} for none, a view, or POINT= (rows read by number, not through the letters)."""
        from statgrid.sas.dataset import dataset_path, read_specials
        out = []
        for ds in self.stmt.datasets:
            try:
                out.append(read_specials(dataset_path(self.program, ds).path) if self.point_slot is None else {})
            except Exception:  # noqa: BLE001  (a view, an import: no letters)
                out.append({})
        return out

    def _specials(self) -> list:
        """Per input data set: {column index: {1-based file row: letter}}, or None."""
        out = []
        for raw, info in zip(self.raw_marks, self.infos):
            got = None
            for c in info:
                rows = raw.get(c.source.upper()) if c.type != "char" else None
                if rows:
                    got = got or {}
                    got[self.index[c.name.upper()]] = {r + 1: code for r, code in rows.items()}
            out.append(got)
        return out

    def _load(self, row, src: int) -> None:
        v = self.v
        marks = self.marks[src]
        for slot, ci, length in self.loads[src]:
            x = row[ci]
            if length:
                x = "" if x is None else x
                n = len(x)
                v[slot] = x + " " * (length - n) if n < length else x[:length]
            elif x is None and marks is not None and ci in marks:
                code = marks[ci].get(int(row[len(self.columns) + 2]))
                v[slot] = MISSING if code is None else special_missing(code)
            else:
                v[slot] = MISSING if x is None else x

    def _flags(self, row, nxt) -> None:
        v = self.v
        if not self.by:
            return
        k = self._key(row)
        nk = self._key(nxt) if nxt is not None else None
        pk = self.prev_key
        for j in range(len(self.by)):
            v[self.first_slots[j]] = 1.0 if pk is None or pk[:j + 1] != k[:j + 1] else 0.0
            v[self.last_slots[j]] = 1.0 if nk is None or nk[:j + 1] != k[:j + 1] else 0.0
        self.prev_key = k

    def __call__(self) -> bool:
        """Read the next observation into the PDV; True when there is none (the step stops)."""
        if self.point_rows is not None:
            return self._point()
        if self.merge:
            return self._merge()
        row = self._next_row()
        if row is None:
            return True
        src = row[len(self.columns)]
        if src != self.prev_src:
            if self.prev_src is not None:                     # a new data set: its variables start missing
                for slot, var in self.all_slots:
                    self.v[slot] = var.missing
            self.prev_src = src
        self._load(row, src)
        self.counts[src] += 1
        for i, s in enumerate(self.in_slots):
            if s is not None:
                self.v[s] = 1.0 if i == src else 0.0
        nxt = self._peek()
        self._flags(row, nxt)
        if self.end_slot is not None:
            self.v[self.end_slot] = 1.0 if nxt is None else 0.0
        if self.unsorted_at is not None and nxt is not None and nxt[len(self.columns) + 1] == self.unsorted_at:
            # the look-ahead read the row that sorts before this one: it counts as read, and the ERROR stops
            # the step with this row in the PDV (SAS 9.4 log: "... _ERROR_=1 _N_=n", n+1 observations read)
            self.counts[src] += 1
            raise SasRuntimeError(f"BY variables are not properly sorted on data set {self.stmt.datasets[0].name}",
                                  0, 0)
        return False

    def _unit(self):
        """The rows of one match-merge iteration: same BY values, same n-th row within the group."""
        first = self._next_row()
        if first is None:
            return None
        rn_i = len(self.names) - 1
        unit, k = [first], (self._key(first), first[rn_i])
        while True:
            nxt = self._peek()
            if nxt is None or (self._key(nxt), nxt[rn_i]) != k:
                return unit
            unit.append(self._next_row())

    def _merge(self) -> bool:
        unit = self._unit()
        if unit is None:
            return True
        v = self.v
        src_i, rn_i = len(self.columns), len(self.names) - 1
        k = self._key(unit[0])
        new_group = self.prev_key is None or k != self.prev_key or not self.by
        if new_group and self.by:
            for slot, var in self.all_slots:
                v[slot] = var.missing
            self.group_srcs = {r[src_i] for r in unit}
            if len([s for s in self.group_srcs]) > 1 and any(r[rn_i] > 1 for r in unit):
                pass
        if not self.by:
            present = {r[src_i] for r in unit}
            for s, load in enumerate(self.loads):
                if s not in present:
                    for slot, _, length in load:
                        v[slot] = " " * length if length else MISSING
            self.group_srcs = present
        for r in unit:
            self._load(r, r[src_i])
            self.counts[r[src_i]] += 1
        if unit[0][rn_i] == 2 and self.by:
            srcs_with_repeats = {r[src_i] for r in unit}
            if len(srcs_with_repeats) > 1 and not getattr(self, "many_noted", False):
                self.program.log.note("MERGE statement has more than one data set with repeats of BY values.")
                self.many_noted = True
        for i, s in enumerate(self.in_slots):
            if s is not None:
                v[s] = 1.0 if i in self.group_srcs else 0.0
        nxt = self._peek()
        self._flags(unit[0], nxt)
        if self.end_slot is not None:
            v[self.end_slot] = 1.0 if nxt is None else 0.0
        return False

    def _point(self) -> bool:
        p = self.v[self.point_slot]
        n = len(self.point_rows)
        if p != p or int(p) != p or not 1 <= p <= n:
            self.v[self.pdv.get("_ERROR_").slot] = 1.0
            return False
        row = self.point_rows[int(p) - 1]
        self._load(row, row[len(self.columns)])
        self.counts[row[len(self.columns)]] += 1
        return False

    def close(self) -> None:
        try:
            self.cur.close()
        except Exception:  # noqa: BLE001
            pass
