"""Defects found by running analysts' style programs (helper dsmoke), each against SAS's documented
behaviour; expected values by hand from the programs' data."""
from __future__ import annotations

from tests.unit.sas.standins import rows, run_sas


def run(session, text):
    code, log, _ = run_sas(session, text, procs={}, header=False)
    return code, log


def test_line_pointer_hash_n_reads_the_observations_records(session, tmp_path):
    # SAS 9.4 Statements: INPUT, "Line Pointer Controls": #n goes to record n of the observation's records;
    # their number is INFILE N=, by default the highest #n (here 3); the file ends inside the third
    # observation: LOST CARD, that observation is not written. `/` reads the next record.
    f = tmp_path / "multi.txt"
    f.write_text("Smith\nDept A 12\n100\nJones\nDept B xx\n200\nOdd\n")
    code, log = run(session, f"""data m1;
  infile '{f}';
  input #2 dept $ 1-6 n 8-9 #1 name $ #3 sal;
run;
data m2;
  infile '{f}' n=3;
  input name $ / dept $ 1-6 n 8-9;
run;
data m3; infile '{f}'; input name $ / / sal; run;
data m4;
  input #1 name $ 1-5 #2 @3 score 2.;
datalines;
alice
  95
bob
  80
;""")
    assert code == 0, log
    assert rows(session, "work.m1") == [{"dept": "Dept A", "n": 12.0, "name": "Smith", "sal": 100.0},
                                        {"dept": "Dept B", "n": None, "name": "Jones", "sal": 200.0}]
    # the invalid value is on the file's 5th record (the 2nd of the 2nd observation)
    assert "NOTE: Invalid data for n in line 5 8-9." in log
    # N=3 with `/` only: records 3 and 6 are part of the observations, not read into a variable
    assert rows(session, "work.m2") == [{"name": "Smith", "dept": "Dept A", "n": 12.0},
                                        {"name": "Jones", "dept": "Dept B", "n": None}]
    assert rows(session, "work.m3") == [{"name": "Smith", "sal": 100.0}, {"name": "Jones", "sal": 200.0}]
    assert log.count("NOTE: LOST CARD.") == 3
    assert rows(session, "work.m4") == [{"name": "alice", "score": 95.0}, {"name": "bob", "score": 80.0}]


def test_file_dlm_dsd_mod_and_the_files_notes(session, tmp_path):
    # SAS 9.4 Statements: FILE, DLM= (list output's values separated by it), DSD (a comma by default; a value
    # holding the delimiter or a double quote in double quotes, its quotes doubled), MOD (appended to the
    # file); NOTEs "The file X is:" and "N records were written to the file X." with the record lengths.
    out = tmp_path / "o.csv"
    code, log = run(session, f"""filename outf '{out}';
data _null_;
  length name $ 8 note $ 10;
  input name $ age note $ 12-21;
  file outf dlm=',';
  put name age;
datalines;
Alfred 14  plain
Alice  13  a,b "q"
;
data _null_;
  length name $ 8 note $ 10;
  input name $ age note $ 12-21;
  file outf mod dsd;
  put name @;
  put note age;
datalines;
Alfred 14  plain
Alice  13  a,b "q"
;""")
    assert code == 0, log
    assert out.read_text() == 'Alfred,14\nAlice,13\nAlfred,plain,14\nAlice,"a,b ""q""",13\n'
    assert log.count("NOTE: The file OUTF is:") == 2
    assert ("NOTE: 2 records were written to the file OUTF.\n      The minimum record length was 8.\n"
            "      The maximum record length was 9.") in log
    assert ("NOTE: 2 records were written to the file OUTF.\n      The minimum record length was 15.\n"
            "      The maximum record length was 20.") in log


def test_put_modified_list_and_column_output_with_decimals(session, tmp_path):
    # SAS 9.4 Statements: PUT, "Modified List Output": `x :fmt.` writes the formatted value without its
    # blanks, a blank after it; "Column Output": `x 10-20 .2` right-aligns x with 2 decimals in columns 10-20
    out = tmp_path / "p.txt"
    code, log = run(session, f"""data _null_;
  file '{out}';
  x = 1234.5; y = 7;
  put x :comma10.2 y :3. 'end';
  put (x y) (:8.1);
  put x 10-20 .2 '|';
  put 'a' y 5-6 'b';
run;""")
    assert code == 0, log
    assert out.read_text().split("\n") == ["1,234.50 7 end", "1234.5 7.0", " " * 9 + "    1234.50|",
                                           "a    7b", ""]
    assert "NOTE: 4 records were written to the file" in log


