"""PUT and FILE at run time (SAS 9.4 Statements: PUT — list, named, formatted, column output, pointer
controls; FILE LOG, PRINT or an external file with DLM=, DSD, MOD): the output buffer, the lines written, and
SAS's NOTEs on the files written."""
from __future__ import annotations

from statgrid.sas.parse import ast as A


def _fmt(value, spec, catalog=None) -> str:
    from statgrid.sas.formats import format_value
    return format_value(value, spec, catalog)


class PutMixin:
    # -- PUT -------------------------------------------------------------------------------------------------------
    def _expand_put(self, st) -> None:
        """Compile-time shape of a PUT: each `(variables) (formats)` group becomes one item per variable
        (with its format, `=` for named output) and the strings and pointer controls between them, the
        format list used again from its start while variables remain (SAS 9.4 Statements: PUT, Formatted);
        an unknown format is SAS's ERROR 48-59 ("The format X was not found or could not be loaded.")."""
        pdv = self.step.pdv
        items = []
        for it in st.items:
            if it[0] != "group":
                items.append(it)
                continue
            _, names, elements, line, col = it
            listed = [n for n in pdv.expand(names, line, col, declare=False)
                      if n in pdv.vars and not pdv.vars[n].auto]
            k, i = 0, 0
            while i < len(listed):
                e = elements[k % len(elements)]
                k += 1
                if e[0] in ("fmt", "eq"):
                    v = pdv.vars[listed[i]]
                    target = A.Var(line, col, listed[i], v.name)
                    items.append(("named" if e[0] == "eq" else "var", target, e[1], None, False))
                    i += 1
                else:
                    items.append(e)
        st.items[:] = items
        from statgrid.sas.formats import known_format, not_found, parse_spec
        catalog = self.step.program.formats
        for it in st.items:
            if it[0] in ("var", "named") and it[2]:
                spec = parse_spec(it[2])
                if not known_format(spec, catalog):
                    target = it[1]
                    raise not_found(spec, line=getattr(target, "line", st.line), col=getattr(target, "col", st.col))

    def put(self, gen, st, d) -> None:
        self._expand_put(st)
        key = gen.x.const(st)
        parts = []
        for it in st.items:
            if it[0] in ("var", "named"):
                s, kind, length = gen.x.gen(it[1])
                parts.append(s)
            elif it[0] in ("at", "plus") and not isinstance(it[1], (int, float)):
                parts.append(gen.x.as_num(it[1]))
        gen.emit(d, f"PUT({key}, ({', '.join(parts)}{',' if len(parts) == 1 else ''}))")
        self.step.ns["PUT"] = self.run_put

    def run_put(self, st, vals) -> None:
        buf = list(self.out_buf)
        pos = len(buf)
        k = 0

        def write(text, at=None):
            nonlocal pos
            if at is not None:
                pos = at
            if pos > len(buf):
                buf.extend(" " * (pos - len(buf)))
            buf[pos:pos + len(text)] = list(text)
            pos += len(text)

        lines = []
        hold = False
        for it in st.items:
            kind = it[0]
            if kind == "text":
                write(it[1])
            elif kind in ("var", "named"):
                val = vals[k]
                k += 1
                target, fmt = it[1], it[2]
                var = self.step.pdv.get(target.name) if isinstance(target, A.Var) else None
                fmt = fmt or (var.format if var is not None else "")
                text = self._render(val, fmt, list_style=not it[2])
                if kind == "named":
                    name = var.name if var is not None else getattr(target, "text", "")
                    text = f"{name}={text.strip() if not it[2] else text}"
                if it[3] is not None:
                    write(text.rjust(it[3][1] - it[3][0] + 1) if not isinstance(val, str) else text, it[3][0] - 1)
                else:
                    write(text + (" " if not it[2] or kind == "named" else ""))
            elif kind == "infile":                 # _INFILE_: the current input record (as the program left it)
                text = self.v[self.infile_slot] if self.infile_slot is not None else self.cur_line
                if it[1] is not None:
                    write(text[:it[1][1] - it[1][0] + 1].ljust(it[1][1] - it[1][0] + 1), it[1][0] - 1)
                else:
                    write(text + " ")
            elif kind == "all":
                for var in self._listed_vars():
                    write(f"{var.name}={self._render(self.v[var.slot], var.format, True).strip()} ")
            elif kind == "at":
                x = it[1] if isinstance(it[1], (int, float)) else vals[k]
                if not isinstance(it[1], (int, float)):
                    k += 1
                pos = int(x) - 1
            elif kind == "plus":
                x = it[1] if isinstance(it[1], (int, float)) else vals[k]
                if not isinstance(it[1], (int, float)):
                    k += 1
                pos += int(x)
            elif kind == "slash":
                lines.append("".join(buf).rstrip())
                buf, pos = [], 0
            elif kind in ("hold", "hold2"):
                hold = True
        if hold:
            self.out_buf = "".join(buf)
        else:
            lines.append("".join(buf).rstrip())
            self.out_buf = ""
        for line in lines:
            self._emit(line)

    def _render(self, val, fmt, list_style) -> str:
        if isinstance(val, str):
            if fmt:
                try:
                    return _fmt(val, fmt, self.step.program.formats)
                except Exception:  # noqa: BLE001
                    return val
            return val.rstrip(" ") if list_style else val
        if isinstance(val, bool):
            val = 1.0 if val else 0.0
        try:
            text = _fmt(val, fmt or "BEST12.", self.step.program.formats)
        except Exception:  # noqa: BLE001
            text = "." if val != val else f"{val:g}"
        return text.strip() if (list_style and not fmt) else text

    def _emit(self, line: str) -> None:
        t = self.out_target
        if t == "LOG":
            self.step.log.put(line)
        elif t == "PRINT":
            if hasattr(self.step.log, "listing"):
                self.print_lines.append(line)     # one listing block for the step: its lines share pages
            else:
                self.step.log.put(line)
        else:
            path = t[1]
            fh = self.out_files.get(path)
            if fh is None:
                fh = self.out_files[path] = open(path, "w")
            fh.write(line + "\n")

    def flush_print(self) -> None:
        """FILE PRINT's lines so far into the listing, as one block (paged by the listing's PAGESIZE)."""
        if self.print_lines:
            lines, self.print_lines = self.print_lines, []
            self.step.log.listing("\n".join(lines), centered=False)
