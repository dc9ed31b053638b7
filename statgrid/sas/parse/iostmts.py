"""PUT, INPUT, FILE and INFILE statements of the DATA step (SAS 9.4 Statements: PUT, INPUT — list, column,
formatted and named styles, pointer controls — FILE, INFILE)."""
from __future__ import annotations

from statgrid.sas.lexer import NAME, NUM, STR
from statgrid.sas.parse import dsast as D
from statgrid.sas.parse.expr import ExprParser, parse_expression
from statgrid.sas.parse.varlist import expand_numbered


def _pointer(cur, items, strings: bool = False) -> bool:
    """@n @(expr) +n +(expr) / #n and trailing @ @@ — and for INPUT (`strings`) @'text': the pointer
    moves past the next occurrence of the text (@charvar and @(char-expression) do so at run time);
    True if one was taken."""
    t = cur.peek()
    if not t.is_("@@", "@", "+", "/", "#"):
        return False
    cur.next()
    if t.is_("@@"):
        items.append(("hold2",))
    elif t.is_("/"):
        items.append(("slash",))
    elif t.is_("#"):
        items.append(("line", cur.expect_kind(NUM, "a line number").value))
    elif cur.at("("):                               # @(expression), +(expression)
        cur.next()
        items.append(("at" if t.is_("@") else "plus", parse_expression(cur)))
        cur.expect(")")
    elif t.is_("+"):
        n = cur.next()
        items.append(("plus", float(n.value) if n.kind == NUM else 0.0))
    elif cur.at_end():
        items.append(("hold",))
    elif strings and cur.peek().kind == STR:
        from statgrid.sas.parse import ast as A
        s = cur.next()
        items.append(("at", A.Str(s.line, s.col, s.value)))
    elif cur.peek().kind == NUM:
        items.append(("at", cur.next().value))
    elif cur.peek().kind == NAME:
        n = cur.next()
        from statgrid.sas.parse import ast as A
        items.append(("at", A.Var(n.line, n.col, n.upper, n.text)))
    else:
        items.append(("hold",))
    return True


def _columns(cur, start: int) -> tuple[int, int]:
    """Column input or output `start[-end]`, its first number (start) taken: (start, end)."""
    end = start
    if cur.at("-") and cur.peek(1).kind == NUM:
        cur.next()
        end = int(cur.next().value)
    return start, end


def parse_put(cur, stream, t):
    items = []
    while not cur.at_end():
        if _pointer(cur, items):
            continue
        tok = cur.peek()
        if tok.kind == STR:
            cur.next()
            items.append(("text", tok.value))
            continue
        if tok.is_("_ALL_"):
            cur.next()
            items.append(("all",))
            continue
        if tok.is_("_PAGE_"):
            cur.next()
            continue
        if tok.is_("_INFILE_") and not cur.peek(1).is_("="):
            cur.next()                              # the current input record (SAS 9.4 Statements: PUT)
            cols = _columns(cur, int(cur.next().value)) if cur.peek().kind == NUM else None
            items.append(("infile", cols))
            continue
        if cur.at("("):                             # (variables) (formats): SAS's formatted list
            items.append(_put_group(cur))
            continue
        # a variable or array element, named (`x=`), optionally with a format or columns
        target = ExprParser(cur).primary()
        named = bool(cur.at("=") and cur.next())
        fmt = cur.format_name() if cur.at_format() else ""
        colon = False
        if not fmt and cur.at(":") and cur.next():
            colon = True
            fmt = cur.format_name()
        cols = None
        align = ""
        if fmt and cur.at("-") and cur.peek(1).kind == NAME and cur.peek(1).upper in ("L", "R", "C"):
            cur.next()                              # `x 8.2 -l`: the formatted value aligned left/right/centre
            align = cur.next().upper
        if not fmt and cur.peek().kind == NUM and not named:
            cols = _columns(cur, int(cur.next().value))
            nxt = cur.peek()
            if nxt.kind == NUM and nxt.text.startswith(".") and nxt.text[1:].isdigit():
                cur.next()                          # `x 10-20 .2`: column output with 2 decimals
                cols = (*cols, int(nxt.text[1:]))
        items.append(("named" if named else "var", target, fmt, cols, colon, align))
    cur.expect_end("PUT")
    return D.Put(t.line, t.col, items)


