"""Libraries: SAS-like two-level names `lib.member`, each member a Parquet file.

A library is a directory; member `sales` of library `data` is `<data root>/sales.parquet`.
Names are case-insensitive (stored lower case) and validated so that a name can never reach
outside its directory: letters, digits and underscore, not starting with a digit, ≤ 32
characters. A one-level name means WORK, as in SAS.

For SQL, each library is a DuckDB schema of the same name holding one view per member
(`sync_views`), so `SELECT * FROM data.sales` reads the Parquet file.
"""
from __future__ import annotations

import json
import os
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

from statgrid.config import NAME_RE, RESERVED_LIBRARY_NAMES
from statgrid.errors import LibraryError

if TYPE_CHECKING:
    from statgrid.config.dataset_io import DatasetIO

SUFFIX = ".parquet"
NAME_RULE = "letters, digits and underscore, not starting with a digit, at most 32 characters"
# A parent session's librefs, handed to its sub-tasks (statgrid/session/connect.py) in the environment.
LIBNAMES_ENV = "STATGRID_LIBNAMES"
LIBNAMES_VERSION = 1


def check_name(kind: str, name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise LibraryError(f"{kind} name {name!r} is not valid: use {NAME_RULE} (e.g. 'sales_2024').")
    return name.lower()


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def sql_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Library:
    name: str
    path: Path
    readonly: bool = False

    def member_path(self, member: str) -> Path:
        return self.path / (check_name("member", member) + SUFFIX)

    def members(self) -> list[str]:
        """Member names: files <name>.parquet whose name is valid and lower case (a file like
        Sales.parquet written by another tool is not a member: rename it to sales.parquet)."""
        try:
            names = (e.name[: -len(SUFFIX)] for e in os.scandir(self.path)
                     if e.name.endswith(SUFFIX) and e.is_file())
            return sorted(n for n in names if NAME_RE.match(n) and n == n.lower())
        except FileNotFoundError:
            return []


@dataclass(frozen=True)
class DatasetRef:
    """A resolved `lib.member`: its library, member name and file path."""

    library: Library
    member: str

    @property
    def path(self) -> Path:
        return self.library.member_path(self.member)

    @property
    def name(self) -> str:
        return f"{self.library.name}.{self.member}"

    def exists(self) -> bool:
        return self.path.is_file()

    def scan_sql(self, row_numbers: bool = False) -> str:
        """SQL that reads this dataset; row_numbers adds column file_row_number (input order)."""
        extra = ", file_row_number=true" if row_numbers else ""
        return f"read_parquet({sql_literal(str(self.path))}{extra})"

    def __str__(self) -> str:
        return self.name.upper()


class Libraries:
    """The libraries a session can see, by name."""

    def __init__(self) -> None:
        self._libs: dict[str, Library] = {}
        self._view_state: dict[tuple[str, str], int] = {}

    def __contains__(self, name: str) -> bool:
        return name.lower() in self._libs

    def __iter__(self) -> Iterator[Library]:
        return iter(self._libs.values())

    def assign(self, name: str, path: str | os.PathLike, readonly: bool = False, create: bool = False) -> Library:
        """LIBNAME: make directory `path` the library `name`."""
        lname = check_name("library", name)
        if lname in RESERVED_LIBRARY_NAMES:
            raise LibraryError(f"library name {name!r} is reserved by the SQL engine; choose another name.")
        if lname == "work" and "work" in self._libs:
            raise LibraryError("library WORK is the session's own scratch library and cannot be reassigned; "
                               "assign your directory under another name.")
        p = Path(path).expanduser().absolute()
        if any(ch in str(p) for ch in "*?[]{}"):
            # read_parquet() expands glob patterns: such a path could read other directories' files
            raise LibraryError(f"library {lname.upper()}: path {str(p)!r} contains a glob character (* ? [ ] {{ }}); "
                               "use a directory whose path has none.")
        if create:
            p.mkdir(parents=True, exist_ok=True)
        if not p.is_dir():
            raise LibraryError(f"library {lname.upper()}: directory {str(p)!r} does not exist; create it or "
                               "fix the path.")
        lib = Library(lname, p, readonly)
        self._libs[lname] = lib
        return lib

    def clear(self, name: str) -> Library:
        """LIBNAME name CLEAR: forget library `name` (its files stay); its SQL views go at the next
        sync_views. WORK cannot be cleared: it is the session's own."""
        lname = name.lower()
        if lname == "work":
            raise LibraryError("library WORK is the session's own scratch library and cannot be cleared.")
        lib = self.get(lname)
        del self._libs[lname]
        return lib

    def get(self, name: str) -> Library:
        lname = name.lower() if isinstance(name, str) else name
        if lname not in self._libs:
            raise LibraryError(f"library {name!r} is not assigned; known libraries: "
                               f"{', '.join(sorted(self._libs))}. Assign it with session.libname({name!r}, PATH).")
        return self._libs[lname]

    def ref(self, dsname: str) -> DatasetRef:
        """'data.sales' → DatasetRef; 'sales' → WORK.SALES."""
        if not isinstance(dsname, str):
            raise LibraryError(f"data set name {dsname!r} must be a string like 'work.sales'.")
        parts = dsname.strip().split(".")
        if len(parts) == 1:
            lib, member = "work", parts[0]
        elif len(parts) == 2:
            lib, member = parts
        else:
            raise LibraryError(f"data set name {dsname!r} is not valid: use LIBRARY.MEMBER (e.g. 'data.sales') "
                               "or MEMBER for WORK.")
        check_name("library", lib)
        return DatasetRef(self.get(lib), check_name("member", member))

    def for_read(self, dsname: str) -> DatasetRef:
        ref = self.ref(dsname)
        if not ref.exists():
            members = ref.library.members()
            listing = ", ".join(members[:20]) + (" …" if len(members) > 20 else "") if members else "(none)"
            raise LibraryError(f"data set {ref} does not exist; members of {ref.library.name.upper()}: {listing}.")
        return ref

    def for_write(self, dsname: str) -> DatasetRef:
        ref = self.ref(dsname)
        if ref.library.readonly:
            raise LibraryError(f"library {ref.library.name.upper()} is read-only; write {ref.member!r} to WORK or "
                               "to a library assigned without readonly.")
        return ref

    # ------------------------------------------------------------------ SQL catalog
    def sync_views(self, con) -> None:
        """Make schema `<lib>` hold one view per member; drop views of vanished members.

        Cheap when nothing changed: one directory scan per library and a stat per member.
        """
        seen = set()
        for lib in self._libs.values():
            if (lib.name, "") not in self._view_state:
                con.execute(f"CREATE SCHEMA IF NOT EXISTS {sql_ident(lib.name)}")
                self._view_state[(lib.name, "")] = 0
            for member in lib.members():
                key = (lib.name, member)
                seen.add(key)
                try:
                    mtime = lib.member_path(member).stat().st_mtime_ns
                except FileNotFoundError:
                    continue
                if self._view_state.get(key) != mtime:
                    ref = DatasetRef(lib, member)
                    con.execute(f"CREATE OR REPLACE VIEW {sql_ident(lib.name)}.{sql_ident(member)} AS "
                                f"SELECT * FROM {ref.scan_sql()}")
                    self._view_state[key] = mtime
        for key in [k for k in self._view_state if k[1] and k not in seen]:
            con.execute(f"DROP VIEW IF EXISTS {sql_ident(key[0])}.{sql_ident(key[1])}")
            del self._view_state[key]


def encode_libnames(libs: Iterable[Library]) -> str:
    """The $STATGRID_LIBNAMES value for `libs`: {"version": 1, "libnames": [{"name", "path", "readonly"}]}."""
    return json.dumps({"version": LIBNAMES_VERSION,
                       "libnames": [{"name": lib.name, "path": str(lib.path), "readonly": lib.readonly}
                                    for lib in libs]})


def decode_libnames(text: str) -> list[Library]:
    """The librefs of a $STATGRID_LIBNAMES value (names and paths are checked when assigned)."""
    fix = (f"${LIBNAMES_ENV} is set by Session.parallel for its sub-tasks; unset it, or run the sub-task "
           "from a parent of the same statgrid version")
    try:
        raw = json.loads(text)
    except ValueError:
        raise LibraryError(f"${LIBNAMES_ENV} = {text[:80]!r} is not JSON; {fix}.") from None
    if not isinstance(raw, dict) or raw.get("version") != LIBNAMES_VERSION:
        version = raw.get("version") if isinstance(raw, dict) else None
        raise LibraryError(f"${LIBNAMES_ENV} has version {version!r}, this statgrid reads version "
                           f"{LIBNAMES_VERSION}; {fix}.")
    out = []
    for item in raw.get("libnames") or []:
        if not (isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("path"), str)
                and isinstance(item.get("readonly", False), bool)):
            raise LibraryError(f"${LIBNAMES_ENV} holds {str(item)[:80]!r}, not a libref "
                               f'{{"name": ..., "path": ..., "readonly": false}}; {fix}.')
        out.append(Library(item["name"], Path(item["path"]), item.get("readonly", False)))
    return out


