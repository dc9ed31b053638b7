"""More character and selection functions (SAS 9.4 Functions and CALL Routines): WHICHN WHICHC CHOOSEN
CHOOSEC FINDC FINDW KSCAN ANYPUNCT NOTPUNCT SOUNDEX COMPLEV MD5 SHA256 COLLATE NLITERAL NVALID LENGTHM;
VTYPE SYMGLOBL SYMLOCAL SYSPROD SYSRC SLEEP RESOLVE LIBREF; CALL CATS CATT CATX SCAN SLEEP.

MD5 and SHA256 return the digest itself (16 and 32 bytes, as SAS does), not its hexadecimal text: write
it with PUT(MD5(x), $HEX32.) / PUT(SHA256(x), $HEX64.). The string is hashed as held, trailing blanks
included (SAS: hash TRIM(x) for the value without them); characters are bytes (Latin-1).
"""
from __future__ import annotations

import hashlib
import string
from typing import Any

from statgrid.sas.functions.character import (_any, _charset, _int, _scan_delims, _words, cat_text, f_scan,
                                              to_char)
from statgrid.sas.functions.numeric import to_num
from statgrid.sas.functions.registry import CALL_SETS, call_routine, function, invalid_argument
from statgrid.sas.values import MISSING

# -- selection ---------------------------------------------------------------------------------------------


@function("WHICHN", 2, None)
def f_whichn(rt, x, *values):
    """The 1-based index of the first value equal to x, 0 if none; missing when x is missing."""
    v = to_num(x)
    if v != v:
        return MISSING
    for i, a in enumerate(values):
        if to_num(a) == v:
            return float(i + 1)
    return 0.0


@function("WHICHC", 2, None, args="c")
def f_whichc(rt, x, *values):
    """The index of the first value equal to x (trailing blanks do not count), 0 if none."""
    v = to_char(x).rstrip(" ")
    for i, a in enumerate(values):
        if to_char(a).rstrip(" ") == v:
            return float(i + 1)
    return 0.0


def _choose(rt, name, index, values, empty):
    k = to_num(index)
    n = len(values)
    if k != k or k == 0 or abs(int(k)) > n:
        return invalid_argument(rt, name, None, empty)
    k = int(k)
    return values[k - 1 if k > 0 else n + k]


@function("CHOOSEN", 2, None)
def f_choosen(rt, index, *values):
    """The index-th value (a negative index counts from the end); out of range: the NOTE, missing."""
    return to_num(_choose(rt, "CHOOSEN", index, values, MISSING))


@function("CHOOSEC", 2, None, returns="char", char_length=200, args="nc")
def f_choosec(rt, index, *values):
    return to_char(_choose(rt, "CHOOSEC", index, values, ""))


# -- searching ---------------------------------------------------------------------------------------------
def _mods_start(a3, a4) -> tuple[str, float | None]:
    mods, start = "", None
    for a in (a3, a4):
        if a is None:
            continue
        if isinstance(a, str):
            mods = a
        else:
            start = _int(a)
    return mods, start


def _scan_range(n: int, start: float | None) -> range:
    """The 0-based positions to look at: from start on (right to left from -start when negative)."""
    if start is None or start > 0:
        return range(0 if start is None else int(start) - 1, n)
    return range(min(int(-start), n) - 1, -1, -1)


@function("FINDC", 1, 4, args="ccaa")
def f_findc(rt, s, chars="", a3=None, a4=None):
    """FINDC(string <, charlist> <, modifiers> <, startpos>): the position of the first character of string
    in charlist (with the K/V modifier: not in it); modifiers I (ignore case), T (trim trailing blanks of
    both), O (process once), and the character classes of COMPRESS (A D L U P S …); a negative startpos
    searches right to left."""
    s = to_char(s)
    mods, start = _mods_start(a3, a4)
    if start is not None and (start != start or start == 0):
        return 0.0 if start == 0 else invalid_argument(rt, "FINDC", 4)
    m = mods.lower()
    if "t" in m:
        s = s.rstrip(" ")
    if "b" in m and (start is None or start > 0):
        start = -(start or len(s))
    cs, keep, ic = _charset(to_char(chars), m.replace("v", "k").replace("b", ""))
    for i in _scan_range(len(s), start):
        c = s[i]
        if ((c in cs) or (ic and (c.lower() in cs or c.upper() in cs))) != keep:
            return float(i + 1)
    return 0.0


