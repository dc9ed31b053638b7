"""The hash iterator object (SAS 9.4 Component Objects: Hash Iterator Object): DECLARE HITER hi('h') walks
hash object H's items in its ORDERED: order. FIRST/LAST put the first/last item's data into the data
variables; NEXT/PREV move on (NEXT before any FIRST starts at the first item, PREV before any LAST at the
last); past either end the return code is non-zero and the data variables keep their values. SETCUR(KEY: …)
starts at a given key. While an iterator points at an item of a key, H's REMOVE of that key is refused (SAS);
moving past the end releases it."""
from __future__ import annotations

from statgrid.sas.datastep.hashobj import NO_MORE, NOT_FOUND
from statgrid.sas.errors import SasRuntimeError


class HashIterator:
    def __init__(self, step, name: str, args: list):
        self.step, self.name = step, name
        target = next((a for t, a in args if not t), None)
        if not isinstance(target, str) or not target.strip():
            raise SasRuntimeError(f"DECLARE HITER {name}: name the hash object it walks, e.g. declare hiter "
                                  f"{name}('h');", text=name)
        self.hash_name = target.strip()
        self.items: list = []
        self.pos: int | None = None

    def _hash(self):
        h = self.step.hashes.get(self.hash_name) or next(
            (o for n, o in self.step.hashes.items() if n.upper() == self.hash_name.upper()), None)
        if h is None or not hasattr(h, "items"):
            raise SasRuntimeError(f"Hash iterator {self.name}: there is no hash object {self.hash_name.upper()} "
                                  "(DECLARE HASH it before the HITER)", text=self.hash_name)
        if not h.done:
            raise SasRuntimeError(f"Hash iterator {self.name}: hash object {self.hash_name.upper()} has not been "
                                  "through DEFINEDONE", text=self.hash_name)
        return h

    def _at(self, h, i: int, v) -> float:
        if not 0 <= i < len(self.items):
            self._release(h)
            return NO_MORE
        self.pos = i
        h._put(self.items[i][1], v)
        return 0.0

    def _release(self, h) -> None:
        self.pos = None

    def points_at(self, h, key) -> bool:
        """This iterator walks `h` and stands on an item of `key` (H's REMOVE of that key is refused)."""
        return self.pos is not None and self._hash() is h and self.items[self.pos][0] == key

    def call(self, method: str, args: list, v: list):
        m = method.upper()
        h = self._hash()
        if m in ("FIRST", "LAST", "SETCUR"):
            self._release(h)
            self.items = h.items()
            if m == "FIRST":
                return self._at(h, 0, v)
            if m == "LAST":
                return self._at(h, len(self.items) - 1, v)
            key = h._key_of(args, v)
            i = next((j for j, (k, _) in enumerate(self.items) if k == key), None)
            return NOT_FOUND if i is None else self._at(h, i, v)
        if m == "NEXT":
            if self.pos is None:
                self.items = h.items()
                return self._at(h, 0, v)
            return self._at(h, self.pos + 1, v)
        if m == "PREV":
            if self.pos is None:
                self.items = h.items()
                return self._at(h, len(self.items) - 1, v)
            return self._at(h, self.pos - 1, v)
        if m == "DELETE":
            self._release(h)
            return 0.0
        raise SasRuntimeError(f"Unknown method {m} for hash iterator {self.name} (FIRST, LAST, NEXT, PREV, "
                              "SETCUR, DELETE)", text=m)


