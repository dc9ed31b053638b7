"""INFILE and FILE at run time, a mixin of textio.TextIO: which file an INFILE reads (a path, a fileref or a
member of a directory fileref, FILEVAR='s value as it changes), SAS's NOTEs on opening each file and on the
records read from it at the end, FILENAME= and END=, and where FILE sends PUT's lines (SAS 9.4 Statements:
INFILE, FILE; SAS 9.4 Companion for UNIX: aggregate storage locations)."""
from __future__ import annotations

from pathlib import Path

from statgrid.sas.datastep.records import DEFAULT_LRECL_F, LineSource, file_records, recfm_of
from statgrid.sas.errors import SasRuntimeError


class InfileMixin:
    def _paths_of(self, st) -> list:
        t = st.target
        program = self.step.program
        if isinstance(t, tuple) and t[0] == "path":
            return [Path(t[1])]
        if isinstance(t, tuple) and t[0] in ("ref", "member"):
            ref = program.filerefs.get(t[1]) or program.filerefs.get(t[1].lower())
            if ref is None:
                if st.options.get("FILEVAR"):
                    return []                      # FILEVAR=: the fileref only names the statement
                raise SasRuntimeError(f"No logical assign for filename {t[1]}", st.line, st.col, t[1],
                                      "a FILENAME statement before")
            if t[0] == "member":                   # fileref(member): a file in the fileref's directory
                return [Path(ref.paths[0]) / t[2]]
            return [Path(p) for p in ref.paths]
        return []

    def _lines_of(self, st):
        """The records of an INFILE: DATALINES' lines, or the files' records streamed one after another
        (a fileref of several files reads them in order). A missing file is an error when the INFILE
        statement first runs, before any record is read."""
        if st.target == "DATALINES":
            return list(self.datalines or [])
        return self._records_of(st, self._paths_of(st))

    def _records_of(self, st, paths: list):
        for p in paths:
            if not p.is_file():
                raise SasRuntimeError(f"Physical file does not exist, {p}", st.line, st.col, str(p))
        self.infile_paths = paths

        def records():
            for p in paths:
                self._note_infile(st, p)
                yield from file_records(p, st.options)
        return records()

    def _infile_label(self, target) -> str:
        """How SAS names an infile in its NOTEs: a fileref by name, a physical file quoted."""
        if target[0] == "member":
            return f"{target[1].upper()}({target[2]})"
        return f"'{target[1]}'" if target[0] == "path" else target[1].upper()

    def _note_infile(self, st, path) -> None:
        """SAS's NOTE when an INFILE opens a file: its name and attributes (SAS 9.4 Companion for UNIX)."""
        opts = st.options
        recfm = recfm_of(opts)
        lrecl = int(opts.get("LRECL") or (DEFAULT_LRECL_F if recfm == "F" else 32767))
        import datetime as _dt
        try:
            info = path.stat()
            size = info.st_size
            when = _dt.datetime.fromtimestamp(info.st_mtime).strftime("%d%b%Y:%H:%M:%S")
        except OSError:
            size, when = 0, ""
        self.step.log.note(f"The infile {self._infile_label(st.target)} is:\nFilename={path},\n"
                           f"RECFM={recfm},LRECL={lrecl},File Size (bytes)={size},\nLast Modified={when}")

    def _filevar(self, st) -> str | None:
        """FILEVAR=var: the file the INFILE reads is the variable's value (a physical name); when it changes,
        the current file is closed and the new one opened (SAS 9.4 Statements: INFILE, FILEVAR=)."""
        name = st.options.get("FILEVAR")
        if not isinstance(name, str):
            return None
        var = self.step.pdv.get(name)
        val = self.v[var.slot] if var is not None else None
        if not isinstance(val, str) or not val.strip():
            raise SasRuntimeError(f"The FILEVAR= variable {name} has no file name", st.line, st.col, name,
                                  "a physical file name in the variable")
        return val.strip()

    def run_file(self, st) -> None:
        if st.kind == "INFILE":
            fv = self._filevar(st)
            key = id(st) if fv is None else (id(st), fv)
            if self.infile is None or self.infile[2:] != (key,):
                opened = self.opened.get(key)      # an INFILE read before in this step goes on where it was
                if fv is not None:                 # FILEVAR=: one file open at a time per INFILE statement
                    for k in [k for k in self.opened if isinstance(k, tuple) and k[0] == id(st) and k != key]:
                        self.closed.append(self.opened.pop(k))
                        self.closed[-1][1].close()
                if opened is None:
                    lines = self._lines_of(st) if fv is None else self._records_of(st, [Path(fv)])
                    opened = self.opened[key] = (st.options, LineSource(lines, st.options), key, st.target)
                    named = st.options.get("FILENAME")
                    if isinstance(named, str) and self.infile_paths:   # FILENAME=var: the open file's name
                        var = self.step.pdv.get(named)
                        if var is not None:
                            self.v[var.slot] = str(self.infile_paths[0])
                self.infile = opened[:3]
                self.line_base = self.line_base if st.target == "DATALINES" else 0
                self.infile_name = st.target
                self.reads = True
            end = st.options.get("END")
            if end:
                var = self.step.pdv.get(end)
                if var is not None:
                    self.v[var.slot] = 1.0 if self.infile[1].at_end() else 0.0
        else:
            t = st.target
            self.set_output(st, None if isinstance(t, str) else self._out_path(t))

    def _out_path(self, t) -> str:
        if t[0] == "path":
            return t[1]
        ref = self.step.program.filerefs.get(t[1]) or self.step.program.filerefs.get(t[1].lower())
        if ref is None:
            raise SasRuntimeError(f"No logical assign for filename {t[1]}", text=t[1])
        return str(ref.paths[0])

    def _close_infiles(self) -> None:
        """Per file read: SAS's "N records were read from the infile X." with the shortest and longest
        record when any was read; the files closed."""
        for _, src, _, target in [*self.closed, *self.opened.values()]:
            if self.inputs and isinstance(target, tuple):
                text = f"{src.i} records were read from the infile {self._infile_label(target)}."
                if src.i:
                    text += (f"\nThe minimum record length was {src.min_len}."
                             f"\nThe maximum record length was {src.max_len}.")
                self.step.log.note(text)
            src.close()
        self.opened.clear()
        self.closed.clear()