@function("FINDW", 2, 5, args="ccaaa")
def f_findw(rt, s, word, *rest):
    """FINDW(string, word <, chars> <, modifiers> <, startpos>): the position of `word` as a whole word of
    string (between delimiters: `chars` plus the modifier classes; by default blanks and SCAN's
    delimiters); modifiers I (ignore case), T (trim blanks of word), E (return the word's number instead
    of its position), M (consecutive delimiters), B or a negative startpos: right to left. Without chars
    the delimiter is the blank (as INDEXW's)."""
    s, w = to_char(s), to_char(word)
    chars, mods, start = None, "", None
    strs = [a for a in rest if isinstance(a, str)]
    nums = [a for a in rest if not isinstance(a, str)]
    if strs:
        chars = strs[0]
    if len(strs) > 1:
        mods = strs[1]
    if nums:
        start = _int(nums[0])
    m = mods.lower()
    delims, keep_empty = _scan_delims(" " if chars is None else chars,
                                      "".join(c for c in m if c not in "itebo"))
    w = w.strip(" ") if "t" in m else w.rstrip(" ")
    if not w:
        return 0.0
    if "i" in m:
        s, w = s.lower(), w.lower()
    words = _words(s, delims, keep_empty)
    order = list(enumerate(words, 1))
    if start is not None and start < 0 or "b" in m:
        lim = -start if start is not None and start < 0 else (start or len(s))
        order = [(k, pw) for k, pw in reversed(order) if pw[0] <= lim]
    elif start is not None and start > 0:
        order = [(k, pw) for k, pw in order if pw[0] >= start]
    for k, (pos, text) in order:
        if text.rstrip(" ") == w if "t" in m else text == w:
            return float(k if "e" in m else pos)
    return 0.0


function("KSCAN", 2, 4, returns="char", char_length=200, args="cncc")(f_scan)
_any("ANYPUNCT", string.punctuation, False)
_any("NOTPUNCT", string.punctuation, True)


# -- sound and distance ------------------------------------------------------------------------------------
_SOUNDEX = {**dict.fromkeys("BFPV", "1"), **dict.fromkeys("CGJKQSXZ", "2"), **dict.fromkeys("DT", "3"),
            "L": "4", **dict.fromkeys("MN", "5"), "R": "6"}


@function("SOUNDEX", 1, 1, returns="char", char_length=0, args="c")
def f_soundex(rt, s):
    """SAS's Soundex: the first letter kept; A E H I O U W Y dropped; the others coded 1-6; of adjacent
    letters (adjacent in the word) with the same code all but the first dropped. No padding or cut to 4
    characters (SAS's own variant)."""
    letters = [c.upper() for c in to_char(s) if c.isascii() and c.isalpha()]
    if not letters:
        return ""
    out = [letters[0]]
    prev = _SOUNDEX.get(letters[0])
    for c in letters[1:]:
        code = _SOUNDEX.get(c)
        if code is not None and code != prev:
            out.append(code)
        prev = code
    return "".join(out)


def _levenshtein(a: str, b: str, cutoff: int | None) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if cutoff is not None and min(cur) > cutoff:
            return cutoff + 1
        prev = cur
    return prev[-1]


@function("COMPLEV", 2, 4, args="ccaa")
def f_complev(rt, a, b, a3=None, a4=None):
    """The Levenshtein edit distance (insert, delete, replace: 1 each) of the two strings without their
    trailing blanks; a cutoff: at most cutoff+1; modifiers I (ignore case), L (keep leading blanks; they
    are removed otherwise), N (ignore quotation marks around the strings), ':' (the longer string cut to
    the shorter one's length)."""
    mods, cutoff = _mods_start(a3, a4)
    x, y = to_char(a).rstrip(" "), to_char(b).rstrip(" ")
    m = mods.lower()
    if "l" not in m:
        x, y = x.lstrip(" "), y.lstrip(" ")
    if "n" in m:
        x, y = x.strip("'\""), y.strip("'\"")
    if "i" in m:
        x, y = x.upper(), y.upper()
    if ":" in m:
        n = min(len(x), len(y))
        x, y = x[:n], y[:n]
    c = None if cutoff is None or cutoff != cutoff else int(cutoff)
    d = _levenshtein(x, y, c)
    return float(min(d, c + 1) if c is not None else d)


# -- digests, collating sequence, names ----------------------------------------------------------------------
def _bytes(s: Any) -> bytes:
    return to_char(s).encode("latin-1", errors="replace")


@function("MD5", 1, 1, returns="char", char_length=16, args="c")
def f_md5(rt, s):
    """The 16-byte MD5 digest (write it with $HEX32.)."""
    return hashlib.md5(_bytes(s)).digest().decode("latin-1")


@function("SHA256", 1, 1, returns="char", char_length=32, args="c")
def f_sha256(rt, s):
    """The 32-byte SHA-256 digest (write it with $HEX64.)."""
    return hashlib.sha256(_bytes(s)).digest().decode("latin-1")


