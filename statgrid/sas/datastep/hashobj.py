"""The DATA step hash object (SAS 9.4 Component Objects: Hash Object): DECLARE HASH h(dataset: 'lib.x',
ordered: 'a'|'d'|'no', multidata: 'y'); DEFINEKEY/DEFINEDATA (names or all: 'yes')/DEFINEDONE; FIND, CHECK,
ADD, REPLACE, REMOVE, OUTPUT(dataset: '…'), CLEAR; NUM_ITEMS. Keys and data are PDV variables; return
codes are 0 on success and non-zero otherwise, as SAS's (FIND of a missing key returns 160038)."""
from __future__ import annotations

from typing import Any

from statgrid.sas.errors import SasRuntimeError
from statgrid.sas.values import MISSING, pad

NOT_FOUND = 160038.0
EXISTS = 630039.0  # hedged: a non-zero code; SAS documents "non-zero" for ADD of an existing key


def _key(x):
    if isinstance(x, str):
        return x.rstrip(" ")
    return x if x == x else ("M", getattr(x, "code", "."))


class HashObject:
    def __init__(self, step, name: str, args: list):
        self.step, self.name = step, name
        self.opts = {tag: val for tag, val in args}
        self.keys: list[str] = []
        self.data: list[str] = []
        self.table: dict = {}
        self.done = False

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
        if m == "DEFINEKEY":
            self.keys += [str(x).strip() for x in vals]
            return 0.0
        if m == "DEFINEDATA":
            if str(tags.get("ALL", "")).strip().upper() in ("YES", "Y"):
                self.data += [var.name for var in self.step.pdv.slots if not var.auto]
            else:
                self.data += [str(x).strip() for x in vals]
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
        if m in ("FIND", "CHECK", "ADD", "REPLACE", "REMOVE"):
            keyargs = [a for t, a in args if t == "KEY"]
            if keyargs:
                key = tuple(_key(a) for a in keyargs)
            else:
                key = tuple(_key(v[var.slot]) for var in self.kvars)
            if m == "FIND":
                row = self.table.get(key)
                if row is None:
                    return NOT_FOUND
                for var, x in zip(self.dvars, row):
                    v[var.slot] = x
                return 0.0
            if m == "CHECK":
                return 0.0 if key in self.table else NOT_FOUND
            if m == "REMOVE":
                return 0.0 if self.table.pop(key, None) is not None else NOT_FOUND
            datas = [a for t, a in args if t == "DATA"]
            row = tuple(datas) if datas else tuple(v[var.slot] for var in self.dvars)
            if m == "ADD":
                if key in self.table:
                    return EXISTS
            self.table[key] = row
            return 0.0
        if m == "NUM_ITEMS":
            return float(len(self.table))
        if m == "CLEAR":
            self.table.clear()
            return 0.0
        if m == "OUTPUT":
            self._output(str(tags.get("DATASET", vals[0] if vals else "")).strip())
            return 0.0
        raise SasRuntimeError(f"Unknown method {m} for hash object {self.name}", text=m)

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
            if key in self.table:
                continue                                   # the first row of a duplicate key is kept
            self.table[key] = tuple(self._val(c[i], var) for c, var in zip(dcols, self.dvars))
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
        items = list(self.table.items())
        order = str(self.opts.get("ORDERED", "")).strip().upper()
        if order in ("A", "ASCENDING", "Y", "YES", "D", "DESCENDING"):
            items.sort(key=lambda kv: tuple((0, k) if not isinstance(k, tuple) else (-1, 0) for k in kv[0]),
                       reverse=order in ("D", "DESCENDING"))
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