def _put_group(cur):
    """`(variable-list) (format-list)` of PUT: the format list holds formats, `=` (named output, with an
    optional format), character strings, pointer controls and `n*` repeats (SAS 9.4 Statements: PUT,
    Formatted, "How to Group Variables and Formats"). Kept as ("group", variable-list items, elements);
    the variables are expanded when the step is compiled (the list may be `_ALL_` or `a--b`)."""
    from statgrid.sas.parse.expr import parse_var_list
    cur.expect("(")
    names = parse_var_list(cur, stop=(")",))
    if not names:
        raise cur.error("Syntax error in PUT", "a list of variables in parentheses")
    cur.expect(")")
    cur.expect("(", expected="(formats) after the list of variables")
    elements = _format_list(cur, "PUT")
    return ("group", names, elements, cur.peek().line, cur.peek().col)


def _format_list(cur, stmt: str) -> list:
    """The elements of a format (or informat) list up to its `)`: ("fmt", name, colon), ("eq", format)
    (PUT only), ("text", string) and pointer items, `n*element` repeated n times."""
    elements: list = []
    while not cur.at(")"):
        if cur.at_end():
            raise cur.error(f"Syntax error in {stmt}", "a ) to close the list of formats")
        if cur.accept(","):
            continue
        repeat = 1
        if cur.peek().kind == NUM and cur.peek(1).is_("*"):
            repeat = int(cur.next().value)
            cur.next()
        one: list = []
        if _pointer(cur, one):
            pass
        elif cur.peek().kind == STR and stmt == "PUT":
            one.append(("text", cur.next().value))
        elif stmt == "PUT" and cur.at("="):
            cur.next()
            one.append(("eq", cur.format_name() if cur.at_format() else ""))
        else:
            colon = bool(cur.accept(":"))
            if not cur.at_format():
                what = "a format such as 8. or $10." if stmt == "PUT" else "an informat such as 8. or $10."
                raise cur.error(f"Syntax error in {stmt}", f"{what} in the list")
            one.append(("fmt", cur.format_name(), colon))
        elements += one * repeat
    cur.expect(")")
    if not any(e[0] in ("fmt", "eq") for e in elements):
        raise cur.error(f"Syntax error in {stmt}", "at least one format in the list of formats")
    return elements


def parse_input(cur, stream, t):
    items = []
    while not cur.at_end():
        if _pointer(cur, items, strings=True):
            continue
        if cur.at("("):                             # (variables) (informats): a formatted list
            items += _input_group(cur)
            continue
        tok = cur.peek()
        if tok.kind != NAME:
            raise cur.error("Syntax error in INPUT", "a variable name or a pointer control")
        targets = _input_targets(cur)
        char = amp = colon = False
        quiet = 0                                   # ? and ??: SAS 9.4 Statements, INPUT, format modifiers
        while cur.at("$", "&", ":", "?"):
            m = cur.next()
            if m.is_("$"):
                char = True
            elif m.is_("&"):
                amp = True
            elif m.is_(":"):
                colon = True
            else:
                quiet = min(quiet + 1, 2)
        mode, start, end, informat = "list", 0, 0, ""
        if cur.at_format():
            informat = cur.format_name()
            if char and not informat.startswith("$"):
                informat = "$" + informat           # `name $10.`: the $ belongs to the informat
            mode = "list" if colon or amp else "fmt"
            char = char or informat.startswith("$")
        elif cur.peek().kind == NUM and not colon:
            n = cur.next()
            if "." in n.text:
                start = int(float(n.text))
            else:
                start = int(n.value)
            start, end = _columns(cur, start)
            mode = "col"
            if cur.at(".") and cur.peek(1).kind == NUM:
                cur.next()                          # `4-6 .2` written with a blank after the point
                informat = f"{end - start + 1}.{int(cur.next().value)}"
            elif cur.at("."):
                cur.next()
            elif cur.peek().kind == NUM and cur.peek().text.startswith("."):
                d = cur.next().text[1:]             # `.2`: that many implied decimal places (an explicit
                if d.isdigit() and not char:        # point in the field wins: SAS 9.4 Statements, INPUT, Column)
                    informat = f"{end - start + 1}.{int(d)}"
        if len(targets) > 1 and mode == "col":
            raise cur.error("A numbered variable list cannot be read with column input", "list or formatted input")
        items += [("var", t, char, mode, start, end, informat, amp, quiet) for t in targets]
    cur.expect_end("INPUT")
    return D.Input(t.line, t.col, items)


