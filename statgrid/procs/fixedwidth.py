"""Fixed-width text parsed with numpy: the fast path of import_fixed (procs/importing.py).

The file is read in chunks of whole lines. A chunk of ASCII lines becomes a 2-D uint8 array
(a view of the bytes when every record has the same length; else padded with blanks), transposed
so that each byte column of the records is contiguous. A field is then a block of rows:
  - text ('$'): trimmed of blanks (as DuckDB trim: spaces only), blank = missing;
  - DOUBLE / BIGINT fields up to 15 bytes wide: values that are plain ([sign] digits [. digits],
    no inner blank; no point for BIGINT) are converted by vectorized arithmetic: the digits' integer
    value is exact in float64 (< 2**53), so one division by an exact power of ten rounds correctly —
    what DuckDB's cast gives; every other value (exponents, '1_000', odd characters) and every value
    of a wider field is cast by DuckDB from the same trimmed text, as the SQL path casts it;
  - any other type: DuckDB TRY_CAST of the trimmed text.
A chunk with non-ASCII bytes (positions are characters, not bytes) runs the SQL path's own
expressions over its lines. The line splitting is read_csv's: \\n or \\r\\n ends a line, a blank
line is a row of missing values, a last line without newline is a row.

`Fallback` is raised whenever the result might differ from the SQL path or needs its messages:
a bad value anywhere, a lone \\r, a \\x1f (read_csv's delimiter there), invalid UTF-8. The caller
then runs the SQL path on the whole file, which reports bad rows as it always has.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, Sequence

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

CHUNK_BYTES = 16 << 20            # input per batch: 16 MiB (~27 k person records)
_MAX_DIGITS = {"DOUBLE": 15, "BIGINT": 15}      # field width whose digits are exact in float64
_P10F = 10.0 ** np.arange(40)
_SP, _DOT, _MINUS, _PLUS, _NL, _CR = 32, 46, 45, 43, 10, 13


class Fallback(Exception):
    """The fast path cannot promise the SQL path's result: run the SQL path."""


def crlf_file(path: Path) -> bool:
    """Whether the file's first line ends with \\r\\n: read_csv then ends lines at \\r\\n or \\n; else at
    \\n, and a \\r before it makes an extra blank line (so the fast path steps back when it meets one)."""
    with open(path, "rb") as fh:
        last = b""
        while block := fh.read(1 << 16):
            nl = block.find(b"\n")
            if nl >= 0:
                return (block[nl - 1:nl] if nl else last) == b"\r"
            last = block[-1:]
    return False


def _lines(path: Path, skip: int, chunk_bytes: int, crlf: bool) -> Iterator[bytes]:
    """Chunks of whole lines (the last may end without a newline), the first `skip` lines dropped."""
    with open(path, "rb", buffering=0) as fh:
        carry = b""
        while True:
            block = fh.read(chunk_bytes)
            data = carry + block if carry else block
            if block:
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    carry = data
                    continue
                chunk, carry = data[:cut], data[cut:]
            else:
                chunk, carry = data, b""
            while skip and chunk:
                nl = chunk.find(b"\n")
                nl = len(chunk) if nl < 0 else nl
                if b"\r" in (chunk[:nl].removesuffix(b"\r") if crlf else chunk[:nl]):
                    raise Fallback("a \\r in the skipped lines")
                chunk, skip = chunk[nl + 1:], skip - 1
            if chunk:
                yield chunk
            if not block:
                return