def test_step_notes_in_sas_order(session):
    # SAS writes the conversion NOTE when the step is compiled (before its PUT lines), the missing-values
    # NOTE after the run and before "There were N observations read", then the data set's NOTE
    code, log = run(session, """data src; do age = 1 to 2; output; end; run;
data a;
  set src;
  x = age + .;
  c = '5';
  y = c * 2;
  put 'row ' age;
run;""")
    assert code == 0, log
    step = log[log.index("data a;"):]
    order = [step.index(s) for s in ("NOTE: Character values have been converted", "row 1", "row 2",
                                     "NOTE: Missing values were generated",
                                     "NOTE: There were 2 observations read from the data set WORK.SRC.",
                                     "NOTE: The data set WORK.A has 2 observations")]
    assert order == sorted(order), step


def test_question_mark_modifiers_of_input_function_and_statement(session):
    # SAS 9.4 Functions: INPUT and Statements: INPUT, "? | ??": ? suppresses the invalid-data/argument NOTE
    # (and the record), _ERROR_ still set to 1; ?? also keeps _ERROR_ at 0. Was a syntax ERROR. (b 1.: the list value before it leaves the pointer past its delimiter.)
    code, log = run(session, """data q;
  input a ?? b ? 1. c;
  e1 = _error_;
  n1 = input('x1', ?? 8.);
  e2 = _error_;
  n2 = input('12', ? 8.);
  datalines;
x 1 2
3 y 4
;
data r;
  n3 = input('x1', ? 8.);
  e3 = _error_;
run;""")
    assert code == 0, log
    assert rows(session, "work.q") == [
        {"a": None, "b": 1.0, "c": 2.0, "e1": 0.0, "n1": None, "e2": 0.0, "n2": 12.0},
        {"a": 3.0, "b": None, "c": 4.0, "e1": 1.0, "n1": None, "e2": 1.0, "n2": 12.0}]
    assert rows(session, "work.r") == [{"n3": None, "e3": 1.0}]
    assert "Invalid data" not in log and "Invalid argument" not in log


def test_include_after_a_comment(session, tmp_path):
    # a program's banner comment before %INCLUDE: SAS reads a comment as a blank, so the statement is
    # %INCLUDE (it was "Statement is not valid … at '%'")
    inc = tmp_path / "inc.sas"
    inc.write_text("%let incvar = included;\ndata incd; x = 1; run;\n")
    code, log = run(session, f"""/*******************************
 * banner ; with semicolons
 *******************************/
%include '{inc}';
/* again */ %inc '{inc}' ;
%put got=&incvar;""")
    assert code == 0, log
    assert "got=included" in log and "ERROR" not in log
    assert log.count("NOTE: The data set WORK.INCD has 1 observations and 1 variables.") == 2


def test_triple_ampersand_reference_rescans_the_text_after_it(session):
    # SAS 9.4 Macro Language, "Referencing Macro Variables Indirectly": &&&pre.1 → (&& → &, &pre. → n, 1)
    # → &n1 → alpha; &&&pre..1 → &n.1 → N not resolved; &&v&i._x → &v1_x (the _x is scanned with it)
    code, log = run(session, """%let n1 = alpha; %let pre = n; %let i = 1; %let v1 = one; %let v1_x = onex;
%put A=&&&pre.1;
%put B=&&&pre..1;
%put C=&&v&i._x;
%put D=&&v&i.._x;""")
    assert "A=alpha" in log
    assert "B=&n.1" in log and "WARNING: Apparent symbolic reference N not resolved." in log
    assert "C=onex" in log and "D=one_x" in log
    code, log = run(session, """%let lib1 = work; %let i = 1;
%put E=&&lib&i...dsn F=&&lib&i..dsn;""")
    assert "E=work.dsn F=workdsn" in log