def parquet_copy_sql(select_sql: str, path: str | os.PathLike, io: "DatasetIO | int",
                     kv_metadata: dict[str, str] | None = None) -> str:
    """The one way statgrid writes a data set: DuckDB COPY to Parquet (DESIGN.md), its row groups and codec
    from the session's BUFSIZE and COMPRESS (`io`: a config.DatasetIO; a bare int is rows per row group,
    zstd — benchmarks that pick row groups themselves). kv_metadata goes into the file's key-value
    metadata (labels and formats of imported data)."""
    rows, codec = (io, "zstd") if isinstance(io, int) else (io.row_group_rows, io.codec)
    kv = ""
    if kv_metadata:
        kv = ", KV_METADATA {" + ", ".join(f"{sql_ident(k)}: {sql_literal(v)}" for k, v in kv_metadata.items()) + "}"
    return (f"COPY ({select_sql}) TO {sql_literal(str(path))} "
            f"(FORMAT parquet, COMPRESSION {codec}, ROW_GROUP_SIZE {int(rows)}{kv})")


@contextmanager
def atomic_output(target: DatasetRef | Path) -> Iterator[Path]:
    """Yield a temporary path beside `target`; on success it replaces `target` in one rename.

    A failed or interrupted write leaves the old file (if any) untouched and no partial file.
    (No fsync: like SAS and raw DuckDB, a power loss may lose recent writes.)
    """
    path = target.path if isinstance(target, DatasetRef) else Path(target)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
