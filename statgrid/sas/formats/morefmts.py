"""More SAS formats (SAS 9.4 Formats and Informats: Reference), the ones analysts' programs write often:

- YYMMDDxw., MMDDYYxw., DDMMYYxw.: the date with separator x — B blank, C colon, D dash, N none, P period,
  S slash (YYMMDDN8. '20210705', MMDDYYS10. '07/05/2021'); N widths 2-8 (8 a four-digit year), others 2-10.
- WEEKDATEw. ('Monday, July 5, 2021', narrower 'Mon, Jul 5, 2021', 'Mon, Jul 5, 21', 'Monday', 'Mon'),
  WORDDATXw. ('5 July 2021'), DOWNAMEw., MONNAMEw. (the name, cut to w), WEEKDAYw. (1 Sunday … 7),
  YEARw. (w 2 the last two digits), MONTHw., DAYw., QTRw., YYQw. ('2021Q3'; 4-5 '21Q3'), YYMMw. ('2021M07'),
  MMYYw. ('07M2021'), YYMONw. ('2021JUL'), JULIANw. (5 'yyddd', 7 'yyyyddd').
- Datetime values: DTDATEw. (as DATEw.), DTMONYYw., DTYEARw., E8601DAw./IS8601DAw. ('2021-07-05', of a
  date), B8601DAw. ('20210705'), E8601DTw.d/IS8601DTw.d ('2021-07-05T13:04:05'), B8601DTw.d
  ('20210705T130405'), E8601TMw.d ('13:04:05', of a time), TIMEAMPMw.d (' 1:04:05 PM'), DATEAMPMw.d
  ('05JUL21:01:04:05 PM'), MMSSw.d (minutes:seconds of a time).
- Numbers: COMMAXw.d and DOLLARXw.d (period groups, comma decimal point), NUMXw.d (w.d with a decimal
  comma), NEGPARENw.d (negatives in parentheses, commas; a blank after a positive), PVALUEw.d ('<.0001'
  below 10**-d), HEXw. (an integer in two's-complement hexadecimal), BINARYw., OCTALw., ROMANw., SSNw.
Each writer takes (value, w, d, missing) and returns exactly w characters (right-aligned); a value that
does not fit is asterisks; a missing value its MISSING= text.
"""
from __future__ import annotations

import math

from statgrid.sas.formats import calendar as _cal
from statgrid.sas.formats.dates import MONTH_NAMES, MONTHS, _date, _fit, datetime_format, date_format, monyy
from statgrid.sas.formats.numeric import _group, _signed_fixed, missing_text, stars, w_d

DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
SEPARATORS = {"B": " ", "C": ":", "D": "-", "N": "", "P": ".", "S": "/"}


def _on_date(v: float, w: int, missing: str, write) -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    d = _date(math.floor(v))
    if d is None:
        return stars(w)
    text = write(d)
    return stars(w) if text is None else _fit(text, w)


def _weekday(v: float) -> int:
    """1 Sunday … 7 Saturday (1 January 1960 was a Friday)."""
    return (int(math.floor(v)) + 5) % 7 + 1


def sep_date(order: str, x: str):
    """The writer of YYMMDDx / MMDDYYx / DDMMYYx (order 'ymd' / 'mdy' / 'dmy')."""
    sep = SEPARATORS[x]

    def writer(v: float, w: int, d: int, missing: str) -> str:
        def write(dt: _cal.YMD):
            four = w >= 10 or (x == "N" and w >= 8)
            parts = {"d": f"{dt.day:02d}", "m": f"{dt.month:02d}",
                     "y": f"{dt.year:04d}" if four else f"{dt.year % 100:02d}"}
            if w < 4:
                return parts[order[0]]
            if w < 6:
                return parts[order[0]] + (sep if w == 5 else "") + parts[order[1]]
            if w < 8:
                return "".join(parts[c] for c in order)
            return sep.join(parts[c] for c in order)
        return _on_date(v, w, missing, write)
    return writer