def test_more_sas_formats(session, tmp_path):
    # SAS 9.4 Formats and Informats: YYMMDDxw. & co., WEEKDATE., DOWNAME., YYQ., JULIAN., DTDATE., E8601DA./
    # E8601DT., TIMEAMPM., COMMAX., NEGPAREN., PVALUE., HEX., ROMAN., SSN. were "not found" ERRORs.
    # 05JUL2021 is a Monday, day 186 of 2021; 13:04:05 is 47045 seconds.
    out = tmp_path / "f.txt"
    code, log = run(session, f"""data _null_;
  file '{out}';
  d = '05jul2021'd; dt = '05jul2021:13:04:05'dt; t = '13:04:05't; n = -1234.5;
  put d yymmddn8. +1 d mmddyys10. +1 d ddmmyyp10. +1 d yymmddd10.;
  put d weekdate. / d weekdate17. / d downame. / d worddatx.;
  put d yyq6. +1 d julian7. +1 d year2. +1 d monname3. +1 d qtr.;
  put dt dtdate9. +1 dt e8601dt. +1 dt b8601dt. +1 d e8601da. +1 t timeampm11.;
  put n commax10.2 +1 n negparen10.2 +1 n dollarx11.2;
  p = 0.00001; q = 0.0456; i = 255; s = 123456789;
  put p pvalue6.4 +1 q pvalue6.4 +1 i hex4. +1 i roman6. +1 s ssn11.;
run;""")
    assert code == 0, log
    assert out.read_text().split("\n") == [
        "20210705 07/05/2021 05.07.2021 2021-07-05",
        "         Monday, July 5, 2021", " Mon, Jul 5, 2021", "   Monday", "       5 July 2021",
        "2021Q3 2021186 21 Jul 3",
        "05JUL2021 2021-07-05T13:04:05 20210705T130405 2021-07-05  1:04:05 PM",
        " -1.234,50 (1,234.50)  -$1.234,50",
        "<.0001 0.0456 00FF   CCLV 123-45-6789", ""]


def test_more_sas_informats(session):
    # SAS 9.4 Formats and Informats: these informats were "not found" ERRORs. 05JUL2021 is SAS date 22466
    # (by hand: 1960-01-01 + 22466 days); 13:04:05 is 47045 seconds.
    code, log = run(session, """data r;
  b = input('2021-07-05', e8601da10.);
  c = input('2021-07-05T13:04:05', e8601dt19.);
  d = input('JUL2021', monyy7.);
  e = input('21186', julian5.);
  f = input('1.234,56', commax8.);
  g = input('05JUL2021:13:04:05', anydtdtm20.);
  v = input('2021-07-05 13:04:05', anydtdtm19.);
  i = input('FF', hex2.);
  j = input('12-', trailsgn3.);
  l = input('1 3', bz3.);
  n = input('20210705', b8601da8.);
  q = input('2021Q3', yyq6.);
  t = input('13:04:05', e8601tm8.);
  length m $ 3 u $ 5;
  m = input('abc', $upcase3.);
  u = input('"a b"', $quote5.);
run;""")
    assert code == 0, log
    dt = 22466 * 86400 + 47045
    assert rows(session, "work.r") == [{"b": 22466.0, "c": dt, "d": 22462.0, "e": 22466.0, "f": 1234.56, "g": dt,
                                        "v": dt, "i": 255.0, "j": -12.0, "l": 103.0, "n": 22466.0, "q": 22462.0,
                                        "t": 47045.0, "m": "ABC", "u": "a b"}]


def test_more_functions_and_dim_n(session):
    # SAS 9.4 Functions: these were "The function X is unknown" ERRORs. By hand: GEOMEAN(1,2,4) = 2,
    # HARMEAN(1,2,4) = 3/1.75, IQR(1..8) = 6.5 - 2.5 (PCTLDEF 5), MAD(1,2,3,4,100) = 1, RMS(3,4) = sqrt(12.5),
    # PROBBNML(.5,10,4) = 386/1024, POISSON(2,1) = 3e**-2, COMPARE('abc','abd') = -3; DIM2/HBOUND2 of a{2:5, 0:2}
    code, log = run(session, """data f;
  array a{2:5, 0:2} a1-a12;
  d1 = dim1(a); d2 = dim2(a); h2 = hbound2(a); l2 = lbound2(a);
  g = geomean(1, 2, 4, .); h = harmean(1, 2, 4); q = iqr(1, 2, 3, 4, 5, 6, 7, 8); md = mad(1, 2, 3, 4, 100);
  r = rms(3, 4); sa = sumabs(-1, 2, -3);
  an = anyupper('abcD'); na = notalnum('ab_c'); nu = notupper('ABc', -3);
  pb = probbnml(0.5, 10, 4); po = poisson(2, 1); c1 = compare('abc', 'abd'); c2 = compare('ABC', 'abc', 'i');
  drop a1-a12;
run;""")
    assert code == 0, log
    got = rows(session, "work.f")[0]
    want = {"d1": 4.0, "d2": 3.0, "h2": 2.0, "l2": 0.0, "g": 2.0, "h": 3 / 1.75, "q": 4.0, "md": 1.0,
            "r": 12.5 ** 0.5, "sa": 6.0, "an": 4.0, "na": 3.0, "nu": 3.0, "pb": 386 / 1024,
            "po": 3 * 2.718281828459045 ** -2, "c1": -3.0, "c2": 0.0}
    assert set(got) == set(want)
    for k, v in want.items():
        assert abs(got[k] - v) < 1e-9, (k, got[k], v)


