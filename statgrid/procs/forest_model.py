"""A fitted random forest (statgrid.procs.mining.forest) kept for later scoring: PROC HPFOREST's SAVE FILE=
and PROC HP4SCORE's SCORE FILE= (SAS Enterprise Miner High-Performance Procedures: "The SAVE statement
outputs the forest model information into a binary file"; HP4SCORE "applies the binary model file").

The file is statgrid's own (SAS's binary format is not documented): a magic line, then a pickle of a
ForestModel record whose `version` the reader checks. Reading uses an unpickler that only builds the
exact classes a forest is made of (_ALLOWED: the pipeline's scikit-learn classes, numpy's array
reconstruction, this module's record), so a file that is not a forest cannot run code when loaded;
anything else is an error naming the class. The file is written to a new temporary file of its own
(mkstemp) renamed over the target, so a link planted at a predictable name is never written through.

Scoring builds each input as the fit built it (numbers as DOUBLE, character values as VARCHAR, a
missing value a level of its own for a nominal input) and runs the same scikit-learn pipeline, so the
scored probabilities equal the ones the fit wrote to out= bit for bit. The output has P_<target><level>
per level and I_<target> (the level of highest probability) for a class target, P_<target> for an
interval one — SAS's names.
"""
from __future__ import annotations

import io
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._base import check_columns, dataset_types, is_numeric, qi

MAGIC = b"STATGRID-FOREST\n"
VERSION = 1
# Exactly the globals a saved forest refers to (recorded from real fits of both kinds, with and without nominal
# inputs): the classes of the pipeline, numpy's array reconstruction and this module's record — no prefix,
# no callable that could be turned to running code (a prefix such as "numpy" let numpy.testing's exec in).
_ALLOWED = frozenset({
    ("builtins", "slice"), ("numpy", "dtype"), ("numpy", "float64"), ("numpy", "ndarray"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "scalar"),
    ("numpy._core.numeric", "_frombuffer"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy.core.numeric", "_frombuffer"),
    ("sklearn.compose._column_transformer", "ColumnTransformer"), ("sklearn.pipeline", "Pipeline"),
    ("sklearn.ensemble._forest", "RandomForestClassifier"), ("sklearn.ensemble._forest", "RandomForestRegressor"),
    ("sklearn.preprocessing._encoders", "OneHotEncoder"),
    ("sklearn.preprocessing._function_transformer", "FunctionTransformer"),
    ("sklearn.tree._classes", "DecisionTreeClassifier"), ("sklearn.tree._classes", "DecisionTreeRegressor"),
    ("sklearn.tree._tree", "Tree"), ("statgrid.procs.forest_model", "ForestModel"),
})


@dataclass
class ForestModel:
    """What scoring needs: the pipeline (one-hot encoding + forest) and how its inputs were built."""

    version: int
    kind: str                      # 'classification' | 'regression'
    target: str
    inputs: list[str]
    categorical: list[str]         # inputs one-hot encoded (nominal)
    input_types: dict[str, str]    # input → 'num' | 'char' (the training data's type)
    levels: list[str] | None       # the target's levels as printed in P_ names (classification)
    pipeline: Any

    def predict(self, frame) -> dict[str, np.ndarray]:
        """{column name: values} — P_ per level and I_ (classification), or P_ (regression)."""
        if self.kind == "regression":
            return {f"P_{self.target}": self.pipeline.predict(frame)}
        classes = self.pipeline.named_steps["forest"].classes_
        proba = self.pipeline.predict_proba(frame)
        out = {f"P_{self.target}{text}": proba[:, j] for j, text in enumerate(self.levels)}
        out[f"I_{self.target}"] = classes[proba.argmax(axis=1)]
        return out


def from_fit(s, data: str, result) -> ForestModel:
    """The record of mining.forest's result on `data`."""
    st = result.stats
    pipe = st["model"]
    encode = pipe.named_steps["encode"]
    inputs, categorical = [], []
    for _, transformer, cols in encode.transformers_:
        if transformer == "drop":
            continue
        inputs += list(cols)
        if transformer != "passthrough":
            categorical += list(cols)
    _, types = dataset_types(s, data)
    kinds = {c: ("num" if is_numeric(types[c]) else "char") for c in inputs}
    return ForestModel(VERSION, st["kind"], st["target"], inputs, categorical, kinds, st["levels"], pipe)


def save(model: ForestModel, path: str | Path) -> None:
    """Write the model file atomically (a temporary file renamed over it)."""
    import os
    import tempfile
    path = Path(path)
    tmp = None
    try:
        # a new file of our own (O_EXCL, mode 0600) beside the target: never one a link or another user set up
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        tmp = Path(name)
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC)
            pickle.dump(model, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.chmod(tmp, 0o644 & ~_umask())
        tmp.replace(path)
    except OSError as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise StatgridError(f"cannot write the forest model file {str(path)!r}: {exc.strerror or exc}; "
                            "name a file in a directory you can write.") from None


def _umask() -> int:
    import os
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _ForestUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) not in _ALLOWED:
            raise StatgridError(f"the model file holds a {module}.{name} object, which a forest model does not; "
                                "it is not a file PROC HPFOREST's SAVE statement wrote.")
        return super().find_class(module, name)


