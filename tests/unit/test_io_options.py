"""SAS's BUFSIZE, SORTSIZE and COMPRESS as session options (config/dataset_io.py): parsing, the Parquet they
write, the paths that set them (grid.toml, -o, -bufsize, OPTIONS, data set options) and the request size a
session's reads issue (its own /proc/self/io: read calls and bytes)."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from statgrid.config import load_config
from statgrid.config.dataset_io import DatasetIO, parse_bufsize, row_group_rows
from statgrid.errors import ConfigError
from statgrid.libraries import parquet_copy_sql
from statgrid.sas.invocation import parse_invocation
from statgrid.session import Session
from tests.unit.sas.standins import run_sas

pytestmark = pytest.mark.unit
KIB = 1024


def layout(path):
    """(row groups, rows of the first, codec of its first column) of a Parquet file."""
    md = pq.read_metadata(path)
    return md.num_row_groups, md.row_group(0).num_rows, md.row_group(0).column(0).compression


@pytest.mark.parametrize("text, rows", [("256k", 32768), ("8k", 2048), ("16K", 2048), ("1M", 131072),
                                        ("300k", 36864), ("65536B", 8192)])
def test_bufsize_bytes_to_rows_per_row_group(text, rows):
    # by hand: bytes / 8 (a DOUBLE) rounded down to whole 2,048-row vectors, at least one
    assert row_group_rows(parse_bufsize(text)) == rows


@pytest.mark.parametrize("value, words", [(122880, '983040 is not'), (65536, '"512K"'), ("1k", "from 4K to 64M"),
                                          ("lots", '"8k", "256k"'), (True, "with its unit")])
def test_bufsize_refuses_row_counts_and_bad_sizes(value, words):
    with pytest.raises(ValueError) as exc:
        parse_bufsize(value)
    if words != '983040 is not':
        assert words in str(exc.value)
    else:   # 122880 rows (the old default) × 8 bytes = 960K
        assert '"960K"' in str(exc.value) and "not rows per row group" in str(exc.value)


def test_digits_typed_as_text_are_bytes_as_in_sas():
    """-o bufsize=65536 means bytes, as -bufsize 65536 and OPTIONS BUFSIZE=65536 do (only a TOML number, an old
    grid.toml's row count, is refused)."""
    assert parse_bufsize("65536") == 65536 and parse_bufsize(" 262144 ") == 256 * KIB


def test_grid_toml_old_row_count_names_value_and_fix(tmp_path):
    p = tmp_path / "grid.toml"
    p.write_text("[session]\nbufsize = 122880\n")
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    assert "session.bufsize = 122880 is not allowed" in str(exc.value) and 'bufsize = "960K"' in str(exc.value)


@pytest.mark.parametrize("compress, codec", [("no", "UNCOMPRESSED"), ("yes", "SNAPPY"), ("char", "SNAPPY"),
                                             ("binary", "ZSTD")])
def test_session_writes_bufsize_row_groups_with_compress_codec(home, captured, compress, codec):
    with Session(load_config(), {"bufsize": "16k", "compress": compress}, log=captured.log()) as s:
        s.sql("CREATE TABLE work.t AS SELECT range::DOUBLE AS x FROM range(10000)")
        # 10,000 rows in groups of 2,048 → 5 groups (4 full, one of 1,808)
        assert layout(s.ref("work.t").path) == (5, 2048, codec)


def test_parquet_copy_sql_text():
    assert parquet_copy_sql("SELECT 1", "/d/a.parquet", DatasetIO(8 * KIB, "no")) == (
        "COPY (SELECT 1) TO '/d/a.parquet' (FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 2048)")
    assert parquet_copy_sql("SELECT 1", "/d/a.parquet", 4096).endswith("COMPRESSION zstd, ROW_GROUP_SIZE 4096)")


def test_sas_options_statement_and_data_set_options_drive_the_writes(session, tmp_path):
    session.libname("t", tmp_path)
    code, log, _ = run_sas(session, """options bufsize=16k compress=no;
data t.a; do i = 1 to 5000; x = i * 2; output; end; run;
data t.b(bufsize=65536 compress=binary); set t.a; run;
data t.c(bufsize=16k); set t.a; run;
%put BUF=%sysfunc(getoption(bufsize)) COMP=%sysfunc(getoption(compress));
options bufsize=0;
%put BUF0=%sysfunc(getoption(bufsize));
""")
    assert code == 0, log
    assert (session.options.bufsize_bytes, session.options.compress) == (256 * KIB, "no")   # BUFSIZE=0: grid.toml's
    assert "BUF=16384 COMP=NO" in log and f"BUF0={256 * KIB}" in log
    assert layout(tmp_path / "a.parquet")[1:] == (2048, "UNCOMPRESSED")     # 16K / 8 = 2,048 rows
    assert layout(tmp_path / "b.parquet")[1:] == (5000, "ZSTD")             # 64K / 8 = 8,192 ≥ 5,000 rows
    assert layout(tmp_path / "c.parquet")[1:] == (2048, "UNCOMPRESSED")     # bufsize=16k as SAS writes it


def test_bad_data_set_compress_is_an_error_at_the_option(session, tmp_path):
    session.libname("t", tmp_path)
    code, log, _ = run_sas(session, "data t.c(compress=rle); x = 1; run;")
    assert code != 0 and "Invalid value for COMPRESS= data set option" in log and "RLE" in log


def test_invocation_bufsize_and_sortsize_are_session_options():
    inv = parse_invocation(["-bufsize", "8k", "-sortsize", "64M"])
    assert inv.session_options == {"bufsize": "8192B", "sortsize": f"{64 * KIB * KIB}B"}
    assert parse_invocation(["-bufsize", "0"]).session_options == {}      # SAS's 0: the grid.toml value


def test_sortsize_is_the_memory_limit_while_sorting_only(home, captured):
    with Session(load_config(), {"memsize": "512M", "sortsize": "64M"}, log=captured.log()) as s:
        s.sql("CREATE TABLE work.a AS SELECT (range * 7919) % 1000 AS k FROM range(5000)")
        seen = []
        real = s.con

        class Recorder:
            def execute(self, sql, *a):
                seen.append(sql)
                return real.execute(sql, *a)

            def __getattr__(self, name):
                return getattr(real, name)
        s.con = Recorder()
        try:
            s.sort("work.a", by="k", out="work.b")
        finally:
            s.con = real
        limits = [q for q in seen if q.startswith("SET memory_limit")]
        assert limits == [f"SET memory_limit = '{64 * KIB * KIB}B'", f"SET memory_limit = '{512 * KIB * KIB}B'"]
        k = pq.read_table(s.ref("work.b").path)["k"].to_pylist()
        assert len(k) == 5000 and k == sorted(k) and (k[0], k[-1]) == (0, 999)


def _read_calls(path_sql: str, s) -> tuple[int, int]:
    """(read calls, bytes read) of this process while DuckDB reads two numeric columns of `path_sql` (not
    side by side in the file: DuckDB reads adjacent column chunks in one call)."""
    def io():
        fields = dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())
        return int(fields["syscr"]), int(fields["rchar"])
    c0, b0 = io()
    s.execute(f"SELECT sum(x), sum(z) FROM read_parquet('{path_sql}')").fetchall()
    c1, b1 = io()
    return c1 - c0, b1 - b0


def test_reads_issue_requests_of_bufsize(home, captured):
    """A session reading a data set issues one read per column chunk: 200,000 rows × 2 numeric columns is
    3.2 MB; at 16K (2,048-row groups) ≥ 98 groups × 2 columns ≈ 196 reads of ~16 KiB, at 256K (32,768 rows)
    7 groups × 2 ≈ 14 reads of ~256 KiB (plus a few for the footer)."""
    per_call = {}
    for buf in ("16k", "256k"):
        with Session(load_config(), {"bufsize": buf, "compress": "no", "threads": 1}, log=captured.log()) as s:
            s.sql("CREATE TABLE work.r AS SELECT random() AS x, random() AS y, random() AS z FROM range(200000)")
            calls, nbytes = _read_calls(str(s.ref("work.r").path), s)
            per_call[buf] = (calls, nbytes / calls)
    assert 196 <= per_call["16k"][0] <= 196 + 20 and 12 * KIB <= per_call["16k"][1] <= 20 * KIB
    assert 14 <= per_call["256k"][0] <= 14 + 20 and per_call["256k"][1] >= 96 * KIB
