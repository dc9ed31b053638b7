"""DATA step statement parser: the step's Statements (after the DATA statement) → parse/dsast.py trees,
DO/END and SELECT/END nested, ELSE joined to its IF, labels kept (SAS 9.4 Statements reference)."""
from __future__ import annotations

from typing import Any

from statgrid.sas.cursor import TokenCursor
from statgrid.sas.parse.dslist import dataset_list
from statgrid.sas.errors import SasSyntaxError
from statgrid.sas.lexer import NAME, NUM, OP, SEMI, STR
from statgrid.sas.parse import ast as A
from statgrid.sas.parse import dsast as D
from statgrid.sas.parse.expr import parse_expression, parse_var_list
from statgrid.sas.parse.iostmts import parse_file, parse_input, parse_put

ASSIGN_STOP = frozenset()


class Stream:
    """The step's statements, one at a time, each with its own cursor."""

    def __init__(self, statements: list, program: Any = None):
        self.statements, self.i, self.program = statements, 0, program

    def next(self) -> TokenCursor | None:
        if self.i >= len(self.statements):
            return None
        s = self.statements[self.i]
        self.i += 1
        cur = TokenCursor(s.tokens, s.source)
        cur.statement = s
        return cur

    def peek_keyword(self) -> str:
        if self.i >= len(self.statements):
            return ""
        return self.statements[self.i].keyword


def parse_block(stream: Stream, until_end: bool = False, opener=None) -> list:
    out = []
    while True:
        cur = stream.next()
        if cur is None:
            if until_end:
                t = opener
                raise SasSyntaxError("There is no matching END statement for this DO or SELECT", t.line, t.col,
                                     t.text, "END;")
            return out
        if cur.at("END") and cur.peek(1).kind in ("SEMI", "EOF"):
            if until_end:
                return out
            raise cur.error("END statement without a DO or SELECT", "a DO or SELECT before it")
        st = parse_statement(cur, stream)
        if st is not None:
            out.append(st)


def parse_statement(cur: TokenCursor, stream: Stream):
    t = cur.peek()
    if t.kind in ("SEMI", "EOF"):
        return D.Simple(t.line, t.col, "EMPTY")
    # label:
    if t.kind == NAME and cur.peek(1).is_(":") and not cur.peek(2).is_("="):
        cur.next(), cur.next()
        inner = parse_statement(cur, stream)
        return D.Simple(t.line, t.col, "LABEL", [t.upper, inner])
    kw = t.upper if t.kind == NAME else ""
    nxt = cur.peek(1)
    is_assign = nxt.is_("=") or nxt.is_("{", "[") or (nxt.is_("(") and kw not in _PAREN_KEYWORDS) or \
        (nxt.is_(".") and t.touches(nxt) and cur.peek(2).kind == NAME and cur.peek(3).is_("="))
    if kw == "SUBSTR" and nxt.is_("("):
        is_assign = True
    if kw and nxt.is_("+") and kw not in ("PUT", "PUTLOG", "ERROR", "INPUT"):
        return _sum(cur)
    if kw and is_assign and not (kw in ("IF", "WHERE", "SELECT", "WHEN") and nxt.is_("(")):
        return _assign(cur)
    fn = _HANDLERS.get(kw)
    if fn is None:
        if t.kind == NAME and nxt.is_(".") and t.touches(nxt):        # h.add(); h.definekey('k');
            e = parse_expression(cur)
            if isinstance(e, A.Method):
                cur.expect_end()
                return D.MethodStmt(t.line, t.col, e)
        raise cur.error("Statement is not valid or it is used out of proper order", "a DATA step statement")
    cur.next()
    return fn(cur, stream, t)


_PAREN_KEYWORDS = frozenset({"IF", "WHERE", "SELECT", "WHEN", "PUT", "PUTLOG", "INPUT", "OUTPUT", "CALL", "DO", "RETURN",
                             "ABORT", "FILE", "INFILE", "SET", "MERGE", "KEEP", "DROP"})


def _target(cur: TokenCursor):
    t = cur.peek()
    e = parse_expression(cur.__class__(cur.tokens[cur.i:cur.i + _target_len(cur)]))
    cur.i += _target_len(cur)
    if not isinstance(e, (A.Var, A.Index, A.Call)):
        raise cur.error("The left side of = must be a variable, an array element or SUBSTR", "a variable", t)
    return e