def weekdate(v: float, w: int, d: int, missing: str) -> str:
    def write(dt: _cal.YMD):
        day = DAY_NAMES[_weekday(v) - 1]
        mon = MONTH_NAMES[dt.month - 1]
        for text in (f"{day}, {mon} {dt.day}, {dt.year}", f"{day[:3]}, {mon[:3]} {dt.day}, {dt.year}",
                     f"{day[:3]}, {mon[:3]} {dt.day}, {dt.year % 100:02d}", day, day[:3]):
            if len(text) <= w:
                return text
        return None
    return _on_date(v, w, missing, write)


def worddatx(v: float, w: int, d: int, missing: str) -> str:
    def write(dt: _cal.YMD):
        mon = MONTH_NAMES[dt.month - 1]
        for text in (f"{dt.day} {mon} {dt.year}", f"{dt.day} {mon[:3]} {dt.year}", mon[:3]):
            if len(text) <= w:
                return text
        return None
    return _on_date(v, w, missing, write)


def _named(names, pick):
    def writer(v: float, w: int, d: int, missing: str) -> str:
        return _on_date(v, w, missing, lambda dt: names[pick(v, dt)][:w])
    return writer


def _number(pick, two_digit_year: bool = False):
    def writer(v: float, w: int, d: int, missing: str) -> str:
        def write(dt):
            n = pick(v, dt)
            if two_digit_year and w < 4:
                return f"{n % 100:02d}"
            return str(n)
        return _on_date(v, w, missing, write)
    return writer


def yyq(v: float, w: int, d: int, missing: str) -> str:
    return _on_date(v, w, missing, lambda dt: (f"{dt.year:04d}" if w >= 6 else f"{dt.year % 100:02d}")
                    + f"Q{(dt.month - 1) // 3 + 1}")


def yymm(v: float, w: int, d: int, missing: str) -> str:
    return _on_date(v, w, missing, lambda dt: (f"{dt.year:04d}" if w >= 7 else f"{dt.year % 100:02d}")
                    + f"M{dt.month:02d}")


def mmyy(v: float, w: int, d: int, missing: str) -> str:
    return _on_date(v, w, missing, lambda dt: f"{dt.month:02d}M"
                    + (f"{dt.year:04d}" if w >= 7 else f"{dt.year % 100:02d}"))


def yymon(v: float, w: int, d: int, missing: str) -> str:
    return _on_date(v, w, missing, lambda dt: (f"{dt.year:04d}" if w >= 7 else f"{dt.year % 100:02d}")
                    + MONTHS[dt.month - 1])


def julian(v: float, w: int, d: int, missing: str) -> str:
    def write(dt: _cal.YMD):
        doy = int(math.floor(v)) - _cal.day_number(dt.year, 1, 1) + 1
        return (f"{dt.year:04d}" if w >= 7 else f"{dt.year % 100:02d}") + f"{doy:03d}"
    return _on_date(v, w, missing, write)


def _of_datetime(date_writer):
    """A date format applied to a datetime value's date part (DTDATE, DTMONYY, DTYEAR)."""
    def writer(v: float, w: int, d: int, missing: str) -> str:
        if v != v:
            return missing_text(v, missing).rjust(w)
        return date_writer(math.floor(v / 86400), w, d, missing)
    return writer


def _iso_date(sep: str):
    def writer(v: float, w: int, d: int, missing: str) -> str:
        return _on_date(v, w, missing, lambda dt: f"{dt.year:04d}{sep}{dt.month:02d}{sep}{dt.day:02d}")
    return writer


def _clock(secs: float, d: int) -> tuple[int, int, str]:
    """(hours, minutes, seconds text with d decimals) of a time of day, rounded to d decimals."""
    scale = 10 ** d
    total = math.floor(secs * scale + 0.5) / scale
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    stext = f"{s:0{3 + d if d else 2}.{d}f}" if d else f"{int(s):02d}"
    return int(h), int(m), stext


def _iso_datetime(basic: bool):
    def writer(v: float, w: int, d: int, missing: str) -> str:
        if v != v:
            return missing_text(v, missing).rjust(w)
        days = math.floor(v / 86400)
        dt = _date(days)
        if dt is None:
            return stars(w)
        h, m, s = _clock(v - days * 86400, d)
        if basic:
            text = f"{dt.year:04d}{dt.month:02d}{dt.day:02d}T{h:02d}{m:02d}{s}"
        else:
            text = f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{h:02d}:{m:02d}:{s}"
        return text[:w].ljust(w) if len(text) > w and w >= 16 else _fit(text, w)
    return writer


