"""Which model answers: an identity for the response cache's keys and for the run folder.

A backend's `identity()` names the model actually served, not the name it was asked for: the
HTTP server's own model id (`/v1/models`), or a fingerprint of the model's files for the
embedded and transformers backends. `check_run_model` records it in the run folder on the first
run and refuses a resume whose model differs, so one run's results never mix two models.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from iclr26.core.errors import UserError

RUN_MODELS_FILE = "llm-models.json"
_EDGE = 1 << 20  # bytes read from each end of a model file for its fingerprint


def model_identity(model: Any) -> str:
    """`model.identity()` when the backend has one, else its `name`."""
    identity = getattr(model, "identity", None)
    return str(identity()) if callable(identity) else str(model.name)


def files_fingerprint(paths: Iterable[Path]) -> str:
    """A short SHA-256 over each file's name, size and first and last MiB: it tells a fine-tuned
    or requantised model from another at the same path, without reading gigabytes."""
    h = hashlib.sha256()
    for path in sorted(paths):
        size = path.stat().st_size
        h.update(f"{path.name}\0{size}\0".encode())
        with open(path, "rb") as f:
            h.update(f.read(_EDGE))
            if size > _EDGE:
                f.seek(max(_EDGE, size - _EDGE))
                h.update(f.read(_EDGE))
    return h.hexdigest()[:16]


class ModelChangedError(UserError):
    """A run folder is being resumed with another model than the one it was made with."""


def check_run_model(run_dir: Path, role: str, identity: str) -> None:
    """Record that `run_dir` uses the model `identity` for `role` (e.g. the backend asked for), or
    raise `ModelChangedError` when it was made with another; the record is written atomically."""
    from iclr26.core.checkpoint import write_text_atomic

    path = Path(run_dir) / RUN_MODELS_FILE
    models: Any = {}
    if path.exists():
        try:
            models = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            models = None
        if not isinstance(models, dict) or not all(isinstance(v, str) for v in models.values()):
            raise UserError(f"{path}: not the role -> model object this package writes; delete it")
    old = models.get(role)
    if old == identity:
        return
    if old is not None:
        raise ModelChangedError(
            f"{run_dir} was made with the model {old!r} ({role}) but this run would use {identity!r}; "
            "resume with the same model (ICLR26_LLM_BASE_URL, ICLR26_LLM_MODEL), or use another --out"
        )
    models[role] = identity
    write_text_atomic(path, json.dumps(models, indent=2, sort_keys=True) + "\n")
