"""The ten tasks and their quadrants (the paper's DISE taxonomy, Table 2).

Intrinsic-Static: 2D and 3D shape finding. Intrinsic-Dynamic: 2D and 3D rotation, 2D and 3D
folding, fold-and-punch. Extrinsic-Static: 3D projection. Extrinsic-Dynamic: 2D and 3D assembly
(the authors call the 3D one `3d_combination`). The 3D tasks follow the authors' generator; the
2D tasks, which the paper takes from psychometric tests, are generated here in the same spirit.
"""

from __future__ import annotations

import importlib
from functools import cache

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.spatial_dise.items import QUADRANTS, Task

QUADRANT_OF: dict[str, str] = {
    "2d_shape_finding": "Intrinsic-Static",
    "3d_shape_finding": "Intrinsic-Static",
    "2d_rotation": "Intrinsic-Dynamic",
    "3d_rotation": "Intrinsic-Dynamic",
    "2d_folding": "Intrinsic-Dynamic",
    "3d_folding": "Intrinsic-Dynamic",
    "fold_punch": "Intrinsic-Dynamic",
    "3d_projection": "Extrinsic-Static",
    "2d_assembly": "Extrinsic-Dynamic",
    "3d_combination": "Extrinsic-Dynamic",
}
TASKS = tuple(QUADRANT_OF)
TASKS_3D = tuple(t for t in TASKS if t.startswith("3d_"))
"""The five tasks of the authors' generator and of the 12K release."""
TASKS_OF: dict[str, tuple[str, ...]] = {q: tuple(t for t in TASKS if QUADRANT_OF[t] == q) for q in QUADRANTS}

_CLASSES: dict[str, tuple[str, str]] = {
    "2d_shape_finding": ("tasks2d", "ShapeFinding"),
    "2d_rotation": ("tasks2d", "Rotation2D"),
    "2d_folding": ("tasks2d", "Folding2D"),
    "fold_punch": ("tasks2d", "FoldPunch"),
    "2d_assembly": ("tasks2d", "Assembly2D"),
    "3d_rotation": ("blocks3d", "Rotation3D"),
    "3d_projection": ("blocks3d", "Projection3D"),
    "3d_combination": ("blocks3d", "Combination3D"),
    "3d_folding": ("cube3d", "Folding3D"),
    "3d_shape_finding": ("cube3d", "ShapeFinding3D"),
}


@cache
def task(name: str) -> Task:
    """The task called `name` (one shared instance)."""
    if name not in _CLASSES:
        raise UserError(f"unknown task {name!r}; the tasks are {', '.join(TASKS)}")
    module, cls = _CLASSES[name]
    instance = getattr(importlib.import_module(f"iclr26.spatial_dise.{module}"), cls)()
    if instance.name != name or instance.quadrant != QUADRANT_OF[name]:
        raise RuntimeError(f"{cls} says it is {instance.name} in {instance.quadrant}")
    return instance


def check_tasks(names: tuple[str, ...] | list[str], field: str = "tasks") -> None:
    """A one-line error naming the first unknown task."""
    for n in names:
        if n not in QUADRANT_OF:
            raise ConfigError(f"{field}: unknown task {n!r}; the tasks are {', '.join(TASKS)}")


def check_quadrant(name: str, field: str = "quadrant") -> None:
    """A one-line error for an unknown quadrant."""
    if name not in QUADRANTS:
        raise ConfigError(f"{field}: unknown quadrant {name!r}; the quadrants are {', '.join(QUADRANTS)}")