def _target_len(cur: TokenCursor) -> int:
    """Tokens of the assignment target: a name with its dotted part or one bracketed group."""
    i, toks = cur.i, cur.tokens
    j = i + 1
    if toks[j].is_(".") and toks[i].touches(toks[j]):
        return 3
    if toks[j].is_("(", "{", "["):
        depth = 0
        while True:
            if toks[j].is_("(", "{", "["):
                depth += 1
            elif toks[j].is_(")", "}", "]"):
                depth -= 1
            if toks[j].kind in ("SEMI", "EOF"):
                raise cur.error("Unbalanced parentheses", ")")
            j += 1
            if depth == 0:
                return j - i
    return 1


def _assign(cur):
    t = cur.peek()
    target = _target(cur)
    cur.expect("=", expected="=")
    e = parse_expression(cur)
    cur.expect_end("assignment")
    return D.Assign(t.line, t.col, target, e)


def _sum(cur):
    t = cur.peek()
    target = _target(cur)
    cur.expect("+")
    e = parse_expression(cur)
    cur.expect_end("sum")
    return D.SumStmt(t.line, t.col, target, e)


def _if(cur, stream, t):
    cond = parse_expression(cur)
    if cur.at_end():
        cur.expect_end()
        return D.If(t.line, t.col, cond, None)
    cur.expect("THEN", expected="THEN or ;")
    then = parse_statement(cur, stream) if not cur.at_end() else D.Simple(t.line, t.col, "EMPTY")
    else_ = None
    if stream.peek_keyword() == "ELSE":
        c2 = stream.next()
        c2.next()
        else_ = parse_statement(c2, stream) if not c2.at_end() else D.Simple(t.line, t.col, "EMPTY")
    return D.If(t.line, t.col, cond, then, else_)


def _else(cur, stream, t):
    raise SasSyntaxError("ELSE without a matching IF-THEN", t.line, t.col, "ELSE", "an IF-THEN before it")


def _do(cur, stream, t):
    node = D.Do(t.line, t.col, "block")
    if cur.accept("WHILE"):
        node.kind, node.while_ = "while", _paren(cur)
    elif cur.accept("UNTIL"):
        node.kind, node.until = "until", _paren(cur)
    elif cur.accept("OVER"):
        node.kind, node.array = "over", cur.expect_name("an array name").upper()
    elif not cur.at_end():
        node.kind = "iter"
        node.var = _target(cur)
        cur.expect("=", expected="=")
        while True:
            start = parse_expression(cur)
            stop = by = None
            if cur.accept("TO"):
                stop = parse_expression(cur)
                if cur.accept("BY"):
                    by = parse_expression(cur)
            node.specs.append((start, stop, by))
            if not cur.accept(","):
                break
        if cur.accept("WHILE"):
            node.while_ = _paren(cur)
        elif cur.accept("UNTIL"):
            node.until = _paren(cur)
    cur.expect_end("DO")
    node.body = parse_block(stream, True, t)
    return node


def _paren(cur):
    cur.expect("(", expected="(")
    e = parse_expression(cur)
    cur.expect(")", expected=")")
    return e


def _select(cur, stream, t):
    expr = _paren(cur) if cur.at("(") else None
    cur.expect_end("SELECT")
    node = D.Select(t.line, t.col, expr, [])
    while True:
        c = stream.next()
        if c is None:
            raise SasSyntaxError("There is no matching END statement for this SELECT", t.line, t.col, "SELECT", "END;")
        if c.at("END"):
            c.next()
            c.expect_end()
            return node
        if c.at("WHEN"):
            c.next()
            c.expect("(", expected="(")
            exprs = [parse_expression(c)]
            while c.accept(","):
                exprs.append(parse_expression(c))
            c.expect(")", expected=")")
            st = parse_statement(c, stream) if not c.at_end() else D.Simple(c.peek().line, 0, "EMPTY")
            node.whens.append((exprs, st))
        elif c.at("OTHERWISE"):
            c.next()
            node.has_otherwise = True
            node.otherwise = parse_statement(c, stream) if not c.at_end() else None
        else:
            raise c.error("Only WHEN, OTHERWISE or END may appear in a SELECT group", "WHEN, OTHERWISE or END")


def _simple(kind):
    def handler(cur, stream, t):
        args = []
        if kind == "OUTPUT":
            while not cur.at_end():
                args.append(cur.dotted_name("a data set name").upper())
        elif kind in ("GOTO", "LINK"):
            args.append(cur.expect_name("a statement label").upper())
        elif kind == "ABORT":
            while not cur.at_end():
                tok = cur.next()
                args.append(tok.value if tok.kind == NUM else tok.upper)
        elif kind == "RETURN" and not cur.at_end():
            raise cur.error("Syntax error in RETURN", ";")
        cur.expect_end(kind)
        return D.Simple(t.line, t.col, "GOTO" if kind == "GO" else kind, args)
    return handler


