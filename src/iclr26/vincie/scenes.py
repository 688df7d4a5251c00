"""Sprite scenes: textured shapes on a gradient background, their exact rendering with per-object
visible masks, and the edits a video or a user applies to them.

A `Scene` is a background plus objects drawn back to front (list order is depth order, so objects
occlude each other). `render` returns the RGB image and a label map (which object each pixel
shows, −1 for background); visible masks, and hence the annotation's masks, come from the label
map, so they are exact. Positions and sizes are in units of the frame side, so one scene renders at
any resolution.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

SHAPES = ("circle", "square", "triangle", "diamond", "cross")
COLOURS: dict[str, tuple[float, float, float]] = {
    "red": (0.9, 0.12, 0.1),
    "green": (0.1, 0.75, 0.2),
    "blue": (0.15, 0.3, 0.95),
    "yellow": (0.95, 0.88, 0.1),
    "purple": (0.6, 0.2, 0.8),
    "orange": (1.0, 0.55, 0.05),
    "white": (0.97, 0.97, 0.97),
    "cyan": (0.1, 0.85, 0.9),
}
TEXTURES = ("plain", "striped", "dotted")
SIZES = {"small": 0.11, "medium": 0.15, "large": 0.2}  # half-extent, in frame sides
TEXTURE_SHADE = 0.55  # the darker phase of a texture: the colour times this
DIRECTIONS = {"left": (-1.0, 0.0), "right": (1.0, 0.0), "up": (0.0, -1.0), "down": (0.0, 1.0)}
PLACES = {
    "top left": (0.28, 0.28),
    "top right": (0.72, 0.28),
    "bottom left": (0.28, 0.72),
    "bottom right": (0.72, 0.72),
    "centre": (0.5, 0.5),
}
EDIT_KINDS = ("move", "add", "remove", "recolour", "resize", "retexture")


@dataclass(frozen=True)
class Sprite:
    """One object: shape, colour and texture names, centre (x, y) and half-extent in frame sides."""

    shape: str
    colour: str
    texture: str
    x: float
    y: float
    size: float
    ident: int = 0
    """identity through a video: a sprite keeps it when it moves or changes"""

    @property
    def name(self) -> str:
        """How instructions refer to it: 'the red circle' (colour and shape are unique in a scene)."""
        return f"the {self.colour} {self.shape}"


@dataclass(frozen=True)
class Scene:
    """A background (top and bottom colours of a vertical gradient) and sprites, back to front."""

    top: tuple[float, float, float]
    bottom: tuple[float, float, float]
    sprites: tuple[Sprite, ...]

    def find(self, colour: str, shape: str) -> int:
        """Index of the sprite with this colour and shape, or −1."""
        for i, s in enumerate(self.sprites):
            if s.colour == colour and s.shape == shape:
                return i
        return -1


def shape_mask(s: Sprite, size: int) -> np.ndarray:
    """Boolean (size, size) mask of the pixels whose centre lies inside sprite `s` (exact, no blur)."""
    c = (np.arange(size) + 0.5) / size
    x, y = np.meshgrid(c, c)
    dx, dy = (x - s.x) / s.size, (y - s.y) / s.size  # unit coordinates: the shape fits in [−1, 1]²
    if s.shape == "circle":
        return dx**2 + dy**2 <= 1.0
    if s.shape == "square":
        return (np.abs(dx) <= 0.85) & (np.abs(dy) <= 0.85)
    if s.shape == "diamond":
        return np.abs(dx) + np.abs(dy) <= 1.0
    if s.shape == "triangle":  # apex up: inside when |dx| ≤ (dy + 1)/2 and dy ≤ 0.8
        return (dy <= 0.8) & (np.abs(dx) <= (dy + 1.0) / 1.8)
    if s.shape == "cross":
        return ((np.abs(dx) <= 0.95) & (np.abs(dy) <= 0.35)) | ((np.abs(dx) <= 0.35) & (np.abs(dy) <= 0.95))
    raise ValueError(f"unknown shape {s.shape!r}; shapes are {SHAPES}")


def appearance(s: Sprite, size: int) -> np.ndarray:
    """(size, size, 3) colour of sprite `s`'s surface at every pixel (its texture is fixed to the
    frame grid, stripes along x + y, dots on a checker of 2-pixel cells at 32 px)."""
    rgb = np.asarray(COLOURS[s.colour], dtype=np.float32)
    idx = np.arange(size)
    cell = max(1, size // 16)
    x, y = np.meshgrid(idx // cell, idx // cell)
    if s.texture == "plain":
        dark = np.zeros((size, size), dtype=bool)
    elif s.texture == "striped":
        dark = ((x + y) // 2) % 2 == 1
    elif s.texture == "dotted":
        dark = (x % 2 == 1) & (y % 2 == 1)
    else:
        raise ValueError(f"unknown texture {s.texture!r}; textures are {TEXTURES}")
    return np.where(dark[..., None], rgb * TEXTURE_SHADE, rgb).astype(np.float32)


def render(scene: Scene, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The (size, size, 3) float32 image in [0, 1] and the (size, size) int label map (sprite index
    each pixel shows, −1 for background), painting sprites back to front."""
    t = ((np.arange(size) + 0.5) / size)[:, None, None]
    top, bottom = np.asarray(scene.top, np.float32), np.asarray(scene.bottom, np.float32)
    image = np.broadcast_to((1 - t) * top + t * bottom, (size, size, 3)).astype(np.float32).copy()
    labels = np.full((size, size), -1, dtype=np.int64)
    for i, s in enumerate(scene.sprites):
        m = shape_mask(s, size)
        image[m] = appearance(s, size)[m]
        labels[m] = i
    return image, labels


