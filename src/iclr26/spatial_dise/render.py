"""Our orthographic painter: a z-buffered triangle rasteriser with flat shading and black outlines.

It stands in for the authors' Blender scenes and runs anywhere numpy and PIL do. A panel is drawn
in three steps: project every front-facing triangle orthographically onto the camera's image
plane, keep the nearest surface per pixel (z-buffer), and paint each pixel its face's colour
scaled by a Lambert term; then an outline is drawn wherever two neighbouring pixels belong to
different faces (or face and background), which gives block edges and silhouettes but no line
across the middle of a prism's long face. Nothing here is random: equal inputs give equal pixels.

Blocks, cones and textured squares are all turned into `Mesh` triangles, so the tasks compose
scenes freely: `block_mesh`, `cone_mesh`, `quad_mesh`, `polygon_mesh`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from iclr26.core.errors import UserError
from iclr26.spatial_dise.geometry import Block, view_axes

GREY = (190, 190, 190)
LIGHT = np.array([0.35, -0.55, 0.76])
"""World-space light direction of the Lambert term."""
AMBIENT = 0.55


@dataclass
class Mesh:
    """Triangles (T, 3, 3) in world units, one RGB colour and one face id per triangle."""

    triangles: np.ndarray = field(default_factory=lambda: np.zeros((0, 3, 3)))
    colors: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.uint8))
    faces: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    shaded: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __add__(self, other: Mesh) -> Mesh:
        offset = int(self.faces.max()) + 1 if len(self.faces) else 0
        return Mesh(
            np.concatenate([self.triangles, other.triangles]),
            np.concatenate([self.colors, other.colors]),
            np.concatenate([self.faces, other.faces + offset]),
            np.concatenate([self.shaded, other.shaded]),
        )


def merge(meshes: Iterable[Mesh]) -> Mesh:
    """All meshes in one, face ids kept distinct."""
    out = Mesh()
    for m in meshes:
        out = out + m
    return out


def quad_mesh(corners: Sequence[Sequence[float]], color: Sequence[int], *, shaded: bool = True) -> Mesh:
    """One planar quad (corners in order) as two triangles of one face."""
    c = np.asarray(corners, dtype=float)
    tris = np.stack([c[[0, 1, 2]], c[[0, 2, 3]]])
    return Mesh(
        tris, np.array([color, color], dtype=np.uint8), np.zeros(2, dtype=np.int64), np.full(2, shaded)
    )


def polygon_mesh(points: Sequence[Sequence[float]], color: Sequence[int], *, shaded: bool = True) -> Mesh:
    """A convex planar polygon as a triangle fan of one face."""
    p = np.asarray(points, dtype=float)
    tris = np.stack([p[[0, i, i + 1]] for i in range(1, len(p) - 1)])
    n = len(tris)
    return Mesh(
        tris,
        np.tile(np.asarray(color, dtype=np.uint8), (n, 1)),
        np.zeros(n, dtype=np.int64),
        np.full(n, shaded),
    )


def box_mesh(low: Sequence[float], high: Sequence[float], color: Sequence[int] = GREY) -> Mesh:
    """An axis-aligned box: six faces, each its own face id."""
    lo, hi = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    faces = []
    for axis in range(3):
        for side, value in ((0, lo[axis]), (1, hi[axis])):
            u, v = [a for a in range(3) if a != axis]
            corners = []
            for du, dv in ((0, 0), (1, 0), (1, 1), (0, 1)):
                p = np.empty(3)
                p[axis] = value
                p[u] = (lo[u], hi[u])[du]
                p[v] = (lo[v], hi[v])[dv]
                corners.append(p)
            outward = np.zeros(3)
            outward[axis] = 1.0 if side else -1.0
            if np.dot(np.cross(corners[1] - corners[0], corners[2] - corners[0]), outward) < 0:
                corners = corners[::-1]  # wind every face counter-clockwise seen from outside
            faces.append(quad_mesh(corners, color))
    return merge(faces)


def _unit_box() -> tuple[np.ndarray, np.ndarray]:
    """`box_mesh` of the unit box: (12, 3, 3) 0/1 corner flags and the (12,) face ids."""
    unit = box_mesh((0, 0, 0), (1, 1, 1))
    return unit.triangles.astype(bool), unit.faces


_UNIT_BOX = _unit_box()


def block_mesh(
    blocks: Iterable[Block], color: Sequence[int] = GREY, offset: Sequence[float] = (0, 0, 0)
) -> Mesh:
    """The boxes of a shape's blocks (optionally moved by `offset`): `box_mesh` of each, merged, built
    at once (block i's six faces have ids 6i..6i+5)."""
    off = np.asarray(offset, dtype=float)
    bounds = [b.bounds for b in blocks]
    if not bounds:
        return Mesh()
    lo = np.stack([b[0] for b in bounds]) + off  # (n, 3)
    hi = np.stack([b[1] for b in bounds]) + off
    flags, faces = _UNIT_BOX
    tris = np.where(flags[None], hi[:, None, None, :], lo[:, None, None, :]).reshape(-1, 3, 3)
    n = len(bounds)
    return Mesh(
        tris,
        np.tile(np.asarray(color, dtype=np.uint8), (12 * n, 1)),
        (faces[None, :] + 6 * np.arange(n)[:, None]).reshape(-1),
        np.full(12 * n, True),
    )


def cone_mesh(
    apex: Sequence[float],
    base_center: Sequence[float],
    radius: float,
    color: Sequence[int] = (40, 90, 220),
    segments: int = 24,
) -> Mesh:
    """A cone from its base disc to its apex (the projection task's direction marker)."""
    a, c = np.asarray(apex, dtype=float), np.asarray(base_center, dtype=float)
    axis = (a - c) / np.linalg.norm(a - c)
    helper = np.array([0.0, 0.0, 1.0]) if abs(axis[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    e1 = np.cross(axis, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(axis, e1)
    ring = [c + radius * (np.cos(t) * e1 + np.sin(t) * e2) for t in np.linspace(0, 2 * np.pi, segments + 1)]
    side = Mesh(
        np.stack([np.stack([ring[i], ring[i + 1], a]) for i in range(segments)]),
        np.tile(np.asarray(color, dtype=np.uint8), (segments, 1)),
        np.zeros(segments, dtype=np.int64),
        np.full(segments, True),
    )
    return side + polygon_mesh(ring[:-1][::-1], color)


@dataclass(frozen=True)
class Camera:
    """An orthographic camera looking along -direction; `scale` pixels per world unit (None: fit)."""

    direction: tuple[float, float, float]
    width: int = 640
    height: int = 480
    scale: float | None = None
    center: tuple[float, float, float] | None = None
    up_hint: tuple[float, float, float] | None = None
    margin: float = 0.1


@dataclass(frozen=True)
class Frame:
    """Where a camera puts the world: image axes, view direction, the centre (in image-plane
    coordinates) and pixels per world unit."""

    right: np.ndarray
    up: np.ndarray
    direction: np.ndarray
    center_u: float
    center_v: float
    scale: float


def frame(mesh: Mesh, cam: Camera) -> Frame:
    """The camera's frame for this mesh (fitting the mesh when `cam.scale` or `cam.center` is None)."""
    d = np.asarray(cam.direction, dtype=float)
    d = d / np.linalg.norm(d)
    right, up = view_axes(d, cam.up_hint)
    u, v = mesh.triangles @ right, mesh.triangles @ up
    if cam.center is not None:
        cu, cv = float(np.dot(cam.center, right)), float(np.dot(cam.center, up))
    else:
        cu, cv = (u.min() + u.max()) / 2, (v.min() + v.max()) / 2
    if cam.scale is not None:
        scale = cam.scale
    else:
        span_u, span_v = max(u.max() - u.min(), 1e-6), max(v.max() - v.min(), 1e-6)
        scale = (1 - 2 * cam.margin) * min(cam.width / span_u, cam.height / span_v)
    return Frame(right, up, d, float(cu), float(cv), float(scale))


def _project(mesh: Mesh, cam: Camera) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Screen x, y (pixels) and depth (larger = nearer) of every vertex, shape (T, 3) each."""
    f = frame(mesh, cam)
    x = cam.width / 2 + (mesh.triangles @ f.right - f.center_u) * f.scale
    y = cam.height / 2 - (mesh.triangles @ f.up - f.center_v) * f.scale
    return x, y, mesh.triangles @ f.direction


def shading(mesh: Mesh) -> np.ndarray:
    """Each triangle's colour after the flat Lambert term (uint8, (T, 3))."""
    normals = np.cross(
        mesh.triangles[:, 1] - mesh.triangles[:, 0], mesh.triangles[:, 2] - mesh.triangles[:, 0]
    )
    lengths = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = normals / np.where(lengths == 0, 1, lengths)
    light = LIGHT / np.linalg.norm(LIGHT)
    shade = np.where(mesh.shaded, AMBIENT + (1 - AMBIENT) * np.abs(normals @ light), 1.0)
    return np.clip(np.round(mesh.colors * shade[:, None]), 0, 255).astype(np.uint8)


def scan(mesh: Mesh, cam: Camera) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The z-buffer pass: (H, W) face ids (-1 = background), depths (larger = nearer; -inf where
    nothing is drawn) and the triangle drawn at each pixel (-1 = background)."""
    h, w = cam.height, cam.width
    ids = np.full((h, w), -1, dtype=np.int64)
    tri = np.full((h, w), -1, dtype=np.int64)
    zbuf = np.full((h, w), -np.inf)
    if len(mesh.triangles) == 0:
        return ids, zbuf, tri
    x, y, z = _project(mesh, cam)
    d = np.asarray(cam.direction, dtype=float)
    d = d / np.linalg.norm(d)
    normals = np.cross(
        mesh.triangles[:, 1] - mesh.triangles[:, 0], mesh.triangles[:, 2] - mesh.triangles[:, 0]
    )
    for t in np.flatnonzero(normals @ d > 1e-9):  # front faces only
        xs, ys, zs = x[t], y[t], z[t]
        x0, x1 = max(int(np.floor(xs.min())), 0), min(int(np.ceil(xs.max())), w - 1)
        y0, y1 = max(int(np.floor(ys.min())), 0), min(int(np.ceil(ys.max())), h - 1)
        if x0 > x1 or y0 > y1:
            continue
        px, py = np.meshgrid(np.arange(x0, x1 + 1) + 0.5, np.arange(y0, y1 + 1) + 0.5)
        # barycentric coordinates of the pixel centres (edge functions)
        area = (xs[1] - xs[0]) * (ys[2] - ys[0]) - (xs[2] - xs[0]) * (ys[1] - ys[0])
        if abs(area) < 1e-12:
            continue
        w0 = ((xs[1] - px) * (ys[2] - py) - (xs[2] - px) * (ys[1] - py)) / area
        w1 = ((xs[2] - px) * (ys[0] - py) - (xs[0] - px) * (ys[2] - py)) / area
        w2 = 1 - w0 - w1
        inside = (w0 >= -1e-9) & (w1 >= -1e-9) & (w2 >= -1e-9)
        depth = w0 * zs[0] + w1 * zs[1] + w2 * zs[2]
        window = zbuf[y0 : y1 + 1, x0 : x1 + 1]
        hit = inside & (depth > window + 1e-7)
        window[hit] = depth[hit]
        ids[y0 : y1 + 1, x0 : x1 + 1][hit] = mesh.faces[t]
        tri[y0 : y1 + 1, x0 : x1 + 1][hit] = t
    return ids, zbuf, tri


def rasterize(
    mesh: Mesh, cam: Camera, *, outline: int = 2, background: Sequence[int] = (255, 255, 255)
) -> tuple[np.ndarray, np.ndarray]:
    """(H, W, 3) uint8 pixels and the (H, W) face-id buffer (-1 = background) of `mesh` seen by `cam`."""
    h, w = cam.height, cam.width
    rgb = np.empty((h, w, 3), dtype=np.uint8)
    rgb[:] = np.asarray(background, dtype=np.uint8)
    ids, _, tri = scan(mesh, cam)
    drawn = tri >= 0
    if drawn.any():
        rgb[drawn] = shading(mesh)[tri[drawn]]
    if outline:
        edge = np.zeros((h, w), dtype=bool)
        edge[:, 1:] |= ids[:, 1:] != ids[:, :-1]
        edge[1:, :] |= ids[1:, :] != ids[:-1, :]
        grown = edge.copy()
        for _ in range(outline - 1):
            grown[:, :-1] |= edge[:, 1:]
            grown[:-1, :] |= edge[1:, :]
            edge = grown.copy()
        rgb[grown] = 0
    return rgb, ids


RENDERERS = ("painter", "blender")
_RENDERER: ContextVar[str] = ContextVar("spatial_dise_renderer", default="painter")


@contextlib.contextmanager
def use_renderer(name: str) -> Iterator[None]:
    """Within the block, `render` draws with `name`: our painter (the default outside any block) or
    Blender (`blender.py`); the renderer before it comes back after, also when the block raises."""
    if name not in RENDERERS:
        raise UserError(f"unknown renderer {name!r}; choose from {', '.join(RENDERERS)}")
    if name == "blender":
        from iclr26.spatial_dise.blender import require_blender

        require_blender()
    token = _RENDERER.set(name)
    try:
        yield
    finally:
        _RENDERER.reset(token)


def render(mesh: Mesh, cam: Camera, *, outline: int = 2) -> Image.Image:
    """The mesh as a PIL image, by the renderer of the enclosing `use_renderer` block."""
    if _RENDERER.get() == "blender":
        from iclr26.spatial_dise.blender import render_blender

        return render_blender(mesh, cam, outline=outline)
    rgb, _ = rasterize(mesh, cam, outline=outline)
    return Image.fromarray(rgb)


def visible_faces(mesh: Mesh, cam: Camera) -> set[int]:
    """Face ids that cover at least one pixel from `cam` (a cheap low-resolution pass)."""
    small = Camera(cam.direction, 160, 120, None, cam.center, cam.up_hint, cam.margin)
    _, ids = rasterize(mesh, small, outline=0)
    return {int(i) for i in np.unique(ids) if i >= 0}


def visible_blocks(blocks: Sequence[Block], direction: Sequence[float]) -> int:
    """How many blocks show at least one face from a camera direction (the question-view rule)."""
    mesh = block_mesh(blocks)
    seen = visible_faces(mesh, Camera(tuple(float(v) for v in direction)))
    return len({f // 6 for f in seen})