def _missing(cur, stream, t):
    """MISSING a b _; — letters INPUT reads as the special missing values .A .B ._ (SAS 9.4 Statements)."""
    letters = []
    while not cur.at_end():
        tok = cur.next()
        if tok.kind != NAME or len(tok.text) != 1:
            raise cur.error("The MISSING statement takes single letters or _", "a letter A-Z or _", tok)
        letters.append(tok.text)
    cur.expect_end("MISSING")
    return D.Simple(t.line, t.col, "MISSING", letters)


def _goto_word(cur, stream, t):
    cur.expect("TO")
    return _simple("GOTO")(cur, stream, t)


def _constant(cur):
    t = cur.next()
    if t.kind == STR:
        return t.value
    sign = 1.0
    if t.is_("-", "+"):
        sign = -1.0 if t.text == "-" else 1.0
        t = cur.next()
    if t.kind == NUM:
        return sign * t.value
    if t.is_("."):
        nxt = cur.peek()
        if nxt.kind == NAME and len(nxt.text) == 1 and t.touches(nxt):
            cur.next()
            from statgrid.sas.values import special_missing
            return special_missing(nxt.text)
        return float("nan")
    raise cur.error("Syntax error: a constant is expected", "a number or a quoted string", t)


def _init_list(cur) -> list:
    """`(1 2 3)`, `(3*0)`, `(2*(1 2))` → values."""
    out = []
    while not cur.accept(")"):
        if cur.accept(","):
            continue
        if cur.peek().kind == NUM and cur.peek(1).is_("*"):
            n = int(cur.next().value)
            cur.next()
            if cur.accept("("):
                inner = _init_list(cur)
            else:
                inner = [_constant(cur)]
            out += inner * n
        else:
            out.append(_constant(cur))
    return out


def _retain(cur, stream, t):
    items, all_ = [], False
    while not cur.at_end():
        names = parse_var_list(cur)
        if any(i == ("special", "_ALL_") for i in names):
            all_ = True
        vals, paren = [], False
        if cur.accept("("):
            vals, paren = _init_list(cur), True
        elif not cur.at_end() and (cur.peek().kind in (NUM, STR) or cur.at("-", ".")):
            vals = [_constant(cur)]
        if not names and not vals:
            raise cur.error("Syntax error in RETAIN", "variable names or initial values")
        if vals and not paren:
            vals = ("all", vals[0])          # `retain m1-m5 1;`: every variable of the list starts at 1
        items.append((names, vals))
    cur.expect_end("RETAIN")
    return D.Retain(t.line, t.col, items, all_)


def _length_value(cur):
    char = bool(cur.accept("$"))
    n = cur.expect_kind(NUM, "a length")
    return ("char" if char else "num"), int(n.value)


def _length(cur, stream, t):
    items, default, pending = [], None, []
    while not cur.at_end():
        if cur.at("DEFAULT") and cur.peek(1).is_("="):
            cur.next(), cur.next()
            default = int(cur.expect_kind(NUM, "a length").value)
            continue
        if cur.at("$") or cur.peek().kind == NUM:
            kind, n = _length_value(cur)
            items.append((pending, kind, n))
            pending = []
            continue
        got = parse_var_list(cur, stop=("$",))
        if not got:
            raise cur.error("Syntax error in LENGTH", "variable names and lengths")
        pending += got
    if pending:
        raise cur.error("A LENGTH statement ends without a length for its last variables", "a length such as $ 10")
    cur.expect_end("LENGTH")
    return D.Length(t.line, t.col, items, default)