def test_macro_text_inside_a_statement_keeps_the_log_in_step_order(session):
    # `label %mklab(3);`: the macro's lines were counted as the program's, so the log echoed the whole
    # program before the first step's NOTEs; SAS writes each step's NOTEs after its own source
    code, log = run(session, """%macro mklab(n);
  %do i = 1 %to &n;
    v&i = "Label &i"
  %end;
%mend;
data lab;
  array v{3};
  label %mklab(3);
  v1 = 1;
run;
data two; x = 1; run;""")
    assert code == 0, log
    lab_note = log.index("NOTE: The data set WORK.LAB has 1 observations and 3 variables.")
    assert log.index("10         run;") < lab_note < log.index("data two; x = 1; run;")
    import json
    import pyarrow.parquet as pq
    cols = json.loads(pq.read_schema(session.ref("work.lab").path).metadata[b"statgrid.columns"])
    assert [cols[f"v{i}"]["label"] for i in (1, 2, 3)] == ["Label 1", "Label 2", "Label 3"]


def test_infile_eof_label_and_length_variable(session, tmp_path):
    # SAS 9.4 Statements: INFILE EOF=label (an implicit GO TO when INPUT finds no more records; was ignored,
    # the step just stopped) and LENGTH=var (the record's length; was never set, and was written out)
    f = tmp_path / "c.csv"
    f.write_text("x,1\nyy,22\n")
    code, log = run(session, f"""data t;
  infile '{f}' dlm=',' eof=fin length=len;
  input k $ n;
  l = len;
  output;
  return;
fin:
  put 'end of file reached';
  k = 'END'; output;
  stop;
run;""")
    assert code == 0, log
    assert "end of file reached" in log
    assert rows(session, "work.t") == [{"k": "x", "n": 1.0, "l": 3.0}, {"k": "yy", "n": 22.0, "l": 5.0},
                                       {"k": "END", "n": None, "l": None}]


def test_in_colon_operator(session):
    # `if name in: ('Ja', 'Jo')` (the IN operator with the colon modifier: prefix comparison) was a syntax
    # ERROR; SASHELP.CLASS has James Jane Janet Joyce John (and Jeffrey, Judy: not Ja/Jo)
    code, log = run(session, """data w; set sashelp.class; if name in: ('Ja', 'Jo'); keep name; run;
data n; set sashelp.class; if name not in: ('A', 'B', 'C', 'J'); keep name; run;""")
    assert code == 0, log
    assert [r["Name"] for r in rows(session, "work.w")] == ["James", "Jane", "Janet", "John", "Joyce"]
    assert len(rows(session, "work.n")) == 19 - 2 - 1 - 1 - 7


def test_hash_definedata_all_yes_takes_the_data_sets_variables(session):
    # SAS 9.4 Component Objects: DEFINEDATA(all: 'yes') with DATASET: defines the data set's variables; it
    # took every PDV variable (rc too) and failed with a KeyError traceback
    code, log = run(session, """data b; input id v $ w @@; datalines;
1 a 10 1 b 20 2 c 30 3 d 40
;
data h1;
  length id 8 v $ 8 w 8;
  if _n_ = 1 then do;
    declare hash h(dataset: 'b(where=(w > 10))', multidata: 'y', ordered: 'd');
    h.defineKey('id');
    h.defineData(all: 'yes');
    h.defineDone();
    declare hiter it('h');
    call missing(id, v, w);
  end;
  rc = it.first();
  do while (rc = 0);
    output;
    rc = it.next();
  end;
  stop;
run;""")
    assert code == 0, log
    assert [(r["id"], r["v"], r["w"]) for r in rows(session, "work.h1")] == [(3.0, "d", 40.0), (2.0, "c", 30.0),
                                                                          (1.0, "b", 20.0)]


