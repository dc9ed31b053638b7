"""How a session writes its data sets: SAS's BUFSIZE= and COMPRESS= as Parquet settings.

BUFSIZE (bytes) is the size of the I/O requests a session's data-set reads and writes issue. Measured
here (strace of DuckDB 2.0 reading and writing Parquet, and /proc/diskstats on a cold file): DuckDB writes
one data page per column chunk with one pwrite (page header + data) and reads a column chunk with one
pread, and a cold read reaches the device in requests of that size (3 of 21 columns of a 1 M-row file:
2,048-row groups → 1,470 device reads of 20.6 KiB; 32,768-row groups → 94–119 reads of 203–255 KiB).
So a column chunk is the request: BUFSIZE / 8 rows per row group (8 bytes: a SAS number, a DOUBLE)
makes a numeric column's requests BUFSIZE bytes uncompressed. DuckDB's smallest row group is one
vector (2,048 rows), so BUFSIZE below 16K gives 16 KiB requests (16K is the floor: 8K writes 16 KiB);
compressed or narrower columns make smaller requests. Reads use the row groups a file was written with,
as SAS reads a data set in the page size it was created with.

COMPRESS: SAS's NO | YES | CHAR | BINARY. YES and CHAR are SAS's run-length coding (cheap, for
character data) → Parquet snappy; BINARY is SAS's RDC (stronger, for numbers) → zstd; NO → uncompressed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from statgrid.config.units import KIB, format_size, parse_size_bytes

DUCKDB_VECTOR_ROWS = 2048                  # DuckDB's STANDARD_VECTOR_SIZE: row groups are whole vectors
NUMBER_BYTES = 8                           # a SAS number (DOUBLE)
MIN_BUFSIZE_BYTES = 4 * KIB
MAX_BUFSIZE_BYTES = 64 * KIB**2            # 8 M rows per row group: past it one group is a whole file
DEFAULT_BUFSIZE_BYTES = 256 * KIB          # 004: BUFSIZE 256K cut IOPS and raised MB/s per core
COMPRESS_CODECS = {"no": "uncompressed", "yes": "snappy", "char": "snappy", "binary": "zstd"}
DEFAULT_COMPRESS = "binary"                # zstd, as statgrid always wrote (README: why not SAS's NO)


@dataclass(frozen=True)
class DatasetIO:
    """The write settings of one data set.

    bufsize_bytes: target bytes of one column chunk of 8-byte numbers (one I/O request).
    compress: 'no', 'yes', 'char' or 'binary' (SAS's COMPRESS= values, lower case).
    """

    bufsize_bytes: int = DEFAULT_BUFSIZE_BYTES
    compress: str = DEFAULT_COMPRESS

    @property
    def row_group_rows(self) -> int:
        """Rows per Parquet row group: bufsize / 8 rounded down to whole DuckDB vectors (at least one)."""
        return row_group_rows(self.bufsize_bytes)

    @property
    def codec(self) -> str:
        """The Parquet codec DuckDB's COPY takes (uncompressed, snappy, zstd)."""
        return COMPRESS_CODECS[self.compress]


def row_group_rows(bufsize_bytes: int) -> int:
    vectors = max(1, bufsize_bytes // NUMBER_BYTES // DUCKDB_VECTOR_ROWS)
    return vectors * DUCKDB_VECTOR_ROWS


def parse_bufsize(value: Any) -> int:
    """grid.toml / --option bufsize: a size ('256k', '1M', '65536B', or digits as SAS's bytes) → bytes.

    A TOML number is refused: bufsize counted rows per Parquet row group before it counted bytes, so
    `bufsize = 122880` in an old grid.toml must not silently become 120 KiB. Digits typed as text (`-o
    bufsize=65536`, as `-bufsize 65536` and `OPTIONS BUFSIZE=65536`) are bytes, as in SAS."""
    if isinstance(value, bool):
        raise ValueError('a size in bytes with its unit, e.g. "256k"')
    if isinstance(value, int):
        rows = int(value)
        old = format_size(min(max(rows * NUMBER_BYTES, MIN_BUFSIZE_BYTES), MAX_BUFSIZE_BYTES))
        raise ValueError(f'a size in bytes with its unit, e.g. "256k" (bufsize is SAS\'s BUFSIZE in bytes now, '
                         f'not rows per row group; {rows} rows of 8-byte numbers is "{old}": write '
                         f'bufsize = "{old}", or "256k" as seed 004 advises)')
    try:
        n = parse_size_bytes(value)
    except ValueError:
        raise ValueError('a size in bytes with its unit, e.g. "8k", "256k" or "1M"') from None
    if not MIN_BUFSIZE_BYTES <= n <= MAX_BUFSIZE_BYTES:
        raise ValueError(f'a size from {format_size(MIN_BUFSIZE_BYTES)} to {format_size(MAX_BUFSIZE_BYTES)}, '
                         'e.g. "256k"')
    return n


def parse_compress(value: Any) -> str:
    """COMPRESS: no | yes | char | binary (SAS's values; true/false as yes/no) → lower-case name."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value).strip().lower()
    if text not in COMPRESS_CODECS:
        raise ValueError('one of "no", "yes", "char", "binary" (SAS\'s COMPRESS=: YES/CHAR → snappy, '
                         'BINARY → zstd, NO → uncompressed)')
    return text


def parse_sortsize(value: Any) -> int:
    """SORTSIZE: memory for a sort in bytes ('1G'); 0 = the session's memsize."""
    if isinstance(value, str) and value.strip().upper() == "MAX":
        return 0
    return parse_size_bytes(value)
