"""The DATA step hash object (SAS 9.4 Component Objects: Hash Object): DECLARE HASH h(dataset: 'lib.x',
ordered: 'a'|'d'|'no', multidata: 'y'); DEFINEKEY/DEFINEDATA (names or all: 'yes')/DEFINEDONE; FIND, CHECK,
ADD, REPLACE, REMOVE, OUTPUT(dataset: '…'), CLEAR; NUM_ITEMS; with MULTIDATA:'Y' a key holds a list of data
items: ADD appends, FIND reads the first and FIND_NEXT/FIND_PREV move along the list, HAS_NEXT/HAS_PREV(RESULT: r)
tell whether they can, REMOVEDUP/REPLACEDUP act on the current item, REMOVE drops the key's whole list and
REPLACE replaces the list by the one item. The hash iterator (hiter.py) walks the items in ORDERED: order.
Keys and data are PDV variables; return codes are 0 on success and non-zero otherwise, as SAS's (FIND of a
missing key returns 160038)."""
from __future__ import annotations

from typing import Any

from statgrid.sas.errors import SasRuntimeError
from statgrid.sas.values import MISSING, pad

NOT_FOUND = 160038.0
EXISTS = 630039.0  # hedged: a non-zero code; SAS documents "non-zero" for ADD of an existing key
NO_MORE = 160039.0  # hedged: FIND_NEXT/FIND_PREV past the key's last/first item, iterator past the end


def _key(x):
    if isinstance(x, str):
        return x.rstrip(" ")
    return x if x == x else ("M", getattr(x, "code", "."))


def _order(key: tuple) -> tuple:
    """A key's sort order: numeric missing (special missing by letter, ._ lowest) below every number."""
    out = []
    for k in key:
        if isinstance(k, tuple):
            out.append((0, 0 if k[1] == "_" else 1 if k[1] == "." else 2, k[1], 0.0))
        elif isinstance(k, str):
            out.append((1, 0, k, 0.0))
        else:
            out.append((1, 0, "", k))
    return tuple(out)