def test_merge_by_variable_of_different_lengths_warns(session):
    # SAS 9.4: "WARNING: Multiple lengths were specified for the BY variable s by input data sets. This might
    # cause unexpected results." (no WARNING was written)
    code, log = run(session, """data a; length s $ 3; s = 'abc'; x = 1; run;
data b; length s $ 6; s = 'abcdef'; y = 2; run;
data mm; merge a b; by s; run;
data ok; merge a a(rename=(x=z)); by s; run;""")
    assert log.count("WARNING: Multiple lengths were specified for the BY variable s by input data sets. "
                     "This might cause unexpected results.") == 1
    # s takes its length (3) from A, the first data set: the second BY value is cut, as in SAS
    assert rows(session, "work.mm") == [{"s": "abc", "x": 1.0, "y": None}, {"s": "abc", "x": None, "y": 2.0}]


def test_call_execute_nrstr_macro_and_open_with_data_set_options(session):
    # CALL EXECUTE('%nrstr(%pr)(…)'): the masked macro call runs after the step (it was an ERROR "Statement
    # is not valid" at '%'); OPEN('sashelp.class(where=(age>14))') applied no option: NLOBSF was 19 and
    # FETCH read Alfred. Ages over 14 in SASHELP.CLASS: Janet 15 (62.5 in), Mary, Philip, Ronald, William.
    code, log, lst = run_sas(session, """%macro pr(ds); data &ds; set sashelp.class(where=(name="&ds")); run; %mend;
data _null_;
  set sashelp.class(obs=2);
  call execute(cats('%nrstr(%pr)(', name, ')'));
run;
%macro att;
  %let id = %sysfunc(open(sashelp.class(where=(age>14) keep=name height age)));
  %let n = %sysfunc(attrn(&id, nlobsf));
  %let rc = %sysfunc(fetch(&id));
  %let h = %sysfunc(getvarn(&id, %sysfunc(varnum(&id, height))));
  %let nv = %sysfunc(attrn(&id, nvars));
  %let rc = %sysfunc(close(&id));
  %put n=&n h=&h nv=&nv;
%mend;
%att""", procs={}, header=False)
    assert code == 0, log
    assert rows(session, "work.alfred")[0]["Name"] == "Alfred" and rows(session, "work.alice")[0]["Name"] == "Alice"
    assert "n=5 h=62.5 nv=3" in log


def test_putlog_and_put_alignment(session, tmp_path):
    # PUTLOG (SAS 9.4 Statements) was "Statement is not valid"; it writes to the log whatever FILE is
    # current. `x 5. -l` / `-c` / `-r` align the formatted value (was a syntax ERROR at '-').
    out = tmp_path / "o.txt"
    code, log = run(session, f"""data _null_;
  file '{out}';
  x = 5;
  put 'to file ' x=;
  putlog 'NOTE: via putlog ' x=;
  put x 5. -l x 5. -c x 5. '|';
run;""")
    assert code == 0, log
    assert "NOTE: via putlog x=5" in log
    assert out.read_text() == "to file x=5\n5      5      5|\n"


def test_error_statement(session):
    # SAS 9.4 Statements: ERROR <message> sets _ERROR_ to 1 (so the PDV is written at the iteration's end)
    # and writes the message; it was "Statement is not valid"
    code, log = run(session, """data t; do x = 1 to 2; if x = 2 then error 'Bad value for ' x=; output; end; run;
data u; x = 1; error; e = _error_; run;""")
    assert code == 0, log
    assert "Bad value for x=2\nx=3 _ERROR_=1 _N_=1" in log
    assert rows(session, "work.t") == [{"x": 1.0}, {"x": 2.0}]
    assert rows(session, "work.u") == [{"x": 1.0, "e": 1.0}]


