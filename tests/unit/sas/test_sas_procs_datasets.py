"""PROC DATASETS and PROC DELETE over real Parquet data sets in tmp libraries through a real session:
DELETE, CHANGE, EXCHANGE, SAVE, KILL, MODIFY (LABEL/FORMAT/INFORMAT/RENAME into the column metadata),
APPEND (BASE= DATA= FORCE), COPY with SELECT/EXCLUDE, CONTENTS, INDEX; SAS's NOTEs and WARNINGs.
Expected rows are read back with DuckDB from the files; messages are SAS 9.4's wording."""
from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq

from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


def run_sas(session, text):
    t, lst = io.StringIO(), io.StringIO()
    log = SasLog(SessionLog(text=t, jsonl=io.StringIO(), listing=lst))
    code = run_program(text, session, log)
    return code, " ".join(x.strip() for x in t.getvalue().split("\n")), lst.getvalue()


def make_libs(session, tmp_path, members=("a", "b", "c")):
    lib, out = tmp_path / "lib", tmp_path / "out"
    lib.mkdir()
    out.mkdir()
    for i, m in enumerate(members):
        pq.write_table(pa.table({"x": [float(i + 1)], "y": ["v" * (i + 1)]}), lib / f"{m}.parquet")
    session.libname("t", lib)
    session.libname("o", out)
    return lib, out


def rows(session, path):
    return session.execute(f"SELECT * FROM read_parquet('{path}')").fetchall()


def test_delete_change_exchange_save(session, tmp_path):
    lib, _ = make_libs(session, tmp_path, ("a", "b", "c", "d", "e"))
    code, log, lst = run_sas(session, """proc datasets library=t nolist;
  delete a nosuch;
  change b=b2;
  exchange c=d;
quit;
proc datasets lib=t nolist; save b2 c; quit;""")
    assert code == 0, log
    assert "NOTE: Deleting T.A (memtype=DATA)." in log
    assert "WARNING: The file T.NOSUCH (memtype=DATA) was not found, but appears on a DELETE statement." in log
    assert "NOTE: Changing the name T.B to T.B2 (memtype=DATA)." in log
    assert "NOTE: Exchanging the names T.C and T.D (memtype=DATA)." in log
    assert "NOTE: Deleting T.D (memtype=DATA)." in log and "NOTE: Deleting T.E (memtype=DATA)." in log
    assert sorted(p.name for p in lib.iterdir()) == ["b2.parquet", "c.parquet"]
    assert rows(session, lib / "c.parquet") == [(4.0, "vvvv")]          # D's data under C's name
    assert lst == ""                                                  # NOLIST


def test_change_to_existing_name_is_an_error(session, tmp_path):
    lib, _ = make_libs(session, tmp_path)
    code, log, _ = run_sas(session, "proc datasets lib=t nolist; change a=b; quit;")
    assert code == 1 and "A file named T.B.DATA already exists" in log
    assert rows(session, lib / "a.parquet") == [(1.0, "v")]


def test_modify_label_format_rename_and_directory_listing(session, tmp_path):
    lib, _ = make_libs(session, tmp_path)
    code, log, lst = run_sas(session, """proc datasets lib=t;
  modify a(label='First one');
    label x='The X';
    format x comma8.2 y $char4.;
    informat x 8.;
    rename y=why;
    attrib why label='Why' format=$char4.;
  contents data=a;
run;
quit;""")
    assert code == 0, log
    assert "NOTE: Renaming variable y to why." in log
    schema = pq.read_schema(lib / "a.parquet")
    assert schema.names == ["x", "why"]
    meta = json.loads(schema.metadata[b"statgrid.columns"])
    assert meta == {"x": {"label": "The X", "format": "COMMA8.2", "informat": "8."}, "why": {"format": "$CHAR4.", "label": "Why"}}
    assert schema.metadata[b"statgrid.label"] == b"First one"
    assert rows(session, lib / "a.parquet") == [(1.0, "v")]
    words = [ln.split() for ln in lst.split("\n")]
    assert ["Libref", "T"] in words and ["1", "A", "DATA"] == [w for w in words if w[:2] == ["1", "A"]][0][:3]
    assert ["The", "DATASETS", "Procedure"] in words
    assert ["#", "Variable", "Type", "Len", "Format", "Informat", "Label"] in words
    assert ["1", "x", "Num", "8", "COMMA8.2", "8.", "The", "X"] in words
    # written without a SAS length: the longest value's ('v': 1), as PROC IMPORT would size it
    assert ["2", "why", "Char", "1", "$CHAR4.", "Why"] in words


