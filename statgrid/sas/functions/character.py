"""Character functions (SAS 9.4 Functions and CALL Routines): SUBSTR SUBSTRN SCAN INDEX INDEXC INDEXW
FIND VERIFY UPCASE LOWCASE PROPCASE TRIM TRIMN STRIP LEFT RIGHT COMPRESS COMPBL CAT CATS CATX CATT
TRANWRD TRANSTRN TRANSLATE LENGTH LENGTHN LENGTHC REVERSE REPEAT QUOTE DEQUOTE COUNT COUNTW COUNTC
CHAR FIRST RANK BYTE ANYDIGIT ANYALPHA NOTDIGIT NOTALPHA COALESCEC.

Arguments come as the DATA step holds them: padded to their variable's length, so trailing blanks count
where SAS says they do (INDEX(s, var) looks for var's trailing blanks too; LENGTH ignores them).
A numeric argument is converted as SAS converts: BEST12. right-aligned for most functions, BEST32.
without leading blanks for the CAT functions.
"""
from __future__ import annotations

import string
from typing import Any

from statgrid.sas.formats.numeric import best, missing_text
from statgrid.sas.functions.registry import MAX_CHAR, function, invalid_argument
from statgrid.sas.functions.numeric import to_num
from statgrid.sas.values import MISSING

# SAS's default SCAN/COUNTW delimiters on ASCII hosts
SCAN_DELIMS = " !$%&()*+,-./;<^|"
PROPCASE_DELIMS = " /-(.\t"


def to_char(x: Any) -> str:
    """A character argument: a number is written with BEST12. (right-aligned), as SAS converts."""
    if isinstance(x, str):
        return x
    if x is None:
        return ""
    return best(float(x), 12)


def cat_text(x: Any) -> str:
    """CAT's conversion of an argument: numbers with BEST32. without leading blanks; missing as '.'."""
    if isinstance(x, str):
        return x
    v = float(x) if x is not None else MISSING
    if v != v:
        return missing_text(v)
    return best(v, 32).lstrip(" ")


def _int(x: Any) -> float:
    v = to_num(x)
    return v if v != v else float(int(v))


# -- substrings ------------------------------------------------------------------------------------------
@function("SUBSTR", 2, 3, returns="char", char_length=0, args="cnn")
def f_substr(rt, s, pos, length=None):
    """Characters of s from pos (1-based) on, `length` of them. pos outside s: NOTE "Invalid second
    argument", blank result; a length past the end: NOTE "Invalid third argument", the rest of s."""
    s = to_char(s)
    p = _int(pos)
    n = len(s)
    if p != p or p < 1 or p > n:
        return invalid_argument(rt, "SUBSTR", 2, "")
    p = int(p)
    if length is None:
        return s[p - 1:]
    ln = _int(length)
    if ln != ln or ln < 0:
        return invalid_argument(rt, "SUBSTR", 3, "")
    ln = int(ln)
    if p - 1 + ln > n:
        invalid_argument(rt, "SUBSTR", 3)
        return s[p - 1:]
    return s[p - 1:p - 1 + ln]


@function("SUBSTRN", 2, 3, returns="char", char_length=0, args="cnn")
def f_substrn(rt, s, pos, length=None):
    """SUBSTR without NOTEs: the part of [pos, pos+length) that lies in s (possibly empty)."""
    s = to_char(s)
    p = _int(pos)
    if p != p:
        return ""
    p = int(p)
    end = len(s) + 1 if length is None else p + int(_int(length) if _int(length) == _int(length) else 0)
    lo, hi = max(p, 1), min(end, len(s) + 1)
    return s[lo - 1:hi - 1] if hi > lo else ""


@function("CHAR", 2, 2, returns="char", char_length=1, args="cn")
def f_char(rt, s, pos):
    s, p = to_char(s), _int(pos)
    return s[int(p) - 1] if p == p and 1 <= p <= len(s) else ""


@function("FIRST", 1, 1, returns="char", char_length=1, args="c")
def f_first(rt, s):
    s = to_char(s)
    return s[0] if s else " "


