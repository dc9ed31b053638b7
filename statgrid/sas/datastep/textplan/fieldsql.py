"""One INPUT field as a DuckDB expression over the record: the field's text, then the informat's reading
of it, exactly as the Python engine reads it (textio.TextIO._store, formats.informat_value,
formats.numeric.read_number) — or, for a value the Python engine would treat specially (invalid data and
its NOTE), `error(INVALID_MARK)`: the query fails and the step goes to the Python engine.

Numbers: DuckDB's cast to DOUBLE rounds correctly, as Python's float() does, and the strings it takes are
Python's grammar (`[+-]digits[.digits][e[+-]digits]`, blanks around) plus two forms Python refuses or the
informat does: a sign pair `+-1` and digit-group underscores `1_000`; a field with either is not taken
here. A cast that overflows (±inf, Python's invalid data for w.d) is not taken either."""
from __future__ import annotations

from statgrid.libraries import sql_literal
from statgrid.sas.datastep.textplan.plan import Field

INVALID_MARK = "statgrid-infile: a field the Python engine reads as invalid data"
_INVALID = f"error({sql_literal(INVALID_MARK)})"


# DuckDB's substr counts characters from the start of the string to reach its offset: 115 fields of a
# 549-character record scan some 30,000 bytes a record. The record is cut once into pieces of this many
# characters (columns __c0, __c1 … of the query, chunks_sql) and each field taken from its piece(s).
CHUNK_CHARS = 64
LINE_CHARS = "__len"            # the query's column of the line's length in characters (MISSOVER)


def chunks_sql(line: str, reach_chars: int) -> list[str]:
    """The pieces of `line` that fields up to column `reach_chars` are taken from, as select items."""
    n = (reach_chars + CHUNK_CHARS - 1) // CHUNK_CHARS
    return [f"substr({line}, {k * CHUNK_CHARS + 1}, {CHUNK_CHARS}) AS __c{k}" for k in range(n)]


def _columns(start_col: int, width_chars: int) -> str:
    """substr(line, start_col, width_chars), from the pieces: the same characters, fewer at the line's end."""
    parts, pos, end = [], start_col, start_col + width_chars - 1
    while pos <= end:
        k, off = divmod(pos - 1, CHUNK_CHARS)
        take = min(end - pos + 1, CHUNK_CHARS - off)
        parts.append(f"__c{k}" if off == 0 and take == CHUNK_CHARS else f"substr(__c{k}, {off + 1}, {take})")
        pos += take
    return parts[0] if len(parts) == 1 else f"concat({', '.join(parts)})"


def field_text(f: Field, only_missover: bool) -> str:
    """The field's characters: those of the line in its columns (fewer at the line's end, none past it);
    MISSOVER (without TRUNCOVER or PAD) blanks a field the line ends in."""
    text = _columns(f.start_col, f.width_chars)
    if only_missover:
        text = f"CASE WHEN {LINE_CHARS} < {f.end_col} THEN '' ELSE {text} END"
    if f.cut_chars is not None and f.cut_chars < f.width_chars:
        text = f"substr({text}, 1, {f.cut_chars})"
    return text


def _double(x: float) -> str:
    return f"{sql_literal(repr(float(x)))}::DOUBLE"


def _missing(t: str, kind: str, letters: frozenset) -> str:
    """Blank or '.' (both readers); without an informat also `.A`-`.Z`, `._` and the MISSING statement's
    letters: special missing values, NULL in the data set like `.`."""
    tt = f"trim({t})"
    cond = f"{tt} IN ('', '.')"
    if kind == "plain":
        cond += f" OR regexp_full_match({tt}, '\\.[A-Za-z_]')"
        cases = sorted({c for x in letters for c in (x.upper(), x.lower())})
        if cases:
            cond += f" OR {tt} IN ({', '.join(sql_literal(c) for c in cases)})"
    return cond


def number_sql(t: str, f: Field, letters: frozenset = frozenset()) -> str:
    """A numeric field: column input without an informat ('plain') or w.d/BESTw. ('number', with its
    implied decimal places: a value written without a point or an exponent is divided by 10**d)."""
    v = f"TRY_CAST({t} AS DOUBLE)"
    taken = f"isfinite({v}) AND NOT contains({t}, '_') AND NOT contains({t}, '+-')"
    value = v
    if f.kind == "number" and f.decimals:
        plain_digits = f"NOT (contains({t}, '.') OR contains({t}, 'e') OR contains({t}, 'E'))"
        value = f"CASE WHEN {plain_digits} THEN {v} / {_double(10 ** f.decimals)} ELSE {v} END"
    return f"CASE WHEN {taken} THEN {value} WHEN {_missing(t, f.kind, letters)} THEN NULL ELSE {_INVALID} END"


def char_sql(t: str, f: Field) -> str:
    """A character field: $w. (and column input without an informat) drops leading blanks and reads a
    lone '.' as blank, $CHARw. keeps the text; then the variable's length cuts it and the data set keeps
    it without trailing blanks."""
    if f.kind == "$CHAR":
        return f"rtrim(substr({t}, 1, {f.length}))"
    lt = f"ltrim({t})"
    return f"CASE WHEN rtrim({lt}) = '.' THEN '' ELSE rtrim(substr({lt}, 1, {f.length})) END"


def value_sql(f: Field, only_missover: bool, letters: frozenset) -> str:
    """The field's value over the query's pieces of the line (chunks_sql) and its length (LINE_CHARS)."""
    t = field_text(f, only_missover)
    return char_sql(t, f) if f.kind in ("$", "$CHAR") else number_sql(t, f, letters)
