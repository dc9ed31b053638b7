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
                    colon = bool(e[2]) if e[0] == "fmt" and len(e) > 2 else False   # (x y) (:8.1)
                    items.append(("named" if e[0] == "eq" else "var", target, e[1], None, colon))
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
        if getattr(st, "set_error", False):        # the ERROR statement
            self.v[self.step.pdv.get("_ERROR_").slot] = 1.0
            if not st.items:
                return
        if getattr(st, "to_log", False) and self.out_target != "LOG":
            saved = self.out_target, self.out_buf, self.out_pending, self.out_opts
            self.out_target, self.out_buf, self.out_pending, self.out_opts = "LOG", "", False, {}
            try:
                self._put_line(st, vals)
            finally:
                self.out_target, self.out_buf, self.out_pending, self.out_opts = saved
            return
        self._put_line(st, vals)

    def _put_line(self, st, vals) -> None:
        buf = list(self.out_buf)
        pos = len(buf)
        k = 0
        # FILE DLM= / DSD: list output's values are separated by the delimiter, not a blank; the delimiter
        # goes before the next item written where the pointer stands (none after a line's last value)
        sep, dsd = self._out_delimiter()
        pending = self.out_pending and bool(buf)

        def write(text, at=None, listed=False):
            nonlocal pos, pending
            if at is not None:
                pos, pending = at, False
            if pending and pos == len(buf):
                text = sep + text
            pending = listed and sep is not None
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
                colon = bool(it[4]) if len(it) > 4 else False
                if it[3] is not None:              # column output: `x 10-20` or `x 10-20 .2`
                    write(self._column_text(val, fmt if it[2] else "", it[3]), it[3][0] - 1)
                    continue
                text = self._render(val, fmt, list_style=not it[2])
                align = it[5] if len(it) > 5 else ""
                if align:                          # -L -R -C after the format (SAS 9.4 Statements: PUT)
                    w, core = len(text), text.strip()
                    text = core.ljust(w) if align == "L" else core.rjust(w) if align == "R" else core.center(w)
                if colon:                          # modified list output: the formatted value, blanks removed
                    text = text.strip()
                if kind == "named":
                    name = var.name if var is not None else getattr(target, "text", "")
                    text = f"{name}={text.strip() if not it[2] else text}"
                    write(text + " ")
                elif not it[2] or colon:           # list output: a blank (or the FILE's delimiter) after it
                    if dsd and (sep in text or '"' in text):
                        text = '"' + text.replace('"', '""') + '"'
                    write(text if sep is not None else text + " ", listed=True)
                else:
                    write(text)
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
                pos, pending = int(x) - 1, False
            elif kind == "plus":
                x = it[1] if isinstance(it[1], (int, float)) else vals[k]
                if not isinstance(it[1], (int, float)):
                    k += 1
                pos, pending = pos + int(x), False
            elif kind == "slash":
                lines.append("".join(buf).rstrip())
                buf, pos, pending = [], 0, False
            elif kind in ("hold", "hold2"):
                hold = True
        if hold:
            self.out_buf, self.out_pending = "".join(buf), pending
        else:
            lines.append("".join(buf).rstrip())
            self.out_buf, self.out_pending = "", False
        for line in lines:
            self._emit(line)

    def _column_text(self, val, fmt, cols) -> str:
        """Column output `x start-end <.d>` (SAS 9.4 Statements: PUT, Column Output): a number right-aligned
        in the columns, in w.d with `.d`, else in BESTw. (or its format); a character value left-aligned in
        them, cut to their width."""
        width = max(cols[1] - cols[0] + 1, 1)
        if isinstance(val, str):
            return val[:width].ljust(width)
        d = cols[2] if len(cols) > 2 else None
        spec = f"{width}.{d}" if d is not None else (fmt or f"BEST{min(width, 32)}.")
        text = self._render(val, spec, list_style=False).strip()
        return text.rjust(width)

    def _out_delimiter(self) -> tuple[str | None, bool]:
        """(the current FILE's DLM= delimiter, or a comma for DSD, or None for a blank; DSD)."""
        opts = self.out_opts
        dsd = bool(opts.get("DSD"))
        dlm = opts.get("DLM") or opts.get("DELIMITER")
        if isinstance(dlm, list):
            dlm = "".join(dlm)
        if not isinstance(dlm, str) or not dlm:
            dlm = "," if dsd else None
        return (None if dlm == " " and not dsd else dlm), dsd

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
            self.print_count += 1
            if hasattr(self.step.log, "listing"):
                self.print_lines.append(line)     # one listing block for the step: its lines share pages
            else:
                self.step.log.put(line)
        else:
            out = self._open_out(t[1], self.out_label, self.out_opts)
            out["fh"].write(line + "\n")
            out["n"] += 1
            out["min"] = min(out["min"], len(line)) if out["n"] > 1 else len(line)
            out["max"] = max(out["max"], len(line))

    def set_output(self, st, path) -> None:
        """A FILE statement run: the PUT statements after it write to its file (opened now, the first time in
        the step: SAS's NOTE naming it; MOD appends to it, else it is written anew), LOG or PRINT."""
        t = st.target
        self.out_opts = st.options
        if isinstance(t, str):
            self.out_target = t
            return
        self.out_target, self.out_label = ("FILE", path), self._infile_label(t)
        self._open_out(path, self.out_label, st.options)

    def _open_out(self, path, label, opts) -> dict:
        out = self.out_files.get(path)
        if out is None:
            import datetime as _dt
            from pathlib import Path
            fh = open(path, "a" if opts.get("MOD") else "w")
            out = self.out_files[path] = {"fh": fh, "label": label, "n": 0, "min": 0, "max": 0}
            info = Path(path).stat()
            when = _dt.datetime.fromtimestamp(info.st_mtime).strftime("%d%b%Y:%H:%M:%S")
            lrecl = int(float(opts.get("LRECL") or 32767))
            self.step.log.note(f"The file {label} is:\nFilename={Path(path).resolve()},\n"
                               f"RECFM=V,LRECL={lrecl},File Size (bytes)={info.st_size},\nLast Modified={when}")
        return out

    def close_outputs(self) -> None:
        """The files written closed, with SAS's NOTEs: the records written to each and the shortest and
        longest, and the lines written to the PRINT file."""
        for out in self.out_files.values():
            out["fh"].close()
            text = f"{out['n']} records were written to the file {out['label']}."
            if out["n"]:
                text += f"\nThe minimum record length was {out['min']}.\nThe maximum record length was {out['max']}."
            self.step.log.note(text)
        self.out_files.clear()
        if self.print_count:
            self.step.log.note(f"{self.print_count} lines were written to file PRINT.")
            self.print_count = 0

    def flush_print(self) -> None:
        """FILE PRINT's lines so far into the listing, as one block (paged by the listing's PAGESIZE)."""
        if self.print_lines:
            lines, self.print_lines = self.print_lines, []
            self.step.log.listing("\n".join(lines), centered=False)