# -- words -----------------------------------------------------------------------------------------------
_CLASS = {
    "a": string.ascii_letters, "d": string.digits, "l": string.ascii_lowercase, "u": string.ascii_uppercase,
    "p": string.punctuation, "s": " \t\n\r\f\v", "h": "\t", "x": string.hexdigits,
    "f": string.ascii_letters + "_", "n": string.ascii_letters + string.digits + "_",
    "c": "".join(chr(i) for i in range(32)) + "\x7f", "g": "".join(chr(i) for i in range(33, 127)),
    "w": "".join(chr(i) for i in range(32, 127)),
}


def _charset(chars: str, modifiers: str) -> tuple[set[str], bool, bool]:
    """(characters, keep, ignore case) from a character list and SAS's modifier letters."""
    mods = modifiers.lower()
    if "t" in mods:
        chars = chars.rstrip(" ")
    cs = set(chars)
    for m in mods:
        cs |= set(_CLASS.get(m, ""))
    ic = "i" in mods
    if ic:
        cs |= {c.upper() for c in cs} | {c.lower() for c in cs}
    return cs, "k" in mods, ic


def _words(s: str, delims: set[str], keep_empty: bool) -> list[tuple[int, str]]:
    """(1-based position, word) of the words of s between delimiters; with the M modifier consecutive
    delimiters delimit empty words."""
    out = []
    start = 0
    if keep_empty:
        for i, ch in enumerate(s):
            if ch in delims:
                out.append((start + 1, s[start:i]))
                start = i + 1
        out.append((start + 1, s[start:]))
        return out
    i, n = 0, len(s)
    while i < n:
        while i < n and s[i] in delims:
            i += 1
        if i >= n:
            break
        j = i
        while j < n and s[j] not in delims:
            j += 1
        out.append((i + 1, s[i:j]))
        i = j
    return out


def _scan_delims(chars: Any, modifiers: str) -> tuple[set[str], bool]:
    mods = (modifiers or "").lower()
    if chars is None or (isinstance(chars, str) and chars == "" and not mods.replace("m", "")):
        base = SCAN_DELIMS
    else:
        base = to_char(chars)
    cs, keep, _ = _charset(base, mods)
    if keep:
        cs = {chr(i) for i in range(256)} - cs
    return cs, "m" in mods


@function("SCAN", 2, 4, returns="char", char_length=200, args="cncc")
def f_scan(rt, s, n, chars=None, modifiers=""):
    """The n-th word of s (n < 0: counting from the right); SAS's default delimiters are blank
    ! $ % & ( ) * + , - . / ; < ^ |; leading and repeated delimiters are skipped unless M is given.
    n = 0 or past the last word → blank."""
    s = to_char(s)
    k = _int(n)
    if k != k:
        return invalid_argument(rt, "SCAN", 2, "")
    k = int(k)
    delims, keep_empty = _scan_delims(chars, to_char(modifiers))
    # the value's trailing blanks are its variable's padding, not text: never part of a word
    words = _words(s.rstrip(" "), delims, keep_empty)
    if k == 0 or abs(k) > len(words):
        return ""
    return words[k - 1][1] if k > 0 else words[k][1]


@function("COUNTW", 1, 3, args="ccc")
def f_countw(rt, s, chars=None, modifiers=""):
    s = to_char(s)
    delims, keep_empty = _scan_delims(chars, to_char(modifiers))
    return float(len(_words(s.rstrip(" "), delims, keep_empty)))


# -- searching -------------------------------------------------------------------------------------------
@function("INDEX", 2, 2, args="cc")
def f_index(rt, s, excerpt):
    """Position of the first occurrence of excerpt (trailing blanks included), 0 if none."""
    return float(to_char(s).find(to_char(excerpt)) + 1) if excerpt != "" else 0.0


@function("INDEXC", 2, None, args="c")
def f_indexc(rt, s, *excerpts):
    s = to_char(s)
    cs = set("".join(to_char(e) for e in excerpts))
    for i, ch in enumerate(s):
        if ch in cs:
            return float(i + 1)
    return 0.0