def load(path: str | Path) -> ForestModel:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise StatgridError(f"the forest model file {str(path)!r} does not exist; write it first with "
                            "PROC HPFOREST's SAVE FILE=.") from None
    except OSError as exc:
        raise StatgridError(f"cannot read the forest model file {str(path)!r}: {exc.strerror or exc}.") from None
    if not raw.startswith(MAGIC):
        raise StatgridError(f"{str(path)!r} is not a statgrid forest model file (SAVE FILE= of PROC HPFOREST "
                            "writes one; SAS's own binary model files cannot be read).")
    try:
        model = _ForestUnpickler(io.BytesIO(raw[len(MAGIC):])).load()
    except StatgridError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged file: say so
        raise StatgridError(f"the forest model file {str(path)!r} is damaged ({type(exc).__name__}); "
                            "save the model again.") from None
    if not isinstance(model, ForestModel) or model.version != VERSION:
        got = getattr(model, "version", "?")
        raise StatgridError(f"the forest model file {str(path)!r} has version {got}, statgrid reads version "
                            f"{VERSION}; save the model again with this release.")
    return model


def score(s, data: str, model: ForestModel, out: str, copy: Sequence[str] | None = None):
    """Score every row of `data` into `out`: the `copy` columns (default: all of data's) and the predictions."""
    from statgrid.procs.mining import _write_scored

    src, types = dataset_types(s, data)
    names = list(types)
    ins = check_columns(model.inputs, names, "INPUT", str(src))
    for v, want in zip(ins, model.inputs):
        got = "num" if is_numeric(types[v]) else "char"
        if got != model.input_types[want]:
            raise StatgridError(f"input {v!r} is {'numeric' if got == 'num' else 'character'} in {src} but was "
                                f"{'numeric' if got != 'num' else 'character'} when the forest was trained; "
                                "score data whose variables have the training data's types.")
    keep = check_columns(list(copy), names, "ID", str(src)) if copy else names
    sql_in = [f"CAST({qi(v)} AS {'DOUBLE' if is_numeric(types[v]) else 'VARCHAR'}) AS {qi(w)}"
              for v, w in zip(ins, model.inputs)]
    numbered = src.scan_sql(row_numbers=True)
    table = s.fetch_arrow(f"SELECT file_row_number AS __row, {', '.join(sql_in)} FROM {numbered} "
                          "ORDER BY file_row_number")
    frame = table.select(model.inputs).to_pandas()
    preds = model.predict(frame)
    return _write_scored(s, out, numbered, keep, table.column("__row"), preds)
