"""Paths written inside a user's data file, kept inside the data's folder.

A data file (a release's dataset.json, a task file) names other files relative to its folder. A path
that is absolute, or whose `..` steps or links lead out of that folder (`../../etc/passwd`), is
refused with one line naming the file, the record and the field, before anything is read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iclr26.core.errors import UserError


def inside(folder: str | Path, path: Any, where: str, error: type[Exception] = UserError) -> Path:
    """`folder / path` for a relative `path` from a data file; `where` names the file, the record and
    the field (`dataset.json[0]: field 'label'`). Anything else raises `error` naming `where`."""
    if not isinstance(path, str) or not path.strip():
        raise error(f"{where}: expected a relative file path, got {path!r}")
    if Path(path).is_absolute():
        raise error(f"{where}: {path!r} is an absolute path; give a path relative to {folder}")
    base = Path(folder).resolve()
    target = (base / path).resolve()
    if not target.is_relative_to(base):
        raise error(f"{where}: {path!r} leads out of {folder}")
    return target