@function("INDEXW", 2, 3, args="ccc")
def f_indexw(rt, s, excerpt, delims=" "):
    """Position of excerpt as a whole word (between delimiters, default blank), 0 if none."""
    s, w = to_char(s), to_char(excerpt).strip(" ")
    if not w:
        return 0.0
    ds = set(to_char(delims)) or {" "}
    i = s.find(w)
    while i >= 0:
        before_ok = i == 0 or s[i - 1] in ds
        after = i + len(w)
        if before_ok and (after >= len(s) or s[after] in ds):
            return float(i + 1)
        i = s.find(w, i + 1)
    return 0.0


@function("FIND", 2, 4, args="ccaa")
def f_find(rt, s, sub, a3=None, a4=None):
    """FIND(string, substring <,modifiers> <,startpos>) in either order: modifiers 'i' (ignore case),
    't' (trim trailing blanks of both); a negative startpos searches right to left from there."""
    s, sub = to_char(s), to_char(sub)
    mods, start = "", None
    for a in (a3, a4):
        if a is None:
            continue
        if isinstance(a, str):
            mods = a.lower()
        else:
            start = _int(a)
    if "t" in mods:
        s, sub = s.rstrip(" "), sub.rstrip(" ")
    if "i" in mods:
        s, sub = s.lower(), sub.lower()
    if start is not None and start != start:
        return invalid_argument(rt, "FIND", 4)
    if start is None or start > 0:
        st = 0 if start is None else int(start) - 1
        if st >= len(s):
            return 0.0
        return float(s.find(sub, st) + 1)
    if start == 0:
        return 0.0
    st = int(-start)                         # right to left: the match must begin at or before st
    return float(s.rfind(sub, 0, min(st - 1 + len(sub), len(s))) + 1)


@function("VERIFY", 2, None, args="c")
def f_verify(rt, s, *excerpts):
    """Position of the first character of s found in none of the excerpts, 0 if every one is."""
    s = to_char(s)
    ok = set("".join(to_char(e) for e in excerpts))
    for i, ch in enumerate(s):
        if ch not in ok:
            return float(i + 1)
    return 0.0


@function("COUNT", 2, 3, args="ccc")
def f_count(rt, s, sub, modifiers=""):
    s, sub, mods = to_char(s), to_char(sub), to_char(modifiers).lower()
    if "t" in mods:
        s, sub = s.rstrip(" "), sub.rstrip(" ")
    if "i" in mods:
        s, sub = s.lower(), sub.lower()
    if not sub:
        return invalid_argument(rt, "COUNT", 2)
    return float(s.count(sub))


@function("COUNTC", 2, 3, args="ccc")
def f_countc(rt, s, chars, modifiers=""):
    s = to_char(s)
    cs, keep, _ = _charset(to_char(chars), to_char(modifiers))
    return float(sum(1 for ch in s if (ch in cs) != keep))


def _any(name: str, cls: str, negate: bool):
    @function(name, 1, 2, args="cn")
    def fn(rt, s, start=None):
        s = to_char(s)
        st = 0 if start is None else max(int(_int(start)) - 1, 0)
        for i in range(st, len(s)):
            if (s[i] in cls) != negate:
                return float(i + 1)
        return 0.0
    return fn


_any("ANYDIGIT", string.digits, False)
_any("ANYALPHA", string.ascii_letters, False)
_any("ANYSPACE", " \t\n\r\f\v", False)
_any("NOTDIGIT", string.digits, True)
_any("NOTALPHA", string.ascii_letters, True)
_any("NOTSPACE", " \t\n\r\f\v", True)


# -- case and blanks -------------------------------------------------------------------------------------
@function("UPCASE", 1, 1, returns="char", char_length=0, args="c")
def f_upcase(rt, s):
    return to_char(s).upper()


@function("LOWCASE", 1, 1, returns="char", char_length=0, args="c")
def f_lowcase(rt, s):
    return to_char(s).lower()


@function("PROPCASE", 1, 2, returns="char", char_length=0, args="cc")
def f_propcase(rt, s, delims=None):
    """Lower case, then upper case for the first letter of each word; words are separated by blank,
    slash, hyphen, open parenthesis, period and tab unless `delims` is given."""
    s = to_char(s).lower()
    ds = set(PROPCASE_DELIMS if delims is None else to_char(delims))
    out, up = [], True
    for ch in s:
        out.append(ch.upper() if up else ch)
        up = ch in ds
    return "".join(out)


