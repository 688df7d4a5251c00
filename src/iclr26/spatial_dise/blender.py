"""The optional Blender path: the same meshes and cameras as our painter, rendered by Blender's
Cycles (CPU) with Freestyle outlines, as the authors render their items.

Off by default (`renderer="blender"` turns it on). It runs where Blender is: the `bpy` module in
this Python (pip's `bpy` wheel), else a `blender` executable (Debian's `blender` package), started
headless once per panel (`blender -b -P blender_scene.py -- spec.json`). Every panel costs
Blender's start-up (about a second) plus the render, so this path is for checking that items look
the same under a production renderer, not for making the 12K split. Only the 3D panels change; the
2D tasks are drawn with PIL either way. Cycles is seeded, so a machine repeats its own pixels.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

from iclr26.core.errors import UserError
from iclr26.spatial_dise.render import Camera, Mesh, frame, shading

SCENE_SCRIPT = Path(__file__).with_name("blender_scene.py")
SAMPLES = 16
"""Cycles samples per pixel (emission-only materials converge at once; a few samples anti-alias edges)."""


def has_bpy() -> bool:
    """Whether Blender's `bpy` module imports in this Python."""
    return importlib.util.find_spec("bpy") is not None


def blender_executable() -> str | None:
    """The `blender` on PATH, if any."""
    return shutil.which("blender")


def require_blender() -> None:
    """A one-line error when neither `bpy` nor a `blender` executable is here."""
    if not (has_bpy() or blender_executable()):
        raise UserError(
            "renderer='blender' needs Blender: apt-get install blender (Debian) or pip install bpy; "
            "the default renderer='painter' needs neither"
        )


def scene_spec(mesh: Mesh, cam: Camera, out: Path, *, outline: int = 2) -> dict:
    """The JSON `blender_scene.py` builds: triangles, face ids, shaded colours, the camera."""
    f = frame(mesh, cam)
    center = f.center_u * f.right + f.center_v * f.up
    d = np.asarray(cam.direction, dtype=float)
    d = d / np.linalg.norm(d)
    front = (
        np.cross(mesh.triangles[:, 1] - mesh.triangles[:, 0], mesh.triangles[:, 2] - mesh.triangles[:, 0]) @ d
    )
    keep = front > 1e-9  # back faces are hidden anyway; fewer materials for Blender
    return {
        "triangles": mesh.triangles[keep].round(6).tolist(),
        "faces": mesh.faces[keep].tolist(),
        "colors": shading(mesh)[keep].tolist(),
        "width": cam.width,
        "height": cam.height,
        "ortho_scale": max(cam.width, cam.height) / f.scale,  # Blender's scale spans the longer side
        "center": center.tolist(),
        "direction": d.tolist(),
        "up": f.up.tolist(),
        "outline": outline,
        "samples": SAMPLES,
        "out": str(out),
    }


def render_blender(mesh: Mesh, cam: Camera, *, outline: int = 2, timeout: float = 300) -> Image.Image:
    """The mesh rendered by Blender (in-process `bpy` when importable, else the executable)."""
    require_blender()
    with tempfile.TemporaryDirectory(prefix="iclr26-blender-") as tmp:
        out = Path(tmp) / "panel.png"
        spec = scene_spec(mesh, cam, out, outline=outline)
        if has_bpy():
            from iclr26.spatial_dise.blender_scene import build_and_render

            build_and_render(spec)
        else:
            spec_path = Path(tmp) / "spec.json"
            spec_path.write_text(json.dumps(spec))
            cmd = [blender_executable() or "blender", "-b", "--factory-startup", "-noaudio",
                   "--python-exit-code", "1", "-P", str(SCENE_SCRIPT), "--", str(spec_path)]  # fmt: skip
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
            if done.returncode != 0 or not out.is_file():
                tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
                raise RuntimeError(f"Blender failed (exit {done.returncode}): {' | '.join(tail)}")
        with Image.open(out) as im:
            return im.convert("RGB")