def _line_bounds(buf: np.ndarray, crlf: bool, has_cr: bool) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive, without \\r\\n) of every line of a chunk."""
    nl = np.flatnonzero(buf == _NL)
    ends = nl if len(nl) and nl[-1] == len(buf) - 1 else np.append(nl, len(buf))
    starts = np.concatenate(([0], nl[:len(ends) - 1] + 1))
    if has_cr:
        cr = np.flatnonzero(buf == _CR)
        if not crlf or cr[-1] == len(buf) - 1 or not (buf[cr + 1] == _NL).all():
            raise Fallback("a \\r that is not part of the file's \\r\\n line ends")
        ends = ends.copy()
        ends[np.searchsorted(ends, cr + 1)] -= 1
    return starts.astype(np.int64), ends.astype(np.int64)


def _columns(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, width: int) -> np.ndarray:
    """(width × records) uint8: byte j of every record in row j, blanks past a record's end."""
    lens = ends - starts
    n = len(starts)
    if n and (lens == lens[0]).all() and lens[0] >= width and (n == 1 or (np.diff(starts) == starts[1] - starts[0]).all()):
        step = int(starts[1] - starts[0]) if n > 1 else int(lens[0]) + 1
        rows = np.lib.stride_tricks.as_strided(buf[int(starts[0]):], shape=(n, width), strides=(step, 1))
        out = np.empty((width, n), dtype=np.uint8)
        for i in range(0, n, 64):                 # in blocks that stay in cache: 3× a plain transpose
            out[:, i:i + 64] = rows[i:i + 64].T
        return out
    out = np.full((width, n), _SP, dtype=np.uint8)
    for j in range(width):
        has = lens > j
        out[j, has] = buf[starts[has] + j]
    return out


def _edges(blank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the leading and of the trailing blanks of each record's field (all of a blank field).
    A loop over the rows: numpy's logical_and.accumulate along axis 0 is ~20× slower."""
    return _run(blank), _run(blank[::-1])[::-1]


def _run(mask: np.ndarray, op=np.logical_and) -> np.ndarray:
    """op.accumulate(mask, axis=0), row by row."""
    out = np.empty_like(mask)
    out[0] = mask[0]
    for j in range(1, mask.shape[0]):
        op(out[j - 1], mask[j], out=out[j])
    return out


def _text(block: np.ndarray, rows: np.ndarray | None = None) -> pa.Array:
    """The field trimmed of blanks (spaces, as DuckDB's trim) as an Arrow string array; blank = null."""
    if rows is not None:
        block = block[:, rows]
    n = block.shape[1]
    lead, trail = _edges(block == _SP)
    keep = ~(lead | trail)
    lens = keep.sum(0, dtype=np.int32)
    data = block.T[keep.T]                        # row-major order: record after record
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lens, out=offsets[1:])
    valid = lens > 0
    n_null = n - int(np.count_nonzero(valid))
    if not n_null:
        return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data), bitmap, n_null)