def iso_time(v: float, w: int, d: int, missing: str) -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    h, m, s = _clock(v % 86400 if v >= 0 else v, d)
    return _fit(f"{h:02d}:{m:02d}:{s}", w)


def timeampm(v: float, w: int, d: int, missing: str) -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    h, m, s = _clock(v % 86400, d if w >= 12 + d else 0)
    half = "AM" if h < 12 else "PM"
    h12 = h % 12 or 12
    if w >= 11:
        text = f"{h12:2d}:{m:02d}:{s} {half}"
    elif w >= 8:
        text = f"{h12:2d}:{m:02d} {half}"
    else:
        text = f"{h12:2d} {half}"
    return _fit(text, w)


def dateampm(v: float, w: int, d: int, missing: str) -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    days = math.floor(v / 86400)
    dt = _date(days)
    if dt is None:
        return stars(w)
    date = f"{dt.day:02d}{MONTHS[dt.month - 1]}{dt.year % 100:02d}"
    clock = timeampm(v - days * 86400, 11, 0, missing).strip()
    if w >= 19:
        return _fit(f"{date}:{clock.zfill(11)}", w)
    return datetime_format(v, w, d, missing)


def mmss(v: float, w: int, d: int, missing: str) -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    neg = v < 0
    total = abs(v)
    m = int(total // 60)
    s = total - m * 60
    stext = f"{s:0{3 + d}.{d}f}" if d else f"{int(s + 0.5) if s + 0.5 < 60 else 59:02d}"
    return _fit(("-" if neg else "") + f"{m}:{stext}", w)


def _x_number(x: float, d: int, prefix: str) -> tuple[bool, str]:
    neg, s = _signed_fixed(x, d)
    int_part, _, frac = s.partition(".")
    return neg, prefix + _group(int_part, ".") + ("," + frac if frac else "")


def commax(v: float, w: int, d: int, missing: str, prefix: str = "") -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    neg, body = _x_number(v, d, prefix)
    text = ("-" if neg else "") + body
    if len(text) <= w:
        return text.rjust(w)
    return numx(v, w, d, missing)


def numx(v: float, w: int, d: int, missing: str) -> str:
    return w_d(v, w, d, missing).replace(".", ",") if v == v else missing_text(v, missing).rjust(w)


def negparen(v: float, w: int, d: int, missing: str) -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    neg, s = _signed_fixed(v, d)
    int_part, _, frac = s.partition(".")
    body = _group(int_part) + ("." + frac if frac else "")
    text = f"({body})" if neg else body + " "
    if len(text) > w:
        text = f"({s})" if neg else s + " "
    return text.rjust(w) if len(text) <= w else stars(w)


def pvalue(v: float, w: int, d: int, missing: str) -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    d = d or max(w - 2, 1)
    if 0 <= v < 10 ** -d:
        return _fit("<." + "0" * (d - 1) + "1", w)
    return w_d(v, w, d, missing)


def hexnum(v: float, w: int, d: int, missing: str) -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    n = int(v)
    bits = 4 * w
    text = f"{n & ((1 << bits) - 1):0{w}X}"
    return text if len(text) <= w else stars(w)


def _base(fmt: str):
    def writer(v: float, w: int, d: int, missing: str) -> str:
        if v != v:
            return missing_text(v, missing).rjust(w)
        n = int(abs(v))
        text = format(n, fmt).zfill(w)
        return text if len(text) <= w else stars(w)
    return writer


def roman(v: float, w: int, d: int, missing: str) -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    n = int(v)
    if not 1 <= n <= 3999:
        return stars(w)
    out = []
    for value, sym in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                       (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out.append(sym)
            n -= value
    return _fit("".join(out), w)


def ssn(v: float, w: int, d: int, missing: str) -> str:
    if v != v:
        return missing_text(v, missing).rjust(w)
    t = f"{int(v):09d}"
    return _fit(f"{t[:3]}-{t[3:5]}-{t[5:]}", w) if len(t) == 9 else stars(w)


WRITERS = {
    "WEEKDATE": weekdate, "WORDDATX": worddatx,
    "DOWNAME": _named(DAY_NAMES, lambda v, dt: _weekday(v) - 1),
    "MONNAME": _named(MONTH_NAMES, lambda v, dt: dt.month - 1),
    "WEEKDAY": _number(lambda v, dt: _weekday(v)),
    "YEAR": _number(lambda v, dt: dt.year, two_digit_year=True),
    "MONTH": _number(lambda v, dt: dt.month), "DAY": _number(lambda v, dt: dt.day),
    "QTR": _number(lambda v, dt: (dt.month - 1) // 3 + 1),
    "YYQ": yyq, "YYMM": yymm, "MMYY": mmyy, "YYMON": yymon, "JULIAN": julian,
    "DTDATE": _of_datetime(lambda v, w, d, m: date_format(v, w, m)),
    "DTMONYY": _of_datetime(lambda v, w, d, m: monyy(v, w, m)),
    "DTYEAR": _of_datetime(lambda v, w, d, m: _number(lambda v2, dt: dt.year, True)(v, w, d, m)),
    "E8601DA": _iso_date("-"), "IS8601DA": _iso_date("-"), "B8601DA": _iso_date(""),
    "E8601DT": _iso_datetime(False), "IS8601DT": _iso_datetime(False), "B8601DT": _iso_datetime(True),
    "E8601TM": iso_time, "IS8601TM": iso_time,
    "TIMEAMPM": timeampm, "DATEAMPM": dateampm, "MMSS": mmss,
    "COMMAX": commax, "DOLLARX": lambda v, w, d, m: commax(v, w, d, m, prefix="$"), "NUMX": numx,
    "NEGPAREN": negparen, "PVALUE": pvalue, "HEX": hexnum, "BINARY": _base("b"), "OCTAL": _base("o"),
    "ROMAN": roman, "SSN": ssn,
}
# name → (default width, minimum, maximum)
RANGES: dict[str, tuple[int, int, int]] = {
    "WEEKDATE": (29, 3, 37), "WORDDATX": (18, 3, 32), "DOWNAME": (9, 1, 32), "MONNAME": (9, 1, 32),
    "WEEKDAY": (1, 1, 32), "YEAR": (4, 2, 32), "MONTH": (2, 1, 32), "DAY": (2, 2, 32), "QTR": (1, 1, 32),
    "YYQ": (6, 4, 32), "YYMM": (7, 5, 32), "MMYY": (7, 5, 32), "YYMON": (7, 5, 32), "JULIAN": (5, 5, 7),
    "DTDATE": (7, 5, 9), "DTMONYY": (5, 5, 7), "DTYEAR": (4, 2, 4),
    "E8601DA": (10, 10, 10), "IS8601DA": (10, 10, 10), "B8601DA": (8, 8, 8),
    "E8601DT": (19, 16, 26), "IS8601DT": (19, 16, 26), "B8601DT": (15, 15, 26),
    "E8601TM": (8, 8, 15), "IS8601TM": (8, 8, 15),
    "TIMEAMPM": (11, 2, 20), "DATEAMPM": (19, 7, 40), "MMSS": (5, 2, 20),
    "COMMAX": (6, 1, 32), "DOLLARX": (6, 2, 32), "NUMX": (12, 1, 32), "NEGPAREN": (6, 1, 32),
    "PVALUE": (6, 1, 32), "HEX": (8, 1, 16), "BINARY": (8, 1, 64), "OCTAL": (3, 1, 24), "ROMAN": (6, 2, 32),
    "SSN": (11, 11, 11),
}
for _order, _stem in (("ymd", "YYMMDD"), ("mdy", "MMDDYY"), ("dmy", "DDMMYY")):
    for _x in SEPARATORS:
        WRITERS[_stem + _x] = sep_date(_order, _x)
        RANGES[_stem + _x] = (8, 2, 8 if _x == "N" else 10)
