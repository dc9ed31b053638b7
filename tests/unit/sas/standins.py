"""A stand-in program for calling DATA step functions directly (unit tests of the function registry):
the attributes FunctionRuntime reads, and a log that keeps the NOTEs a function writes."""
from __future__ import annotations


class Log:
    def __init__(self):
        self.notes = []

    def note(self, msg):
        self.notes.append(msg)


class Program:
    def __init__(self):
        self.log, self.extras, self.symbols, self.options, self.formats, self.session = Log(), {}, None, None, None, None
        self.filerefs = {}