def _positional(dz: np.ndarray) -> np.ndarray:
    """Σ dz[j]·10**(w-1-j) over the rows of a (w × n) block of digit values, as float64: exact while
    below 2**53 (w ≤ 15). Digits are paired first (uint16), so half as many rows become float64."""
    w = dz.shape[0]
    odd = w % 2
    if w < 4:
        return _P10F[w - 1::-1] @ dz.astype(np.float64) if w > 1 else dz[0].astype(np.float64)
    pairs = dz[odd::2].astype(np.uint16) * np.uint16(10) + dz[odd + 1::2]
    out = (100.0 ** np.arange(w // 2)[::-1]) @ pairs.astype(np.float64)
    if odd:
        out += dz[0] * _P10F[w - 1]
    return out


def _numbers(values: np.ndarray, blank: np.ndarray | None) -> pa.Array:
    """An Arrow int64/float64 array on the values' own buffer; blank rows null. (pa.array would import
    pandas, 0.4 s, to check the argument's kind.)"""
    typ = pa.int64() if values.dtype == np.int64 else pa.float64()
    n = len(values)
    data = pa.py_buffer(np.ascontiguousarray(values))
    if blank is None or not blank.any():
        return pa.Array.from_buffers(typ, n, [None, data])
    valid = ~blank
    return pa.Array.from_buffers(typ, n, [pa.py_buffer(np.packbits(valid, bitorder="little")), data],
                                 n - int(np.count_nonzero(valid)))


def _quick(block: np.ndarray, d: np.ndarray, digit: np.ndarray, typ: str):
    """(values, blank rows or None) for the two layouts of most fixed-width numbers, checked and converted
    in fewer passes than the general case: every byte a digit or the whole field blank (zero-padded
    codes), and right-aligned decimals with the point in one column ([blanks][sign]digits.digits).
    None when the block is not all like that (the general case then decides row by row)."""
    w, n = block.shape
    n_digit = digit.sum(0, dtype=np.int16)
    full = n_digit == w
    if full.all():
        return _positional(d), None
    empty = n_digit == 0
    if (full | empty).all():
        return ((_positional(d), empty) if (block[:, empty] == _SP).all() else None)
    if typ != "DOUBLE":
        return None
    blank = block[w - 1] == _SP
    filled = np.flatnonzero(~blank)
    if not len(filled):
        return None
    points = np.flatnonzero(block[:, filled[0]] == _DOT)
    if len(points) != 1 or not 1 <= points[0] < w - 1:
        return None
    p = int(points[0])
    if blank.any() and not (block[:, blank] == _SP).all():
        return None
    if not ((block[p] == _DOT) | blank).all() or not ((d[p + 1:] < 10).all(0) | blank).all():
        return None
    left, left_d = block[:p], d[:p]
    left_digit, left_blank = left_d < 10, left == _SP
    left_sign = (left == _MINUS) | (left == _PLUS)
    if not (left_digit | left_blank | left_sign).all():
        return None
    if p > 1 and (~left_blank[:-1] & (left_blank[1:] | left_sign[1:])).any():     # a blank or sign after a digit
        return None
    values = _positional(np.concatenate((left_d * left_digit, d[p + 1:]))) / _P10F[w - 1 - p]
    np.negative(values, out=values, where=(left == _MINUS).any(0))
    return values, blank


class Parser:
    """Turns chunks of the file into Arrow record batches of `schema`; one per import."""

    def __init__(self, specs: Sequence[tuple[str, int, int, str]], sql_exprs: dict[str, str], any_bad_sql: str):
        self.specs = list(specs)
        self.width = max(b for _, _, b, _ in specs)
        self.sql_exprs, self.any_bad_sql = sql_exprs, any_bad_sql
        self.con = duckdb.connect()
        self.con.execute("SET threads = 1")
        self.schema = pa.schema([(n, self._arrow_type(t)) for n, _, _, t in specs])

    def close(self) -> None:
        self.con.close()

    def _arrow_type(self, typ: str) -> pa.DataType:
        return {"VARCHAR": pa.string(), "DOUBLE": pa.float64(), "BIGINT": pa.int64()}.get(typ) or \
            self.con.sql(f"SELECT CAST(NULL AS {typ}) AS v").to_arrow_table().schema.field(0).type

    def _cast(self, strings: pa.Array, typ: str) -> pa.Array:
        """DuckDB TRY_CAST of trimmed text; a value that does not convert → Fallback."""
        self.con.register("__fw_text", pa.table({"x": strings}))
        try:
            tbl = self.con.sql(f"SELECT TRY_CAST(x AS {typ}) AS v, count(*) FILTER (WHERE x IS NOT NULL AND "
                                   f"TRY_CAST(x AS {typ}) IS NULL) OVER () AS bad FROM __fw_text").to_arrow_table()
        finally:
            self.con.unregister("__fw_text")
        if len(tbl) and tbl.column("bad")[0].as_py():
            raise Fallback("a value that does not convert")
        return tbl.column("v").combine_chunks()

    def _number(self, block: np.ndarray, typ: str) -> pa.Array:
        """A DOUBLE or BIGINT field: plain values by arithmetic, the others cast by DuckDB."""
        w, n = block.shape
        if w > _MAX_DIGITS[typ]:
            return self._cast(_text(block), typ)
        d = block - np.uint8(48)
        digit = d < 10
        quick = _quick(block, d, digit, typ)
        if quick is not None:
            values, blank = quick
            values = values.astype(np.int64) if typ == "BIGINT" else values
            return _numbers(values, blank)
        blank = block == _SP
        n_blank = blank.sum(0, dtype=np.int16)
        lead_m, trail_m = _edges(blank)
        lead, trail = lead_m.sum(0, dtype=np.int16), trail_m.sum(0, dtype=np.int16)
        count = w - n_blank
        n_digit = digit.sum(0, dtype=np.int16)
        plain = (lead + trail + count == w) & (n_digit >= 1)     # one run of non-blanks, with a digit
        other = count - n_digit
        dz = d * digit
        minus = scale = None
        if other.any():
            dot = block == _DOT
            sign = (block == _MINUS) | (block == _PLUS)
            n_dot, n_sign = dot.sum(0, dtype=np.int16), sign.sum(0, dtype=np.int16)
            cols, first = np.arange(n), np.minimum(lead, w - 1)
            sign_first = sign[first, cols]
            plain &= (other == n_dot + n_sign) & (n_sign <= 1) & ((n_sign == 0) | sign_first)
            plain &= (n_dot == 0) if typ == "BIGINT" else (n_dot <= 1)
            minus = sign_first & (block[first, cols] == _MINUS)
            if typ == "DOUBLE" and n_dot.any():
                # drop the point: the digits before it move one place right, so the digits are one number
                after = _run(dot, np.logical_or)                 # at or after the point
                has = n_dot > 0
                shifted = np.empty_like(dz)
                shifted[0] = 0
                shifted[1:] = dz[:-1]
                dz = np.where((~after | dot) & has, shifted, dz)
                scale = np.where(has, after.sum(0, dtype=np.int16) - trail - 1, 0)
        mant = _positional(dz) / _P10F[trail]         # exact: a whole number times 10**trail
        if typ == "BIGINT":
            values = mant.astype(np.int64)
        else:
            values = mant / _P10F[scale] if scale is not None else mant
        if minus is not None:
            np.negative(values, out=values, where=minus)
        is_blank = n_blank == w
        odd = np.flatnonzero(~plain & ~is_blank)
        if len(odd):
            values[odd] = self._cast(_text(block, odd), typ).to_numpy(zero_copy_only=False)
        return _numbers(values, is_blank)

    def _batch_sql(self, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> pa.RecordBatch:
        """A chunk with non-ASCII text: the SQL path's own expressions over its lines."""
        lens = ends - starts
        keep = np.zeros(len(buf) + 1, dtype=np.int32)
        np.add.at(keep, starts, 1)
        np.add.at(keep, ends, -1)
        data = buf[np.cumsum(keep[:-1]).astype(bool)]
        offsets = np.zeros(len(starts) + 1, dtype=np.int32)
        np.cumsum(lens, out=offsets[1:])
        lines = pa.StringArray.from_buffers(len(starts), pa.py_buffer(offsets), pa.py_buffer(data))
        try:
            lines.validate(full=True)
        except pa.ArrowInvalid:
            raise Fallback("text that is not UTF-8") from None
        self.con.register("__fw_lines", pa.table({"line": lines}))
        try:
            select = ", ".join(self.sql_exprs[n] for n, *_ in self.specs)
            tbl = self.con.sql(f"SELECT {select}, {self.any_bad_sql} AS __bad FROM __fw_lines").to_arrow_table()
        finally:
            self.con.unregister("__fw_lines")
        if pc.any(tbl.column("__bad")).as_py():
            raise Fallback("a value that does not convert")
        out = pa.Table.from_arrays(tbl.columns[:-1], names=self.schema.names).cast(self.schema)
        return pa.RecordBatch.from_arrays([c.combine_chunks() for c in out.columns], schema=self.schema)

    def batch(self, chunk: bytes, crlf: bool = False) -> pa.RecordBatch:
        buf = np.frombuffer(chunk, dtype=np.uint8)
        if b"\x1f" in chunk:
            raise Fallback("a \\x1f byte")
        starts, ends = _line_bounds(buf, crlf, b"\r" in chunk)
        if buf.max(initial=0) >= 0x80:
            return self._batch_sql(buf, starts, ends)
        cols = _columns(buf, starts, ends, self.width)
        arrays = []
        for name, a, b, typ in self.specs:
            block = cols[a - 1:b]
            if typ == "VARCHAR":
                arrays.append(_text(block))
            elif typ in _MAX_DIGITS:
                arrays.append(self._number(block, typ))
            else:
                arrays.append(self._cast(_text(block), typ))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def reader(self, path: Path, skip: int, chunk_bytes: int | None = None) -> pa.RecordBatchReader:
        crlf = crlf_file(path)
        chunks = _lines(path, skip, chunk_bytes or CHUNK_BYTES, crlf)
        return pa.RecordBatchReader.from_batches(self.schema, (self.batch(c, crlf) for c in chunks))