def test_left_and_trim_remove_quoted_blanks(session):
    # SAS 9.4 Macro Language: %LEFT(%str(   lead)) is "lead"; %STR's quoted blanks stayed ("[   lead]")
    code, log = run(session, """%let a = %str(   lead);
%put [%left(&a)] [%qleft(&a)] [%trim(%str(x   ))] [%cmpres(%str(  a   b  ))];""")
    assert "[lead] [lead] [x] [a b]" in log


def test_infile_dlmstr(session, tmp_path):
    # INFILE DLMSTR='||' was ignored (the step read nothing: LOST CARD); with DSD `||||` is a missing value
    f = tmp_path / "d.txt"
    f.write_text("a||b||3\nc||||4\n")
    code, log = run(session, f"""data t; infile '{f}' dlmstr='||' dsd truncover; input x $ y $ z; run;
data u; infile '{f}' dlmstr='||'; input x $ z; run;""")
    assert code == 0, log
    assert rows(session, "work.t") == [{"x": "a", "y": "b", "z": 3.0}, {"x": "c", "y": "", "z": 4.0}]
    # without DSD consecutive delimiters are one: record 2 is c, 4 (and record 1's b is invalid for z)
    assert rows(session, "work.u") == [{"x": "a", "z": None}, {"x": "c", "z": 4.0}]


def test_partial_array_initialization_warns(session):
    # SAS: "WARNING: Partial value initialization of the array w." when fewer initial values than elements
    code, log = run(session, """data t; array w{3} $ 2 ('a' 'b'); array t{4} _temporary_ (0); array f{2} (1 2);
  x = t{1}; y = t{2}; run;""")
    assert code == 0, log
    assert "WARNING: Partial value initialization of the array w." in log
    assert "WARNING: Partial value initialization of the array t." in log
    assert "array f" not in log.split("run;")[-1]
    assert rows(session, "work.t") == [{"w1": "a", "w2": "b", "w3": "", "f1": 1.0, "f2": 2.0, "x": 0.0, "y": None}]


def test_data_step_fget_assigns_its_variable_and_fileref(session, tmp_path):
    # FGET(fid, s, n) in a DATA step: s gets the text (the call returned a tuple: a TypeError traceback);
    # FILEREF was an unknown function (0 assigned and there, < 0 assigned and missing, > 0 not assigned)
    f = tmp_path / "c.csv"
    f.write_text("x,1\ny,2\n")
    code, log = run(session, f"""filename fr '{f}'; filename nf '{tmp_path / "none.txt"}';
data t;
  length s $ 20;
  rc = filename('ff', '{f}');
  fid = fopen('ff');
  do while (fread(fid) = 0);
    rc2 = fget(fid, s, 20);
    output;
  end;
  rc3 = fclose(fid);
  a = fileref('fr'); b = fileref('nf') < 0; c = fileref('zz') > 0;
  output;
  keep s rc rc2 a b c;
run;""")
    assert code == 0, log
    got = rows(session, "work.t")
    assert [r["s"] for r in got] == ["x,1", "y,2", "y,2"] and got[0]["rc"] == 0.0 and got[0]["rc2"] == 0.0
    assert (got[-1]["a"], got[-1]["b"], got[-1]["c"]) == (0.0, 1.0, 1.0)


def test_nested_format_label_sets_the_default_width(session):
    # a VALUE whose label is [date9.]: the format's default width is 9 (the widest label), not 3 ('Old'),
    # which cut PUT(d, dtf.) to '05J'
    code, log, _ = run_sas(session, """proc format;
  value dtf low-'31dec2019'd = 'Old' '01jan2020'd-high = [date9.];
run;
data t; d = '05jul2021'd; a = put(d, dtf.); o = put('01jan2019'd, dtf.); run;""", header=False)
    assert code == 0, log
    assert rows(session, "work.t") == [{"d": 22466.0, "a": "05JUL2021", "o": "Old"}]


def test_abort_n_is_the_programs_exit_code(session):
    """SAS 9.4 Statements, ABORT: n (without ABEND/RETURN/CANCEL) is returned to the operating system as the
    final SAS exit code; the program goes on in syntax-check mode."""
    from tests.unit.sas.standins import run_sas as _run
    code, log, _ = _run(session, "data _null_; x = 1; if x then abort 3; run;\ndata a; y = 2; run;\n")
    assert code == 3, log
    assert "ERROR: Execution terminated by an ABORT statement at line 1 column 31." in log
    code, log, _ = _run(session, "data _null_; abort; run;\n")
    assert code == 1, log