@function("TRIM", 1, 1, returns="char", char_length=0, args="c")
def f_trim(rt, s):
    """Trailing blanks removed; a blank value gives one blank (TRIMN gives none)."""
    t = to_char(s).rstrip(" ")
    return t if t else " "


@function("TRIMN", 1, 1, returns="char", char_length=0, args="c")
def f_trimn(rt, s):
    return to_char(s).rstrip(" ")


@function("STRIP", 1, 1, returns="char", char_length=0, args="c")
def f_strip(rt, s):
    return to_char(s).strip(" ")


@function("LEFT", 1, 1, returns="char", char_length=0, args="c")
def f_left(rt, s):
    """Leading blanks moved to the end (the length stays)."""
    s = to_char(s)
    t = s.lstrip(" ")
    return t + " " * (len(s) - len(t))


@function("RIGHT", 1, 1, returns="char", char_length=0, args="c")
def f_right(rt, s):
    s = to_char(s)
    return s.rstrip(" ").rjust(len(s))


@function("COMPRESS", 1, 3, returns="char", char_length=0, args="ccc")
def f_compress(rt, s, chars=None, modifiers=""):
    """Characters removed from s: blanks by default; those in `chars` and the classes of `modifiers`
    (a letters, d digits, s space characters, p punctuation, l/u lower/upper case, n/f name characters,
    c control, x hex digits, i ignore case, t trim the arguments' trailing blanks, k keep instead)."""
    s, mods = to_char(s), to_char(modifiers)
    if chars is None and not modifiers:
        return s.replace(" ", "")
    cs, keep, _ = _charset("" if chars is None else to_char(chars), mods)
    if "t" in mods.lower():
        s = s.rstrip(" ")
    return "".join(ch for ch in s if (ch in cs) == keep)


@function("COMPBL", 1, 1, returns="char", char_length=0, args="c")
def f_compbl(rt, s):
    """Runs of blanks become one blank."""
    out, prev = [], False
    for ch in to_char(s):
        if ch == " ":
            if not prev:
                out.append(ch)
            prev = True
        else:
            out.append(ch)
            prev = False
    return "".join(out)


# -- concatenation ---------------------------------------------------------------------------------------
@function("CAT", 1, None, returns="char", args="a")
def f_cat(rt, *args):
    return "".join(cat_text(a) for a in args)


@function("CATS", 1, None, returns="char", args="a")
def f_cats(rt, *args):
    return "".join(cat_text(a).strip(" ") for a in args)


@function("CATT", 1, None, returns="char", args="a")
def f_catt(rt, *args):
    return "".join(cat_text(a).rstrip(" ") for a in args)


@function("CATX", 2, None, returns="char", args="ca")
def f_catx(rt, sep, *args):
    """Arguments stripped, blank ones left out, joined by the separator."""
    parts = [cat_text(a).strip(" ") for a in args]
    return to_char(sep).join(p for p in parts if p)


@function("COALESCEC", 1, None, returns="char", args="c")
def f_coalescec(rt, *args):
    for a in args:
        t = to_char(a)
        if t.strip(" "):
            return t
    return ""


# -- replacing -------------------------------------------------------------------------------------------
@function("TRANWRD", 3, 3, returns="char", args="ccc")
def f_tranwrd(rt, s, target, replacement):
    """Every occurrence of target replaced (a zero-length replacement is a blank, as SAS documents)."""
    s, t, r = to_char(s), to_char(target), to_char(replacement)
    if t == "":
        return invalid_argument(rt, "TRANWRD", 2, s)
    return _replace(s, t, r if r != "" else " ")


