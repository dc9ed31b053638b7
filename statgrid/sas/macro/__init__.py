"""The SAS macro processor (SAS 9.4 Macro Language Reference): processor.py (statements out of program
text), execute.py (resolution and macro execution, statgrid's limits), parser.py (macro compiler),
evaluate.py (%EVAL/%SYSEVALF), functions.py (macro functions), symbols.py (symbol tables and automatic
variables), quoting.py (macro quoting), scanner.py (character-level scanning)."""