def _array(cur, stream, t):
    text = cur.expect_name("an array name")
    name = text.upper()
    dims, lower = [], []
    index_var = ""
    if cur.at("(") and cur.peek(1).kind == "NAME" and cur.peek(2).text == ")" \
            and cur.peek(1).upper not in ("_TEMPORARY_",):
        # an implicit array's index variable: ARRAY name (index-variable) elements (SAS 9.4 Statements:
        # ARRAY, implicit; DO OVER and a bare reference to the array use it)
        cur.next()
        index_var = cur.next().text
        cur.next()
    elif cur.at("{", "[", "("):
        close = {"{": "}", "[": "]", "(": ")"}[cur.next().text]
        while not cur.accept(close):
            if cur.accept(","):
                continue
            if cur.accept("*"):
                dims.append("*")
                lower.append(1)
                continue
            lo = cur.expect_kind(NUM, "a dimension").value
            if cur.accept(":"):
                hi = cur.expect_kind(NUM, "an upper bound").value
                dims.append(int(hi - lo + 1))
                lower.append(int(lo))
            else:
                dims.append(int(lo))
                lower.append(1)
    char, length = False, None
    if cur.accept("$"):
        char = True
        if cur.peek().kind == NUM:
            length = int(cur.next().value)
    elif cur.peek().kind == NUM:
        length = int(cur.next().value)
    temporary, elements, init = False, [], []
    if cur.accept("_TEMPORARY_"):
        temporary = True
    else:
        elements = parse_var_list(cur, stop=("(",))
    if cur.accept("("):
        init = _init_list(cur)
    cur.expect_end("ARRAY")
    node = D.Array(t.line, t.col, name, dims, char, length, elements, init, temporary, lower, text)
    node.index_var = index_var
    return node


def _var_attrs(cur, t, kind: str, items: list):
    """The end of a statement that sets variables' attributes (KEEP, DROP, RENAME, LABEL, FORMAT,
    INFORMAT, ATTRIB): its `;`, then the node."""
    cur.expect_end(kind)
    return D.VarAttrs(t.line, t.col, kind, items)


def _varlist_stmt(kind):
    def handler(cur, stream, t):
        return _var_attrs(cur, t, kind, parse_var_list(cur))
    return handler


def _name_pairs(cur, t, kind: str, name_of, value_of):
    """`name = value …` (RENAME, LABEL): the (name, value) pairs, each side as name_of/value_of reads it."""
    items = []
    while not cur.at_end():
        name = name_of(cur)
        cur.expect("=")
        items.append((name, value_of(cur)))
    return _var_attrs(cur, t, kind, items)


def _rename(cur, stream, t):
    return _name_pairs(cur, t, "RENAME", lambda c: c.expect_name("a variable").upper(),
                       lambda c: c.expect_name("a new name"))


def _label_text(cur) -> str:
    v = cur.next()
    return v.value if v.kind == STR else v.text


def _label(cur, stream, t):
    return _name_pairs(cur, t, "LABEL", lambda c: c.dotted_name("a variable"), _label_text)


def _format(kind):
    def handler(cur, stream, t):
        items, pending = [], []
        while not cur.at_end():
            if cur.at_format():
                items.append((pending, cur.format_name()))
                pending = []
                continue
            got = parse_var_list(cur, stop=("$",), formats=True)
            if not got:
                raise cur.error(f"Syntax error in {kind}", "variables and a format")
            pending += got
        if pending:
            items.append((pending, ""))                 # no format: remove the format
        return _var_attrs(cur, t, kind, items)
    return handler


def _attrib(cur, stream, t):
    items = []
    while not cur.at_end():
        names = parse_var_list(cur)
        attrs = {}
        while cur.peek().kind == NAME and cur.peek(1).is_("="):
            key = cur.next().upper
            cur.next()
            if key in ("FORMAT", "INFORMAT"):
                attrs[key] = cur.format_name()
            elif key == "LENGTH":
                attrs[key] = _length_value(cur)
            elif key == "LABEL":
                attrs[key] = cur.next().value
            else:
                raise cur.error(f"Unknown ATTRIB attribute {key}", "FORMAT=, INFORMAT=, LABEL= or LENGTH=")
        items.append((names, attrs))
    return _var_attrs(cur, t, "ATTRIB", items)


def _set(kind):
    def handler(cur, stream, t):
        node = D.SetStmt(t.line, t.col, kind, [])
        while not cur.at_end():
            if cur.peek().kind == NAME and cur.peek(1).is_("=") and cur.peek().upper in ("END", "POINT", "NOBS", "KEY",
                                                                                              "INDSNAME", "OPEN", "CUROBS"):
                key = cur.next().upper
                cur.next()
                setattr(node, key.lower(), cur.expect_name("a variable name")) if key in ("END", "POINT", "NOBS") \
                    else cur.next()
                continue
            node.datasets += dataset_list(cur, stream.program)
        cur.expect_end(kind)
        return node
    return handler


def _by(cur, stream, t):
    vars_, notsorted = [], False
    desc = False
    while not cur.at_end():
        if cur.accept("DESCENDING"):
            desc = True
            continue
        if cur.accept("NOTSORTED"):
            notsorted = True
            continue
        vars_.append((cur.expect_name("a BY variable"), desc))
        desc = False
    if not vars_:
        raise cur.error("A BY statement needs variables", "variable names")
    cur.expect_end("BY")
    return D.By(t.line, t.col, vars_, notsorted)


