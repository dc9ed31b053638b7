"""Character functions against SAS 9.4 Functions and CALL Routines (the manual's examples where it
gives them, else hand-computed): blanks and padding, SCAN's default delimiters and negative counts,
COMPRESS modifiers, the CAT family, SUBSTR's NOTEs, LENGTH of a blank value."""
from __future__ import annotations


from statgrid.sas.functions import FUNCTIONS, call_function
from statgrid.sas.values import MISSING
from tests.unit.sas.test_sas_functions_numeric import rt


def f(name, *args):
    return call_function(rt(), name, *args)


def test_scan_default_delimiters_and_negative_counts():
    arg = "ABC.DEF(X=Y)"
    assert f("SCAN", arg, 1) == "ABC" and f("SCAN", arg, 2) == "DEF" and f("SCAN", arg, 3) == "X=Y"
    assert f("SCAN", arg, -1) == "X=Y" and f("SCAN", arg, -3) == "ABC" and f("SCAN", arg, 4) == ""
    assert f("SCAN", "  leading  blanks  ", 1) == "leading"
    assert f("SCAN", "a!b$c%d&e(f)g*h+i,j-k.l/m;n<o^p|q", -1) == "q"
    assert f("SCAN", "a,,b", 2, ",") == "b" and f("SCAN", "a,,b", 2, ",", "m") == ""
    assert f("SCAN", "x1y22z", 2, "", "d") == "y" and f("COUNTW", "one two  three") == 3
    assert f("SCAN", "Jones, John  ", 2, ",") == " John"


def test_substr_and_its_notes():
    assert f("SUBSTR", "ABCDEF", 2, 3) == "BCD" and f("SUBSTR", "ABCDEF", 4) == "DEF"
    r = rt(5, 3)
    assert FUNCTIONS["SUBSTR"].fn(r, "ABC", 3.0, 5.0) == "C"
    assert FUNCTIONS["SUBSTR"].fn(r, "ABC", 9.0) == ""
    assert r.program.log.notes == ["Invalid third argument to function SUBSTR at line 5 column 3.",
                                   "Invalid second argument to function SUBSTR at line 5 column 3."]
    assert f("SUBSTRN", "ABC", 0, 3) == "AB" and f("SUBSTRN", "ABC", 5) == ""


def test_searching():
    assert f("INDEX", "Kapoor", "poo") == 3 and f("INDEX", "abc", "x") == 0
    assert f("INDEX", "ab cd", "cd  ") == 0                 # the excerpt's trailing blanks count
    assert f("INDEXC", "ABC.DEF (X=Y)", ".()=") == 4 and f("INDEXW", "asian asia", "asia") == 7
    assert f("FIND", "She sells seashells? Yes, she does.", "she ") == 27
    assert f("FIND", "She sells seashells? Yes, she does.", "she ", "i") == 1
    assert f("FIND", "She sells seashells", "s", "i", -10) == 9 and f("FIND", "abc", "c", 4) == 0
    assert f("VERIFY", "ABCD1", "ABCD") == 5 and f("VERIFY", "AB  ", "AB") == 3 and f("VERIFY", "AB", "BA") == 0
    assert f("COUNT", "This is a thistle", "is") == 3 and f("COUNT", "This is a thistle", "this", "i") == 2


def test_case_and_blanks():
    assert f("UPCASE", "abc ") == "ABC " and f("LOWCASE", "ABC") == "abc"
    assert f("PROPCASE", "tHE qUICK bROWN/fox-jumps (over) the.dog") == "The Quick Brown/Fox-Jumps (Over) The.Dog"
    assert f("TRIM", "ab  ") == "ab" and f("TRIM", "   ") == " " and f("TRIMN", "   ") == ""
    assert f("STRIP", "  ab  ") == "ab" and f("LEFT", "  ab") == "ab  " and f("RIGHT", "ab  ") == "  ab"
    assert f("COMPBL", "January     Status  x") == "January Status x"


def test_compress_modifiers():
    assert f("COMPRESS", " A B C ") == "ABC"
    assert f("COMPRESS", "A+B-C", "+-") == "ABC"
    x = "919-000-000 nc 610-000-000 ny 258-000-000 az"
    assert f("COMPRESS", x, "", "kd") == "919000000610000000258000000"
    assert f("COMPRESS", x, "", "a") == "919-000-000  610-000-000  258-000-000 "
    assert f("COMPRESS", "A1b2C3", "", "d") == "AbC" and f("COMPRESS", "A1b2C3", "", "l") == "A12C3"
    assert f("COMPRESS", "A1b2C3", "", "ku") == "AC" and f("COMPRESS", "a.b,c!", "", "p") == "abc"
    assert f("COMPRESS", "aAbB", "a", "i") == "bB" and f("COMPRESS", "a b\tc", "", "s") == "abc"


def test_cat_family():
    assert f("CAT", " a ", "b ", 1.5) == " a b 1.5"
    assert f("CATS", " a ", "b ", 1.5) == "ab1.5" and f("CATT", " a ", "b ", 2) == " ab2"
    assert f("CATX", "-", " a ", "  ", "b", 3) == "a-b-3" and f("CATX", ", ", "x", "y") == "x, y"
    assert f("CATS", MISSING, "z") == ".z" and f("CAT", 1234567890123) == "1234567890123"
    assert f("COALESCEC", "  ", "", "b") == "b"


def test_replacing_and_lengths():
    assert f("TRANWRD", "Mrs. Joan Smith", "Mrs.", "Ms.") == "Ms. Joan Smith"
    assert f("TRANWRD", "a-b-c", "-", "") == "a b c"
    assert f("TRANSLATE", "XYZW", "AB", "VW") == "XYZB" and f("TRANSLATE", "abc", "X", "ab") == "X c"
    assert f("LENGTH", "ABCDEF   ") == 6 and f("LENGTH", "   ") == 1 and f("LENGTHN", "   ") == 0
    assert f("LENGTHC", "ab  ") == 4 and f("LENGTH", 12.0) == 12      # BEST12. right-aligned
    assert f("REVERSE", "xyz ") == " zyx" and f("REPEAT", "ONE", 2) == "ONEONEONE"
    assert f("QUOTE", 'a"b ') == '"a""b"' and f("DEQUOTE", "'it''s' x") == "it's"
    assert f("RANK", "A") == 65 and f("BYTE", 66) == "B" and f("CHAR", "abc", 2) == "b"


def test_result_length_rules_for_the_data_step():
    assert FUNCTIONS["SUBSTR"].char_length == 0 and FUNCTIONS["UPCASE"].char_length == 0
    assert FUNCTIONS["SCAN"].char_length == 200 and FUNCTIONS["CATX"].char_length == 200
    assert FUNCTIONS["PUT"].char_length == -1 and FUNCTIONS["FIPSTATE"].char_length == 20
    assert FUNCTIONS["SCAN"].arg_type(0) == "c" and FUNCTIONS["SCAN"].arg_type(1) == "n"
    assert FUNCTIONS["CATX"].arg_type(5) == "a" and FUNCTIONS["FGET"].out_args == (1,)