@function("COLLATE", 1, 3, returns="char", char_length=200)
def f_collate(rt, start, end=None, length=None):
    """The characters of ranks start..end (or `length` of them from start) of the ASCII/Latin-1 sequence;
    at most 255 characters (end defaults to 255)."""
    s = to_num(start)
    if s != s or not 0 <= s <= 255:
        return invalid_argument(rt, "COLLATE", 1, "")
    s = int(s)
    e = to_num(end) if end is not None else MISSING
    ln = to_num(length) if length is not None else MISSING
    if ln == ln:
        last = s + int(ln) - 1
    elif e == e:
        last = int(e)
    else:
        last = 255
    last = min(last, 255, s + 254)
    return "".join(chr(i) for i in range(s, last + 1))


def _v7_name(n: str) -> bool:
    return (0 < len(n) <= 32 and (n[0].isascii() and (n[0].isalpha() or n[0] == "_"))
            and all(c.isascii() and (c.isalnum() or c == "_") for c in n))


@function("NLITERAL", 1, 1, returns="char", char_length=200, args="c")
def f_nliteral(rt, s):
    """A name as it can be written in a program: as it is when it is a SAS (V7) name, else a name literal
    "…"N (single quotes when it holds & or %, so the macro processor leaves it alone; quotes doubled)."""
    n = to_char(s).rstrip(" ")
    if _v7_name(n):
        return n
    q = "'" if ("&" in n or "%" in n) else '"'
    return q + n.replace(q, q + q) + q + "N"


@function("NVALID", 1, 2, args="cc")
def f_nvalid(rt, s, rule=None):
    """1 if the string is a valid SAS variable name by the rule: V7 (letters, digits, _; a letter or _
    first; 32 at most), ANY (any characters, 32 at most, not blank), NLITERAL (a V7 name or a name literal
    'text'N); by default the VALIDVARNAME= option's rule (V7)."""
    n = to_char(s).rstrip(" ")
    r = to_char(rule).strip().upper() if rule is not None else ""
    if not r:
        try:
            r = str(rt.program.options.get("VALIDVARNAME")).upper()
        except Exception:
            r = "V7"
        r = "ANY" if r == "ANY" else "V7"
    if r == "V7" or r == "UPCASE":
        return 1.0 if _v7_name(n) else 0.0
    if r == "ANY":
        return 1.0 if 0 < len(n) <= 32 and n.strip(" ") else 0.0
    if r == "NLITERAL":
        if _v7_name(n):
            return 1.0
        if len(n) >= 3 and n[-1] in "nN" and n[0] in "'\"" and n[-2] == n[0]:
            body = n[1:-2]
            return 1.0 if 0 < len(body.replace(n[0] * 2, n[0])) <= 32 else 0.0
        return 0.0
    return invalid_argument(rt, "NVALID", 2)


@function("LENGTHM", 1, 1, args="c")
def f_lengthm(rt, s):
    """The length in memory: the variable's declared length (trailing blanks included)."""
    return float(len(to_char(s)))


# -- the program: macro tables, products, return codes -------------------------------------------------------
def _symbols(rt):
    p = getattr(rt, "program", None)
    return getattr(p, "symbols", None) if p is not None else None


@function("SYMGLOBL", 1, 1, args="c")
def f_symglobl(rt, name):
    """1 if the macro variable is in the global symbol table (automatic variables are), else 0."""
    sym, n = _symbols(rt), to_char(name).strip().upper()
    if sym is None or not n:
        return 0.0
    return 1.0 if n in sym.globals.values or n in sym.automatic else 0.0


@function("SYMLOCAL", 1, 1, args="c")
def f_symlocal(rt, name):
    """1 if the macro variable is in a local symbol table (of a macro running), else 0."""
    sym, n = _symbols(rt), to_char(name).strip().upper()
    if sym is None or not n:
        return 0.0
    return 1.0 if any(n in s.values for s in sym.locals) else 0.0


_PRODUCTS = {"BASE": 1.0, "STAT": 1.0, "GRAPH": 0.0, "ETS": 0.0, "IML": 0.0, "OR": 0.0, "QC": 0.0,
             "ACCESS": 0.0, "CONNECT": 0.0, "SHARE": 0.0, "AF": 0.0, "FSP": 0.0, "INSIGHT": 0.0, "EIS": 0.0}


@function("SYSPROD", 1, 1, args="c")
def f_sysprod(rt, product):
    """1 if the SAS product is there (statgrid: BASE and STAT), 0 if it is a product statgrid does not have,
    -1 if it is not a SAS product."""
    return _PRODUCTS.get(to_char(product).strip().upper(), -1.0)


@function("SYSRC", 0, 0)
def f_sysrc(rt):
    """The last system error number: statgrid's host calls report their errors in the log, so 0."""
    return 0.0


# -- CALL routines -------------------------------------------------------------------------------------------
CALL_SETS.update({"CATS": (0,), "CATT": (0,), "CATX": (1,), "SCAN": (2, 3)})


