"""The records of an external file or DATALINES as INFILE reads them (SAS 9.4 Statements: INFILE —
RECFM=V|F, LRECL=, PAD, ENCODING=, FIRSTOBS=, OBS=): the bytes decoded, one record at a time, with one
read ahead for END= and EOF=."""
from __future__ import annotations


def _decode(raw: bytes, encoding: str | None) -> str:
    """One record's bytes as text: UTF-8, or Latin-1 (byte n is character n) for a record that is not
    UTF-8 or when ENCODING= names Latin-1 (or the record format is fixed, whose columns are bytes)."""
    if encoding == "latin-1":
        return raw.decode("latin-1")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _encoding_of(opts: dict) -> str | None:
    enc = str(opts.get("ENCODING", "")).strip().upper().replace("-", "").replace("_", "")
    if enc in ("LATIN1", "WLATIN1", "ISO88591", "ANY", "ASCIIANY"):
        return "latin-1"
    if enc in ("UTF8",):
        return "utf-8"
    return "latin-1" if recfm_of(opts) == "F" else None


def recfm_of(opts: dict) -> str:
    """RECFM=: V (records end at a newline, the default) or F (records of LRECL bytes)."""
    return str(opts.get("RECFM", "V")).upper()


DEFAULT_LRECL_F = 256                  # SAS's LRECL for RECFM=F when none is given (UNIX hosts)
CHUNK = 1 << 16


def file_records(path, opts: dict):
    """The records of one external file, read as they are needed (the file is never held whole).
    RECFM=V (the default): records end at a newline, a carriage return before it dropped. RECFM=F:
    records of exactly LRECL bytes, newline bytes are data (the last record may be shorter)."""
    encoding = _encoding_of(opts)
    if recfm_of(opts) == "F":
        lrecl = int(opts.get("LRECL") or DEFAULT_LRECL_F)
        with open(path, "rb") as fh:
            while True:
                raw = fh.read(lrecl)
                if not raw:
                    return
                yield _decode(raw, encoding)
    else:
        with open(path, "rb", buffering=CHUNK) as fh:
            for raw in fh:
                if raw.endswith(b"\n"):
                    raw = raw[:-1]
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                yield _decode(raw, encoding)


class LineSource:
    """The input records of INFILE/DATALINES with the options that shape them, taken one at a time from an
    iterator (a file is streamed) with one record read ahead for END= and EOF= (at_end())."""

    def __init__(self, lines, opts: dict):
        first = int(opts.get("FIRSTOBS", 1))
        obs = opts.get("OBS")
        self.left = None if obs in (None, "MAX") else max(int(obs) - first + 1, 0)   # OBS= is a record number
        self._it = iter(lines)
        for _ in range(first - 1):
            if next(self._it, None) is None:
                break
        self.i = 0                      # records read
        self.min_len: int | None = None
        self.max_len: int | None = None
        self.lrecl = int(opts["LRECL"]) if "LRECL" in opts else None
        self.pad = bool(opts.get("PAD")) or recfm_of(opts) == "F"
        if self.pad and self.lrecl is None and recfm_of(opts) == "F":
            self.lrecl = DEFAULT_LRECL_F
        self.fixed = recfm_of(opts) == "F"
        self._ahead = self._pull()

    def _pull(self) -> str | None:
        if self.left is not None:
            if self.left <= 0:
                return None
            self.left -= 1
        return next(self._it, None)

    def next(self) -> str | None:
        line = self._ahead
        if line is None:
            return None
        self._ahead = self._pull()
        self.i += 1
        if not self.fixed:
            line = line.rstrip("\r")
        if self.lrecl:
            line = line[:self.lrecl]
        n = len(line)
        self.min_len = n if self.min_len is None else min(self.min_len, n)
        self.max_len = n if self.max_len is None else max(self.max_len, n)
        if self.lrecl and self.pad:
            line = line.ljust(self.lrecl)
        return line

    def at_end(self) -> bool:
        return self._ahead is None

    def close(self) -> None:
        close = getattr(self._it, "close", None)
        if close is not None:
            close()