def test_append_force_and_copy_select_exclude(session, tmp_path):
    lib, out = make_libs(session, tmp_path)
    a = pa.table({"x": [1.0], "y": ["v"]})
    pq.write_table(a.replace_schema_metadata({"statgrid.columns": '{"y": {"length": 4}}'}), lib / "a.parquet")
    new = pa.table({"x": [7.0, 8.0], "z": [1.0, 2.0], "y": ["long text", "t"]})
    pq.write_table(new.replace_schema_metadata({"statgrid.columns": '{"y": {"length": 9}}'}), lib / "new.parquet")
    code, log, _ = run_sas(session, "proc datasets lib=t nolist; append base=a data=new; quit;")
    assert code == 1
    assert "WARNING: Variable z was not found on BASE file." in log
    assert "No appending done because of anomalies listed above. Use FORCE option to append these files" in log
    assert rows(session, lib / "a.parquet") == [(1.0, "v")]
    code, log, _ = run_sas(session, """proc datasets lib=t nolist;
  append base=a data=new force;
  append base=fresh data=b;
  copy out=o;
    select a fresh;
  copy out=o move;
    exclude a fresh new;
quit;""")
    assert code == 0, log
    # FORCE: z dropped, y truncated to BASE's length 4
    assert rows(session, lib / "a.parquet") == [(1.0, "v"), (7.0, "long"), (8.0, "t")]
    assert "WARNING: Variable y has different lengths on BASE and DATA files (BASE 4 DATA 9)." in log
    assert "NOTE: Appending T.NEW to T.A." in log and "NOTE: 2 observations added." in log
    assert "NOTE: The data set T.A has 3 observations and 2 variables." in log
    assert "NOTE: BASE data set does not exist. DATA file is being copied to BASE file." in log
    assert rows(session, lib / "fresh.parquet") == [(2.0, "vv")]
    assert sorted(p.name for p in out.iterdir()) == ["a.parquet", "b.parquet", "c.parquet", "fresh.parquet"]
    assert not (lib / "b.parquet").exists() and not (lib / "c.parquet").exists()      # MOVE
    assert rows(session, out / "a.parquet") == rows(session, lib / "a.parquet")
    assert "NOTE: Copying T.A to O.A (memtype=DATA)." in log and "NOTE: Moving T.B to O.B (memtype=DATA)." in log


def test_kill_index_and_proc_delete(session, tmp_path):
    lib, out = make_libs(session, tmp_path)
    (lib / "formats.fmtcat.json").write_text('{"statgrid_format_catalog": 1, "formats": []}')
    code, log, _ = run_sas(session, """proc datasets lib=t kill nolist; quit;
proc datasets lib=o nolist; index create x; quit;""")
    assert code == 0, log
    assert list(lib.iterdir()) == []
    assert "NOTE: Deleting T.FORMATS (memtype=CATALOG)." in log
    assert "accepted and ignored" in log
    for m in ("p", "q", "r"):
        pq.write_table(pa.table({"x": [1.0]}), out / f"{m}.parquet")
    code, log, _ = run_sas(session, "proc delete data=o.p o.q o.nosuch; run;")
    assert code == 0, log
    assert "NOTE: Deleting O.P (memtype=DATA)." in log and "NOTE: Deleting O.Q (memtype=DATA)." in log
    assert "WARNING: File O.NOSUCH.DATA does not exist." in log
    assert sorted(p.name for p in out.iterdir()) == ["r.parquet"]


def test_errors_name_the_statement(session, tmp_path):
    make_libs(session, tmp_path)
    code, log, _ = run_sas(session, "proc datasets lib=nolib; quit;")
    assert code == 1 and "Libref NOLIB is not assigned" in log
    code, log, _ = run_sas(session, "proc datasets lib=t nolist;\n  frobnicate a;\nquit;")
    assert code == 1 and "Statement FROBNICATE is not valid" in log and "(line 2, column 3)" in log
    code, log, _ = run_sas(session, "proc datasets lib=t nolist kil; quit;")
    assert code == 1 and "The option or parameter kil is not recognized" in log