def _append(result: Any, text: str) -> list:
    r = to_char(result)
    room = len(r) if isinstance(result, str) else len(text)
    return (r.rstrip(" ") + text)[:room] if room else r.rstrip(" ") + text


@call_routine("CATS", 1, None, args="ca")
def call_cats(rt, args):
    """CALL CATS(result, item…): the items without leading and trailing blanks appended to result (trimmed),
    cut to result's length."""
    text = "".join(cat_text(a).strip(" ") for a in args[1:])
    r = to_char(args[0])
    return [(r.strip(" ") + text)[:len(r)] if len(r) else r.strip(" ") + text]


@call_routine("CATT", 1, None, args="ca")
def call_catt(rt, args):
    text = "".join(cat_text(a).rstrip(" ") for a in args[1:])
    return [_append(args[0], text)]


@call_routine("CATX", 2, None, args="cca")
def call_catx(rt, args):
    """CALL CATX(separator, result, item…): result and the non-blank items, stripped, joined by the
    separator, cut to result's length."""
    sep = to_char(args[0])
    r = to_char(args[1])
    parts = [p for p in [r.strip(" ")] + [cat_text(a).strip(" ") for a in args[2:]] if p]
    out = sep.join(parts)
    return [None, out[:len(r)] if len(r) else out]


@call_routine("SCAN", 4, 6, args="cnnncc")
def call_scan(rt, args):
    """CALL SCAN(string, n, position, length <, chars> <, modifiers>): where the n-th word is (a negative n
    counts from the end); 0 and 0 when there is no such word."""
    s = to_char(args[0])
    n = to_num(args[1])
    chars = args[4] if len(args) > 4 else None
    mods = to_char(args[5]) if len(args) > 5 else ""
    if n != n:
        invalid_argument(rt, "SCAN", 2, None)
        return [None, None, 0.0, 0.0] + [None] * (len(args) - 4)
    delims, keep_empty = _scan_delims(chars, mods)
    words = _words(s, delims, keep_empty)
    k = int(n)
    if k == 0 or abs(k) > len(words):
        return [None, None, 0.0, 0.0] + [None] * (len(args) - 4)
    pos, w = words[k - 1] if k > 0 else words[k]
    return [None, None, float(pos), float(len(w))] + [None] * (len(args) - 4)


@function("VTYPE", 1, 1, returns="char", char_length=1, args="a")
def f_vtype(rt, var):
    """'N' for a numeric variable, 'C' for a character one (VNAME, VLENGTH, VLABEL … need the PDV: not yet)."""
    return "C" if isinstance(var, str) else "N"


_MAX_SLEEP_S = 46 * 86400            # SAS: the longest sleep is 46 days


def _sleep(rt, name: str, n, unit) -> float:
    """Sleeps n units of `unit` seconds (default .001, as on UNIX); the seconds slept."""
    import time
    nv = to_num(n)
    uv = 0.001 if unit is None else to_num(unit)
    if nv != nv or nv < 0 or uv != uv or uv <= 0:
        return invalid_argument(rt, name, None if nv == nv and nv >= 0 else 1)
    seconds = min(nv * uv, _MAX_SLEEP_S)
    time.sleep(seconds)
    return seconds


@function("SLEEP", 1, 2)
def f_sleep(rt, n, unit=None):
    """SLEEP(n <, unit>): suspends the step n units (seconds × unit; default .001) and returns the seconds."""
    return _sleep(rt, "SLEEP", n, unit)


@call_routine("SLEEP", 1, 2, args="nn")
def call_sleep(rt, args):
    _sleep(rt, "SLEEP", args[0], args[1] if len(args) > 1 else None)
    return None


@function("RESOLVE", 1, 1, returns="char", char_length=200, args="c")
def f_resolve(rt, text):
    """The text with its macro variable references (&name, &&name…) and macro functions (%UPCASE, %SYSFUNC …)
    resolved when the statement runs, after CALL SYMPUT in the same step, by the program's own macro processor
    (so its %MACROs run too)."""
    p = getattr(rt, "program", None)
    if p is None or getattr(p, "symbols", None) is None:
        return to_char(text)
    # the program's own macro processor (statgrid/sas/macro/processor.py puts its engine in extras): its
    # %MACROs, symbol tables and functions
    eng = p.extras.get("macro_engine") if isinstance(getattr(p, "extras", None), dict) else None
    if eng is None:
        return to_char(text)
    return eng.resolve_str(to_char(text))


@function("LIBREF", 1, 1, args="c")
def f_libref(rt, libref):
    """0 if the libref is assigned, else nonzero (-70008, the number SAS returns for an unassigned one)."""
    p = getattr(rt, "program", None)
    s = getattr(p, "session", None) if p is not None else None
    name = to_char(libref).strip().lower()
    try:
        return 0.0 if s is not None and name and name in s.libraries else -70008.0
    except Exception:
        return -70008.0