# a variable named ALSO compared by a mnemonic (`where also in (1 2)`) is not WHERE ALSO
_WHERE_WORD_OPS = ("EQ", "NE", "GT", "LT", "GE", "LE", "IN", "NOT", "AND", "OR", "IS", "LIKE", "BETWEEN", "CONTAINS")


def _where(cur, stream, t):
    start = cur.i
    # WHERE SAME AND expr / WHERE ALSO expr add to the step's WHERE; a plain WHERE replaces it
    same = bool(cur.at("SAME") and cur.peek(1).is_("AND") and cur.next() and cur.next()) or \
        bool(cur.at("ALSO") and cur.peek(1).kind not in (OP, SEMI) and not cur.peek(1).is_(*_WHERE_WORD_OPS)
             and cur.next())
    e = parse_expression(cur, where=True)
    text = " ".join(x.text for x in cur.tokens[start:cur.i])
    cur.expect_end("WHERE")
    w = D.Where(t.line, t.col, e, text)
    w.same = same
    return w


def _call(cur, stream, t):
    name = cur.expect_name("a CALL routine").upper()
    cur.expect("(", expected="(")
    args = []
    if not cur.accept(")"):
        while True:
            if cur.at("OF"):
                o = cur.next()
                args.append(A.OfList(o.line, o.col, parse_var_list(cur, stop=(")", ","))))
            else:
                args.append(parse_expression(cur))
            if cur.accept(")"):
                break
            cur.expect(",", expected=", or )")
    cur.expect_end("CALL")
    return D.CallStmt(t.line, t.col, name, args)


def _declare(cur, stream, t):
    kind = cur.expect_name("HASH or HITER").upper()
    name = cur.expect_name("an object name").upper()
    args = []
    if cur.at("("):
        meth = A.Method(t.line, t.col, name, "NEW", [])
        from statgrid.sas.parse.expr import ExprParser
        meth.args = ExprParser(cur)._method_args()
        args = meth.args
    cur.expect_end("DECLARE")
    return D.Declare(t.line, t.col, kind, name, args)


def _ignored(cur, stream, t):
    while not cur.at_end():
        cur.next()
    cur.expect_end()
    return D.Simple(t.line, t.col, "EMPTY")


def _datalines(cur, stream, t):
    cur.expect_end()
    return D.Simple(t.line, t.col, "DATALINES", [getattr(cur, "statement", None)])


def _putlog(cur, stream, t):
    """PUTLOG: PUT's specifications, written to the SAS log whatever FILE is current (SAS 9.4 Statements)."""
    st = parse_put(cur, stream, t)
    st.to_log = True
    return st


def _error_stmt(cur, stream, t):
    """ERROR <message>: _ERROR_ set to 1 and the message (PUT's specifications) written to the log (SAS 9.4
    Statements: ERROR)."""
    st = _putlog(cur, stream, t)
    st.set_error = True
    return st


_HANDLERS = {
    "IF": _if, "ELSE": _else, "DO": _do, "SELECT": _select,
    "OUTPUT": _simple("OUTPUT"), "DELETE": _simple("DELETE"), "STOP": _simple("STOP"), "LEAVE": _simple("LEAVE"),
    "CONTINUE": _simple("CONTINUE"), "RETURN": _simple("RETURN"), "ABORT": _simple("ABORT"),
    "GOTO": _simple("GOTO"), "GO": _goto_word, "LINK": _simple("LINK"),
    "MISSING": _missing, "RETAIN": _retain, "LENGTH": _length, "ARRAY": _array,
    "KEEP": _varlist_stmt("KEEP"), "DROP": _varlist_stmt("DROP"), "RENAME": _rename, "LABEL": _label,
    "FORMAT": _format("FORMAT"), "INFORMAT": _format("INFORMAT"), "ATTRIB": _attrib,
    "SET": _set("SET"), "MERGE": _set("MERGE"), "BY": _by, "WHERE": _where, "CALL": _call,
    "PUT": parse_put, "PUTLOG": _putlog, "ERROR": _error_stmt, "INPUT": parse_input, "FILE": parse_file("FILE"), "INFILE": parse_file("INFILE"),
    "DECLARE": _declare, "DCL": _declare,
    "DATALINES": _datalines, "CARDS": _datalines, "LINES": _datalines, "DATALINES4": _datalines,
    "CARDS4": _datalines, "LINES4": _datalines, "RUN": _ignored,
}
