"""NLMIXED's programming statements run over whole columns at once.

The statements are parsed by the DATA step parser (statgrid.sas.parse.statements: the same assignments,
IF-THEN/ELSE, DO; … END; blocks and expressions a DATA step takes) and evaluated here over numpy arrays: the
likelihood needs them for every observation, at every quadrature point, at every trial parameter vector —
thousands of passes over the data — so the DATA step's row-at-a-time evaluator would cost a Python call per
row per pass. IF/ELSE runs both branches over the rows where they apply (a mask), as SAS runs one per row.
Functions: a vectorized numpy/scipy version for the common numeric ones (VECTOR below); any other SAS numeric
function of statgrid's library is applied element by element through the DATA step's own implementation.
A missing value is NaN; arithmetic on it gives NaN (SAS's missing), and a likelihood that is not finite makes
the optimizer back away.

Only numeric statements make sense for a likelihood: character values, arrays, OUTPUT/DELETE/RETURN, LAG and
the like are an ERROR naming them.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from statgrid.sas.errors import SasError
from statgrid.sas.parse import ast as A
from statgrid.sas.parse import dsast as D


def _vector_functions() -> dict:
    from scipy import special
    return {
        "EXP": np.exp, "LOG": np.log, "LOG10": np.log10, "LOG2": np.log2, "SQRT": np.sqrt, "ABS": np.abs,
        "SIN": np.sin, "COS": np.cos, "TAN": np.tan, "ARCTAN": np.arctan, "TANH": np.tanh, "SINH": np.sinh,
        "COSH": np.cosh, "INT": np.trunc, "FLOOR": np.floor, "CEIL": np.ceil, "GAMMA": special.gamma,
        "LGAMMA": special.gammaln, "PROBNORM": special.ndtr, "PROBIT": special.ndtri, "LOGISTIC": special.expit,
        "ERF": special.erf, "ERFC": special.erfc,
    }


def _divide(a, b):
    """a / b, missing (NaN) where b is 0 (SAS: division by zero gives a missing value)."""
    return np.where(np.asarray(b) == 0, np.nan, a / np.where(np.asarray(b) == 0, 1.0, b))


_ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": _divide, "**": np.power,
               "MIN": np.fmin, "MAX": np.fmax}
_CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
        "GE": np.greater_equal}


class VectorProgram:
    """Statements (dsast nodes) → a function of an environment {NAME: float or array} that adds the names
    the statements assign."""

    def __init__(self, statements: list, program: Any = None):
        self.statements, self.program = statements, program
        self.vector = _vector_functions()
        self.assigned: list[str] = []
        for st in statements:
            self._collect(st)

    # -- what the statements read and write ---------------------------------------------------------------------
    def _collect(self, st) -> None:
        if isinstance(st, D.Assign):
            if not isinstance(st.target, A.Var):
                raise SasError("Only a variable can be assigned in NLMIXED's programming statements", st.line,
                               st.col, "", "name = expression;")
            if st.target.name not in self.assigned:
                self.assigned.append(st.target.name)
        elif isinstance(st, D.If):
            if st.then is None:
                raise SasError("A subsetting IF is not valid in NLMIXED's programming statements", st.line, st.col,
                               "IF", "IF condition THEN statement;")
            for s in (st.then, st.else_):
                if s is not None:
                    self._collect(s)
        elif isinstance(st, D.Do) and st.kind == "block":
            for s in st.body:
                self._collect(s)
        elif isinstance(st, D.Simple) and st.kind == "EMPTY":
            pass
        else:
            kind = getattr(st, "kind", type(st).__name__).upper()
            raise SasError(f"The {kind} statement is not supported in statgrid's NLMIXED programming statements",
                           st.line, st.col, kind, "assignments, IF-THEN/ELSE and DO; … END; blocks")

    def names_read(self) -> list[str]:
        """Upper-case names the statements read (variables, parameters, the random effect)."""
        out: list[str] = []

        def walk(n):
            if isinstance(n, A.Var):
                if n.name not in out:
                    out.append(n.name)
                return
            if isinstance(n, list):
                for x in n:
                    walk(x)
                return
            for f in getattr(n, "__dataclass_fields__", {}) or getattr(n, "__slots__", ()):
                if f not in ("line", "col"):
                    v = getattr(n, f, None)
                    if isinstance(v, (A.Node, D.Stmt, list)):
                        walk(v)
        for st in self.statements:
            walk(st)
        return out

    # -- running ----------------------------------------------------------------------------------------------
    def run(self, env: dict) -> dict:
        env = dict(env)
        for st in self.statements:
            self.execute(st, env, None)
        return env

    def execute(self, st, env: dict, mask) -> None:
        if isinstance(st, D.Assign):
            value = self.eval(st.expr, env)
            name = st.target.name
            if mask is None:
                env[name] = value
            else:
                env[name] = np.where(mask, value, env.get(name, np.nan))
        elif isinstance(st, D.If):
            cond = self.truth(self.eval(st.cond, env))
            here = cond if mask is None else (mask & cond)
            self.execute(st.then, env, here)
            if st.else_ is not None:
                self.execute(st.else_, env, ~cond if mask is None else (mask & ~cond))
        elif isinstance(st, D.Do):
            for s in st.body:
                self.execute(s, env, mask)

    @staticmethod
    def truth(x):
        x = np.asarray(x)
        if x.dtype == bool:
            return x
        return np.nan_to_num(x, nan=0.0) != 0

    def eval(self, n, env: dict):
        m = getattr(self, "e_" + type(n).__name__, None)
        if m is None:
            raise SasError(f"{type(n).__name__} is not valid in NLMIXED's programming statements", n.line, n.col)
        with np.errstate(all="ignore"):
            return m(n, env)

    def e_Num(self, n, env):
        return float(n.value)

    def e_Str(self, n, env):
        raise SasError("Character constants are not valid in NLMIXED's programming statements", n.line, n.col,
                       repr(n.value), "numeric expressions")

    def e_Var(self, n, env):
        if n.name not in env:
            raise SasError(f"Variable {n.text} is not a data set variable, a parameter, the random effect or a "
                           "variable assigned before it is used", n.line, n.col, n.text,
                           "a name in PARMS, the data set, or assigned above")
        return env[n.name]

    def e_Unary(self, n, env):
        x = self.eval(n.operand, env)
        if n.op == "NOT":
            return ~self.truth(x)
        return -np.asarray(x, dtype=float) if n.op == "-" else x

    def e_Binary(self, n, env):
        a, b = self.eval(n.left, env), self.eval(n.right, env)
        if n.op in ("AND", "OR"):
            return (self.truth(a) & self.truth(b)) if n.op == "AND" else (self.truth(a) | self.truth(b))
        fn = _ARITHMETIC.get(n.op)
        if fn is None:
            raise SasError(f"The operator {n.op} is not valid in NLMIXED's programming statements", n.line, n.col,
                           n.op)
        return fn(self._num(a), self._num(b))

    @staticmethod
    def _num(x):
        x = np.asarray(x)
        return x.astype(float) if x.dtype == bool else x

    def e_Compare(self, n, env):
        a, b = self._num(self.eval(n.left, env)), self._num(self.eval(n.right, env))
        return _CMP[n.op](a, b)

    def e_In(self, n, env):
        x = self._num(self.eval(n.operand, env))
        hit = np.zeros(np.shape(x), dtype=bool)
        for item in n.items:
            if isinstance(item, tuple):
                hit = hit | ((x >= item[1].value) & (x <= item[2].value))
            else:
                hit = hit | (x == self.eval(item, env))
        return ~hit if n.negated else hit

    def e_Call(self, n, env):
        args = [self._num(self.eval(a, env)) for a in n.args]
        name = n.name.upper()
        if name in self.vector and len(args) == 1:
            return self.vector[name](args[0])
        if name in ("MIN", "MAX", "SUM", "MEAN") and args:
            stack = np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in args])
            arr = np.stack(stack)
            fn = {"MIN": np.nanmin, "MAX": np.nanmax, "SUM": np.nansum, "MEAN": np.nanmean}[name]
            with np.errstate(all="ignore"), _quiet():
                return fn(arr, axis=0)
        return self._library(n, name, args)

    def _library(self, n, name: str, args: list):
        """Any other numeric SAS function: the DATA step's implementation, element by element."""
        from statgrid.sas.context import FunctionRuntime
        from statgrid.sas.functions import lookup_function
        f = lookup_function(name, n.line, n.col)
        if f.returns == "char" or any(f.arg_type(i) == "c" for i in range(len(args))):
            raise SasError(f"The {name} function takes or returns character values; NLMIXED's programming "
                           "statements are numeric here", n.line, n.col, name, "a numeric function")
        rt = FunctionRuntime(self.program, {}, n.line, n.col)
        ufunc = np.frompyfunc(lambda *xs: f.fn(rt, *[float(x) for x in xs]), len(args), 1)
        return np.asarray(ufunc(*args), dtype=float)


class _quiet:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)