# ---------------------------------------------------------------------------------------------
# Random scenes and edits


def random_background(rng: np.random.Generator) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Two muted colours (grey-ish, value 0.25–0.55) for the gradient, distinct from the sprites."""
    base = rng.uniform(0.25, 0.55, size=(2, 1))
    tint = rng.uniform(-0.08, 0.08, size=(2, 3))
    top, bottom = np.clip(base + tint, 0, 1)
    return tuple(float(v) for v in top), tuple(float(v) for v in bottom)


def random_sprite(rng: np.random.Generator, taken: set[tuple[str, str]]) -> Sprite:
    """A sprite whose (colour, shape) is not in `taken`, somewhere inside the frame."""
    while True:
        colour = str(rng.choice(list(COLOURS)))
        shape = str(rng.choice(SHAPES))
        if (colour, shape) not in taken:
            break
    size = float(rng.choice(list(SIZES.values())))
    x, y = rng.uniform(0.22, 0.78, size=2)
    texture = str(rng.choice(TEXTURES, p=(0.6, 0.2, 0.2)))
    return Sprite(shape, colour, texture, float(x), float(y), size, ident=len(taken))


def random_scene(rng: np.random.Generator, n_objects: tuple[int, int] = (2, 4)) -> Scene:
    """A gradient background with n ~ U{n_objects} sprites of distinct (colour, shape)."""
    top, bottom = random_background(rng)
    sprites: list[Sprite] = []
    taken: set[tuple[str, str]] = set()
    for _ in range(int(rng.integers(n_objects[0], n_objects[1] + 1))):
        s = random_sprite(rng, taken)
        taken.add((s.colour, s.shape))
        sprites.append(s)
    return Scene(top, bottom, tuple(sprites))


@dataclass(frozen=True)
class Edit:
    """One change to one sprite. `kind` is one of EDIT_KINDS; `value` is the direction (move), the
    place (add), the new colour (recolour), 'bigger'/'smaller' (resize) or the new texture."""

    kind: str
    colour: str
    shape: str
    value: str = ""


MOVE_STEP = 0.22  # a full move, in frame sides
SIZE_STEP = 1.4  # bigger multiplies the half-extent by this, smaller divides


def apply_edit(scene: Scene, edit: Edit, amount: float = 1.0) -> Scene:
    """The scene after `amount` ∈ [0, 1] of `edit` (moves and resizes interpolate; the other kinds
    happen at amount ≥ 0.5). Adding puts the new sprite in front."""
    i = scene.find(edit.colour, edit.shape)
    sprites = list(scene.sprites)
    if edit.kind == "add":
        if i >= 0:
            raise ValueError(f"cannot add the {edit.colour} {edit.shape}: it is already in the scene")
        if amount >= 0.5:
            x, y = PLACES[edit.value]
            ident = 1 + max((s.ident for s in sprites), default=-1)
            sprites.append(Sprite(edit.shape, edit.colour, "plain", x, y, SIZES["medium"], ident))
        return dataclasses.replace(scene, sprites=tuple(sprites))
    if i < 0:
        raise ValueError(f"cannot {edit.kind} the {edit.colour} {edit.shape}: it is not in the scene")
    s = sprites[i]
    if edit.kind == "move":
        dx, dy = DIRECTIONS[edit.value]
        s = dataclasses.replace(s, x=s.x + amount * MOVE_STEP * dx, y=s.y + amount * MOVE_STEP * dy)
    elif edit.kind == "resize":
        factor = SIZE_STEP if edit.value == "bigger" else 1 / SIZE_STEP
        s = dataclasses.replace(s, size=s.size * factor**amount)
    elif edit.kind == "remove":
        if amount >= 0.5:
            del sprites[i]
            return dataclasses.replace(scene, sprites=tuple(sprites))
    elif edit.kind == "recolour":
        s = dataclasses.replace(s, colour=edit.value) if amount >= 0.5 else s
    elif edit.kind == "retexture":
        s = dataclasses.replace(s, texture=edit.value) if amount >= 0.5 else s
    else:
        raise ValueError(f"unknown edit kind {edit.kind!r}; kinds are {EDIT_KINDS}")
    sprites[i] = s
    return dataclasses.replace(scene, sprites=tuple(sprites))


def possible_edits(scene: Scene) -> list[Edit]:
    """Every edit that keeps the scene valid: objects stay inside the frame and sizes in range,
    (colour, shape) pairs stay unique, at most five objects and at least one."""
    out: list[Edit] = []
    taken = {(s.colour, s.shape) for s in scene.sprites}
    for s in scene.sprites:
        for d, (dx, dy) in DIRECTIONS.items():
            if 0.15 <= s.x + MOVE_STEP * dx <= 0.85 and 0.15 <= s.y + MOVE_STEP * dy <= 0.85:
                out.append(Edit("move", s.colour, s.shape, d))
        if len(scene.sprites) > 1:
            out.append(Edit("remove", s.colour, s.shape))
        out += [Edit("recolour", s.colour, s.shape, c) for c in COLOURS if (c, s.shape) not in taken]
        if s.size * SIZE_STEP <= 0.25:
            out.append(Edit("resize", s.colour, s.shape, "bigger"))
        if s.size / SIZE_STEP >= 0.09:
            out.append(Edit("resize", s.colour, s.shape, "smaller"))
        out += [Edit("retexture", s.colour, s.shape, t) for t in TEXTURES if t != s.texture]
    if len(scene.sprites) < 5:
        for place in PLACES:
            for colour in COLOURS:
                for shape in SHAPES:
                    if (colour, shape) not in taken:
                        out.append(Edit("add", colour, shape, place))
    return out


def random_edit(rng: np.random.Generator, scene: Scene) -> Edit:
    """An edit of a uniformly drawn kind (among the kinds possible here), then uniformly within it."""
    edits = possible_edits(scene)
    kinds = sorted({e.kind for e in edits}, key=EDIT_KINDS.index)
    kind = kinds[int(rng.integers(len(kinds)))]
    pool = [e for e in edits if e.kind == kind]
    return pool[int(rng.integers(len(pool)))]


def changed_idents(before: Scene, after: Scene) -> set[int]:
    """Identities of the sprites that differ between the two scenes, or are in only one of them."""
    a = {s.ident: s for s in before.sprites}
    b = {s.ident: s for s in after.sprites}
    return {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}


def change_mask(scene: Scene, labels: np.ndarray, idents: set[int]) -> np.ndarray:
    """Boolean mask of the pixels of `scene` (label map `labels`) showing a sprite in `idents`."""
    keep = [i for i, s in enumerate(scene.sprites) if s.ident in idents]
    return np.isin(labels, keep)