class HashObject:
    def __init__(self, step, name: str, args: list):
        self.step, self.name = step, name
        self.opts = {tag: val for tag, val in args}
        self.keys: list[str] = []
        self.data: list[str] = []
        self.table: dict = {}          # key tuple → [data row, ...] (one row unless MULTIDATA)
        self.done = False
        self.multidata = str(self.opts.get("MULTIDATA", "") or "").strip().upper() in ("Y", "YES")
        self.cur: tuple | None = None  # (key, index in its list): the item FIND / FIND_NEXT left current

    def _slots(self, names):
        out = []
        for n in names:
            var = self.step.pdv.get(n)
            if var is None:
                raise SasRuntimeError(f"Undeclared key or data symbol {n.upper()} for hash object {self.name}",
                                      text=n)
            out.append(var)
        return out

    def call(self, method: str, args: list, v: list):
        m = method.upper()
        vals = [a for _, a in args]
        tags = {t: a for t, a in args if t}
        if m in ("DEFINEKEY", "DEFINEDATA"):
            into = self.keys if m == "DEFINEKEY" else self.data
            if str(tags.get("ALL", "")).strip().upper() in ("YES", "Y"):
                # all: 'yes' — the variables of the DATASET: data set (SAS 9.4 Component Objects: DEFINEDATA,
                # DEFINEKEY), else the step's own variables
                ds = str(self.opts.get("DATASET", "") or "").strip()
                into += self._dataset_columns(ds) if ds else [var.name for var in self.step.pdv.slots
                                                              if not var.auto]
            else:
                into += [str(x).strip() for x in vals]
            return 0.0
        if m == "DEFINEDONE":
            self.kvars, self.dvars = self._slots(self.keys), self._slots(self.data or self.keys)
            self.done = True
            ds = str(self.opts.get("DATASET", "") or "").strip()
            if ds:
                self._load(ds)
            return 0.0
        if not self.done:
            raise SasRuntimeError(f"Hash object {self.name}: DEFINEDONE has not been called before {m}", text=m)
        if m in ("FIND_NEXT", "FIND_PREV", "HAS_NEXT", "HAS_PREV", "REMOVEDUP", "REPLACEDUP"):
            return self._dup(m, args, tags, v)
        if m in ("FIND", "CHECK", "ADD", "REPLACE", "REMOVE"):
            key = self._key_of(args, v)
            if m == "FIND":
                rows = self.table.get(key)
                if not rows:
                    self.cur = None
                    return NOT_FOUND
                self.cur = (key, 0)
                self._put(rows[0], v)
                return 0.0
            if m == "CHECK":
                return 0.0 if key in self.table else NOT_FOUND
            if m == "REMOVE":
                if any(getattr(o, "points_at", lambda h, k: False)(self, key) for o in self.step.hashes.values()):
                    # SAS 9.4 Component Objects, REMOVE: "If an associated hash iterator is pointing to the
                    # keyvalue, then the REMOVE method will not remove the key or data"; an ERROR
                    raise SasRuntimeError(f"Hash object {self.name}: a hash iterator points at this key, so REMOVE "
                                          "cannot remove it (move the iterator on, or call its DELETE, first)",
                                          text="REMOVE")
                return 0.0 if self.table.pop(key, None) is not None else NOT_FOUND
            row = self._row_of(args, v)
            if m == "ADD":
                if key in self.table:
                    if not self.multidata:
                        return EXISTS
                    self.table[key].append(row)
                    return 0.0
            self.table[key] = [row]
            return 0.0
        if m == "NUM_ITEMS":
            return float(sum(len(rows) for rows in self.table.values()))
        if m == "CLEAR":
            self.table.clear()
            return 0.0
        if m == "OUTPUT":
            self._output(str(tags.get("DATASET", vals[0] if vals else "")).strip())
            return 0.0
        raise SasRuntimeError(f"Unknown method {m} for hash object {self.name}", text=m)

    # -- helpers ----------------------------------------------------------------------------------------------
    def _key_of(self, args, v) -> tuple:
        keyargs = [a for t, a in args if t == "KEY"]
        if keyargs:
            return tuple(_key(a) for a in keyargs)
        return tuple(_key(v[var.slot]) for var in self.kvars)

    def _row_of(self, args, v) -> tuple:
        datas = [a for t, a in args if t == "DATA"]
        return tuple(datas) if datas else tuple(v[var.slot] for var in self.dvars)

    def _put(self, row, v) -> None:
        for var, x in zip(self.dvars, row):
            v[var.slot] = x

    def _dup(self, m: str, args, tags, v) -> float:
        """The methods on the current item of a MULTIDATA key's list (the one FIND or FIND_NEXT left)."""
        if m == "REPLACEDUP":
            if self.cur is None:
                return self.call("ADD", args, v) if self.multidata else self.call("REPLACE", args, v)
            key, i = self.cur
            self.table[key][i] = self._row_of(args, v)
            return 0.0
        if m == "REMOVEDUP":
            key = self._key_of(args, v)
            rows = self.table.get(key)
            if not rows:
                return NOT_FOUND
            i = self.cur[1] if self.cur is not None and self.cur[0] == key else 0
            del rows[i]
            if not rows:
                del self.table[key]
            self.cur = None
            return 0.0
        if self.cur is None:
            if m.startswith("HAS"):
                self._set_result(tags, v, 0.0)
                return 0.0
            return NOT_FOUND
        key, i = self.cur
        rows = self.table.get(key, [])
        j = i + 1 if m.endswith("NEXT") else i - 1
        ok = 0 <= j < len(rows)
        if m.startswith("HAS"):
            self._set_result(tags, v, 1.0 if ok else 0.0)
            return 0.0
        if not ok:
            return NO_MORE
        self.cur = (key, j)
        self._put(rows[j], v)
        return 0.0

    def _set_result(self, tags, v, value: float) -> None:
        """HAS_NEXT(RESULT: r) / HAS_PREV: r is a variable (its slot was passed by the generated code)."""
        slot = tags.get("RESULT_SLOT")
        if slot is None:
            raise SasRuntimeError(f"Hash object {self.name}: HAS_NEXT and HAS_PREV need RESULT: variable, e.g. "
                                  "rc = h.has_next(result: more);", text="RESULT")
        v[int(slot)] = value

    def items(self) -> list:
        """(key, data row) of every item, in ORDERED: order (the key's list in the order ADD gave it)."""
        keys = list(self.table)
        order = str(self.opts.get("ORDERED", "")).strip().upper()
        if order in ("A", "ASCENDING", "Y", "YES", "D", "DESCENDING"):
            keys.sort(key=_order, reverse=order in ("D", "DESCENDING"))
        return [(k, row) for k in keys for row in self.table[k]]

    def _dataset_columns(self, text: str) -> list[str]:
        from statgrid.sas.dataset import input_sql
        from statgrid.sas.parse.dsname import parse_dataset_text
        program = self.step.program
        cur = program.session.con.cursor()
        try:
            return list(cur.sql(f"SELECT * FROM ({input_sql(program, parse_dataset_text(text, program))}) "
                                "LIMIT 0").columns)
        finally:
            cur.close()

    def _load(self, text: str) -> None:
        from statgrid.sas.dataset import input_sql
        from statgrid.sas.parse.dsname import parse_dataset_text
        program = self.step.program
        spec = parse_dataset_text(text, program)
        cur = program.session.con.cursor()
        table = cur.sql(input_sql(program, spec)).to_arrow_table()
        names = {n.upper(): n for n in table.column_names}
        kcols = [table.column(names[var.name.upper()]).to_pylist() for var in self.kvars]
        dcols = [table.column(names[var.name.upper()]).to_pylist() for var in self.dvars]
        for i in range(table.num_rows):
            key = tuple(_key(c[i] if c[i] is not None else (MISSING if var.type == "num" else ""))
                        for c, var in zip(kcols, self.kvars))
            row = tuple(self._val(c[i], var) for c, var in zip(dcols, self.dvars))
            if key in self.table:
                if self.multidata:
                    self.table[key].append(row)
                continue                                   # the first row of a duplicate key is kept
            self.table[key] = [row]
        cur.close()
        program.log.note(f"There were {table.num_rows} observations read from the data set {spec.name}.")

    @staticmethod
    def _val(x: Any, var):
        if var.type == "char":
            return pad("" if x is None else x, var.length)
        return MISSING if x is None else float(x)

    def _output(self, text: str) -> None:
        import pyarrow as pa
        from statgrid.sas.dataset import write_dataset
        from statgrid.sas.parse.dsname import parse_dataset_text
        vars_ = list(self.kvars) + [d for d in self.dvars if d not in self.kvars]
        kn = len(self.kvars)
        items = self.items()
        cols = {}
        for j, var in enumerate(self.dvars):
            vals = [row[j] for _, row in items]
            cols[var.name] = vals
        for j, var in enumerate(self.kvars):
            if var.name not in cols:
                cols[var.name] = [k[j] for k, _ in items]
        arrays = {}
        for var in vars_:
            vals = cols.get(var.name, [])
            if var.type == "char":
                arrays[var.name] = pa.array([("" if isinstance(x, tuple) else str(x).rstrip(" ")) for x in vals],
                                            pa.string())
            else:
                arrays[var.name] = pa.array([None if isinstance(x, tuple) or x != x else x for x in vals],
                                            pa.float64())
        del kn
        spec = parse_dataset_text(text, self.step.program)
        meta = {var.name: {"length": var.length, "format": var.format, "label": var.label} for var in vars_}
        write_dataset(self.step.program, spec, pa.table(arrays), meta)