def _replace(s: str, t: str, r: str) -> str:
    """s.replace(t, r), built only as far as SAS's 32767 characters (a long replacement of a short
    target could otherwise build gigabytes)."""
    grow = len(r) - len(t)
    if grow <= 0 or len(s) + s.count(t) * grow <= MAX_CHAR:
        return s.replace(t, r)
    return s.replace(t, r, MAX_CHAR // grow + 1)[:MAX_CHAR]


@function("TRANSTRN", 3, 3, returns="char", args="ccc")
def f_transtrn(rt, s, target, replacement):
    s, t, r = to_char(s), to_char(target), to_char(replacement)
    return _replace(s, t, r) if t else s


@function("TRANSLATE", 3, None, returns="char", char_length=0, args="c")
def f_translate(rt, s, *pairs):
    """TRANSLATE(s, to1, from1, …): each character of from_i becomes the same-place character of to_i
    (a blank when to_i is shorter)."""
    if len(pairs) % 2:
        return invalid_argument(rt, "TRANSLATE", result=to_char(s))
    table: dict[str, str] = {}
    for i in range(0, len(pairs), 2):
        to, frm = to_char(pairs[i]), to_char(pairs[i + 1])
        for j, ch in enumerate(frm):
            table.setdefault(ch, to[j] if j < len(to) else " ")
    return "".join(table.get(ch, ch) for ch in to_char(s))


# -- lengths ---------------------------------------------------------------------------------------------
@function("LENGTH", 1, 1, args="c")
def f_length(rt, s):
    """Position of the last non-blank character; 1 for a blank value."""
    return float(max(len(to_char(s).rstrip(" ")), 1))


@function("LENGTHN", 1, 1, args="c")
def f_lengthn(rt, s):
    return float(len(to_char(s).rstrip(" ")))


@function("LENGTHC", 1, 1, args="c")
def f_lengthc(rt, s):
    return float(len(to_char(s)))


@function("REVERSE", 1, 1, returns="char", char_length=0, args="c")
def f_reverse(rt, s):
    return to_char(s)[::-1]


@function("REPEAT", 2, 2, returns="char", args="cn")
def f_repeat(rt, s, n):
    """s followed by n more copies of itself (n + 1 in all)."""
    k = to_num(n)
    if k != k or k < 0:
        return invalid_argument(rt, "REPEAT", 2, "")
    s = to_char(s)
    if not s:
        return ""
    # SAS's longest character value is 32767: build no more than that
    copies = min(k + 1, MAX_CHAR // len(s) + 1)
    return (s * int(copies))[:MAX_CHAR]


@function("QUOTE", 1, 2, returns="char", args="cc")
def f_quote(rt, s, q='"'):
    q = (to_char(q) or '"')[0]
    return q + to_char(s).rstrip(" ").replace(q, q + q) + q


@function("DEQUOTE", 1, 1, returns="char", char_length=0, args="c")
def f_dequote(rt, s):
    t = to_char(s).lstrip(" ")
    if t[:1] in ("'", '"'):
        q = t[0]
        out, i = [], 1
        while i < len(t):
            if t[i] == q:
                if t[i + 1:i + 2] == q:
                    out.append(q)
                    i += 2
                    continue
                break
            out.append(t[i])
            i += 1
        return "".join(out)
    return to_char(s)


@function("RANK", 1, 1, args="c")
def f_rank(rt, s):
    s = to_char(s)
    return float(ord(s[0])) if s else invalid_argument(rt, "RANK")


@function("BYTE", 1, 1, returns="char", char_length=1)
def f_byte(rt, n):
    k = _int(n)
    if k != k or not 0 <= k <= 255:
        return invalid_argument(rt, "BYTE", result="")
    return chr(int(k))


def _choice(cond: Any, true: Any, false: Any, missing: Any) -> Any:
    """IFC/IFN's pick: `true` when cond is neither 0 nor missing, `missing` (if given) when it is missing,
    else `false` (SAS 9.4 Functions: IFC, IFN; every argument is evaluated, as in SAS)."""
    x = to_num(cond)
    if x != x:
        return false if missing is None else missing
    return true if x != 0 else false


@function("IFC", 3, 4, returns="char", args="ncc")
def f_ifc(rt, cond, true, false, missing=None):
    return to_char(_choice(cond, true, false, missing))


@function("IFN", 3, 4, args="nnn")
def f_ifn(rt, cond, true, false, missing=None):
    v = _choice(cond, true, false, missing)
    return MISSING if v is None else to_num(v)