def _input_targets(cur) -> list:
    """One INPUT variable or array element, or a numbered list `x1-x5` (its variables in order)."""
    from statgrid.sas.parse import ast as A
    target = ExprParser(cur).primary()
    if isinstance(target, A.Var) and cur.at("-") and cur.peek(1).kind == NAME:
        cur.next()
        last = cur.next()
        return [A.Var(target.line, target.col, n.upper(), n) for n in expand_numbered(target.text, last.text)]
    return [target]


def _input_group(cur) -> list:
    """`(variables) (informats)`: SAS's formatted list — each variable takes the next informat of the
    list, the list used again from its start when the variables outnumber it; `:` before an informat
    reads that value as list input (SAS 9.4 Statements: INPUT, Formatted)."""
    cur.expect("(")
    targets = []
    while not cur.at(")"):
        if cur.at_end() or cur.peek().kind != NAME:
            raise cur.error("Syntax error in INPUT", "a variable name in the list of variables")
        targets += _input_targets(cur)
    cur.expect(")")
    cur.expect("(", expected="(informats) after the list of variables")
    elements = _format_list(cur, "INPUT")
    out, k, i = [], 0, 0
    while i < len(targets):                        # each variable takes the next informat, the list used
        e = elements[k % len(elements)]            # again from its start; pointer controls between them
        k += 1
        if e[0] == "fmt":
            fmt, colon = e[1], e[2]
            out.append(("var", targets[i], fmt.startswith("$"), "list" if colon else "fmt", 0, 0, fmt, False))
            i += 1
        else:
            out.append(e)
    return out


def parse_file(kind):
    def handler(cur, stream, t):
        tok = cur.next()
        if tok.kind == STR:
            target = ("path", tok.value)
        elif tok.is_("LOG", "PRINT", "DATALINES", "CARDS", "DATALINES4", "CARDS4"):
            target = tok.upper if tok.upper in ("LOG", "PRINT") else "DATALINES"
        elif tok.kind == NAME and cur.at("("):   # fileref(member): a member of an aggregate storage location
            cur.next()
            m = cur.next()
            if m.kind not in (NAME, STR):
                raise cur.error(f"Syntax error in {kind}", "a member name", m)
            cur.expect(")")
            # SAS on UNIX: an unquoted member name without an extension gets .dat (a quoted one is as written)
            member = m.value if m.kind == STR else (m.text if "." in m.text else m.text + ".dat")
            target = ("member", tok.upper, member)
        elif tok.kind == NAME:
            target = ("ref", tok.upper)
        else:
            raise cur.error(f"Syntax error in {kind}", "a file, a fileref, LOG, PRINT or DATALINES", tok)
        options = {}
        while not cur.at_end():
            key = cur.expect_name("an option").upper()
            if cur.accept("="):
                v = cur.next()
                if v.is_("("):
                    parts = []
                    while not cur.accept(")"):
                        parts.append(cur.next().value)
                    options[key] = parts
                else:
                    options[key] = v.value if v.kind in (STR, NUM) else v.text
            else:
                options[key] = True
        if target[0] == "path" and ("PIPE" in options or "FILEVAR" not in options and options.get("DEVICE") == "PIPE"):
            # INFILE/FILE 'command' PIPE runs a shell command: refused as FILENAME PIPE is (NOXCMD)
            from statgrid.sas.errors import SasError
            from statgrid.sas.errors import SHELL_ESCAPE_REFUSED
            raise SasError(SHELL_ESCAPE_REFUSED.format(what=f"{kind} PIPE"), t.line, t.col, kind)
        cur.expect_end(kind)
        return D.FileStmt(t.line, t.col, kind, target, options)
    return handler
