"""A grid world of the same sessions (issue 61): 8 × 8 cells, each empty or holding one object of 6
colour ids, rendered at 16 px (2 × 2 pixels a cell), edited by move, recolour, add and remove, with
exact masks; and two **context-dependent** edits whose target only the session's history fixes:

- `move_back`: "move the red object back to its first place" (the cell it held in I₀);
- `first_colour`: "give the red object its first colour" (the colour it had in I₀).

An object is named by its colour, which is unique in a scene at every turn (add and recolour take an
absent colour). A pairwise editor sees (I_k, T_k) only: for a context-dependent turn the answer is
not in its input, so its best is a guess among the empty cells or the absent colours (`pairwise_guess`,
the `chance` floor). That it cannot solve these turns follows from how the data are built.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iclr26.vincie.video import Session

CELLS = 8  # cells per side
CELL_PX = 2  # pixels per cell side
SIZE = CELLS * CELL_PX  # 16 px frames
COLOURS = ("red", "green", "blue", "yellow", "magenta", "cyan")  # the 6 object ids
RGB = np.array(
    [
        [0.9, 0.1, 0.1],
        [0.1, 0.8, 0.1],
        [0.15, 0.25, 0.95],
        [0.95, 0.9, 0.1],
        [0.9, 0.1, 0.9],
        [0.1, 0.9, 0.9],
    ],
    np.float32,
)
BACKGROUND = np.array([0.1, 0.1, 0.1], np.float32)
DIRECTIONS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
NUMBERS = ("one", "two", "three", "four", "five", "six", "seven", "eight")
ORDINARY = ("move", "recolour", "add", "remove")
CONTEXT = ("move_back", "first_colour")
TURN_TYPES = (*ORDINARY, *CONTEXT)
MAX_OBJECTS = 5


@dataclass
class Obj:
    """One object: its colour id and cell, and where and what it was in I₀ (None: added later)."""

    colour: int
    cell: tuple[int, int]
    first_cell: tuple[int, int] | None
    first_colour: int | None


@dataclass
class GridScene:
    """The objects of one frame."""

    objects: list[Obj] = field(default_factory=list)

    def copy(self) -> GridScene:
        return GridScene([Obj(o.colour, o.cell, o.first_cell, o.first_colour) for o in self.objects])

    def grid(self) -> np.ndarray:
        """(8, 8) int: each cell's colour id, −1 where empty."""
        g = np.full((CELLS, CELLS), -1, np.int64)
        for o in self.objects:
            g[o.cell] = o.colour
        return g

    def by_colour(self, colour: int) -> Obj:
        return next(o for o in self.objects if o.colour == colour)

    def free_cells(self) -> list[tuple[int, int]]:
        g = self.grid()
        return [(r, c) for r in range(CELLS) for c in range(CELLS) if g[r, c] < 0]

    def absent_colours(self) -> list[int]:
        used = {o.colour for o in self.objects}
        return [c for c in range(len(COLOURS)) if c not in used]


def render(grid: np.ndarray) -> np.ndarray:
    """(8, 8) colour ids → a (16, 16, 3) image in [0, 1]."""
    img = np.where((grid >= 0)[..., None], RGB[np.maximum(grid, 0)], BACKGROUND)
    return np.repeat(np.repeat(img, CELL_PX, axis=0), CELL_PX, axis=1).astype(np.float32)


def decode(image: np.ndarray) -> np.ndarray:
    """A (16, 16, 3) image → (8, 8) colour ids (−1 empty): each cell's mean colour, nearest of the
    background and the 6 colours."""
    cells = np.asarray(image, np.float32).reshape(CELLS, CELL_PX, CELLS, CELL_PX, 3).mean(axis=(1, 3))
    palette = np.concatenate([BACKGROUND[None], RGB])  # index 0: empty
    d = ((cells[:, :, None, :] - palette[None, None]) ** 2).sum(-1)
    return d.argmin(-1) - 1


def cell_mask(cells: list[tuple[int, int]]) -> np.ndarray:
    """The (16, 16) pixel mask of `cells`."""
    m = np.zeros((CELLS, CELLS), bool)
    for rc in cells:
        m[rc] = True
    return np.repeat(np.repeat(m, CELL_PX, axis=0), CELL_PX, axis=1)


@dataclass(frozen=True)
class GridEdit:
    """One turn: its type, the object's colour before it and the edit's argument (a cell or colour)."""

    kind: str
    colour: int
    cell: tuple[int, int] | None = None
    new_colour: int | None = None
    step: tuple[str, int] | None = None  # move: (direction, distance)


def instruction(e: GridEdit) -> str:
    """The turn's text."""
    name = f"the {COLOURS[e.colour]} object"
    if e.kind == "move":
        return f"move {name} {e.step[0]} {NUMBERS[e.step[1] - 1]}"  # type: ignore[index]
    if e.kind == "recolour":
        return f"make {name} {COLOURS[e.new_colour]}"  # type: ignore[index]
    if e.kind == "add":
        r, c = e.cell  # type: ignore[misc]
        return f"add a {COLOURS[e.colour]} object at row {NUMBERS[r]} column {NUMBERS[c]}"
    if e.kind == "remove":
        return f"remove {name}"
    if e.kind == "move_back":
        return f"move {name} back to its first place"
    return f"give {name} its first colour"


def vocabulary() -> list[str]:
    """Every word the grid's instructions use."""
    words = {"move", "the", "object", "make", "add", "a", "at", "row", "column", "remove", "back", "to"}
    words |= {"its", "first", "place", "give", "colour"}
    return sorted(words | set(COLOURS) | set(DIRECTIONS) | set(NUMBERS))


def apply(scene: GridScene, e: GridEdit) -> GridScene:
    """The scene after edit `e`."""
    s = scene.copy()
    if e.kind == "add":
        s.objects.append(Obj(e.colour, e.cell, None, None))  # type: ignore[arg-type]
        return s
    o = s.by_colour(e.colour)
    if e.kind == "remove":
        s.objects.remove(o)
    elif e.kind in ("move", "move_back"):
        o.cell = e.cell  # type: ignore[assignment]
    else:
        o.colour = e.new_colour  # type: ignore[assignment]
    return s


def valid_edits(scene: GridScene, kind: str) -> list[GridEdit]:
    """Every edit of `kind` that applies to `scene` (unique colours, at most MAX_OBJECTS objects)."""
    out: list[GridEdit] = []
    free = set(scene.free_cells())
    absent = scene.absent_colours()
    if kind == "add" and len(scene.objects) < MAX_OBJECTS:
        out = [GridEdit("add", c, cell) for c in absent for cell in sorted(free)]
    elif kind == "remove" and len(scene.objects) > 1:
        out = [GridEdit("remove", o.colour) for o in scene.objects]
    for o in scene.objects if kind in ("move", "recolour", "move_back", "first_colour") else []:
        if kind == "move":
            for d, (dr, dc) in DIRECTIONS.items():
                for n in (1, 2, 3):
                    cell = (o.cell[0] + n * dr, o.cell[1] + n * dc)
                    if cell in free:
                        out.append(GridEdit("move", o.colour, cell, step=(d, n)))
        elif kind == "recolour":
            out += [GridEdit("recolour", o.colour, new_colour=c) for c in absent]
        elif kind == "move_back" and o.first_cell is not None and o.first_cell in free:
            out.append(GridEdit("move_back", o.colour, o.first_cell))
        elif kind == "first_colour" and o.first_colour is not None and o.first_colour in absent:
            out.append(GridEdit("first_colour", o.colour, new_colour=o.first_colour))
    return out


def random_scene(rng: np.random.Generator) -> GridScene:
    """2–4 objects of distinct colours in distinct cells."""
    n = int(rng.integers(2, 5))
    colours = rng.choice(len(COLOURS), n, replace=False)
    cells = rng.choice(CELLS * CELLS, n, replace=False)
    objs = []
    for col, idx in zip(colours, cells, strict=True):
        cell = (int(idx) // CELLS, int(idx) % CELLS)
        objs.append(Obj(int(col), cell, cell, int(col)))
    return GridScene(objs)


def grid_session(
    rng: np.random.Generator, turns: int, ident: str, context_rate: float = 0.5, min_context: int = 0
) -> tuple[Session, list[str], list[np.ndarray]]:
    """A session of `turns` edits, its turn types and its grids. At each turn a context-dependent edit
    is drawn with probability `context_rate` when one applies, else an ordinary one. Sessions with
    fewer than `min_context` context-dependent turns are drawn again (from the same stream)."""
    while True:
        scene = random_scene(rng)
        scenes, edits = [scene], []
        for _ in range(turns):
            ctx = [e for k in CONTEXT for e in valid_edits(scene, k)]
            if ctx and rng.random() < context_rate:
                e = ctx[int(rng.integers(len(ctx)))]
            else:
                kinds = [k for k in ORDINARY if valid_edits(scene, k)]
                options = valid_edits(scene, kinds[int(rng.integers(len(kinds)))])
                e = options[int(rng.integers(len(options)))]
            edits.append(e)
            scene = apply(scene, e)
            scenes.append(scene)
        if sum(e.kind in CONTEXT for e in edits) >= min_context:
            break
    grids = [s.grid() for s in scenes]
    images = np.stack([render(g) for g in grids])
    cur, nxt = [], []
    for k, e in enumerate(edits):
        before, after = scenes[k], scenes[k + 1]
        cur.append(cell_mask([before.by_colour(e.colour).cell] if e.kind != "add" else []))
        new_colour = e.colour if e.new_colour is None else e.new_colour
        nxt.append(cell_mask([after.by_colour(new_colour).cell] if e.kind != "remove" else []))
    session = Session(ident, images, [instruction(e) for e in edits], np.stack(cur), np.stack(nxt))
    return session, [e.kind for e in edits], grids


def pairwise_guess(rng: np.random.Generator, image: np.ndarray, text: str) -> np.ndarray:
    """The best a pairwise editor can do from (I_k, T_k) alone: the exact edit where the pair fixes
    it; for a context-dependent turn a uniform guess among the empty cells (move_back) or the absent
    colours (first_colour). The `chance` floor of the context-dependent turns (scripted, not learned)."""
    grid = decode(image)
    ws = text.split()
    colour = COLOURS.index(ws[2])
    g = grid.copy()
    if ws[0] == "add":
        g[NUMBERS.index(ws[6]), NUMBERS.index(ws[8])] = colour
        return render(g)
    found = np.argwhere(grid == colour)
    if not len(found):  # on its own earlier guesses the named object may be gone: nothing to edit
        return np.asarray(image, np.float32)
    where = tuple(found[0])
    if ws[0] == "remove":
        g[where] = -1
    elif ws[0] == "make":
        g[where] = COLOURS.index(ws[4])
    elif ws[0] == "give":
        absent = [c for c in range(len(COLOURS)) if c not in set(grid.flatten())]
        g[where] = absent[int(rng.integers(len(absent)))]
    else:
        if ws[4] == "back":
            free = np.argwhere(grid < 0)
            cell = tuple(free[int(rng.integers(len(free)))])
        else:
            dr, dc = DIRECTIONS[ws[4]]
            n = NUMBERS.index(ws[5]) + 1
            cell = (where[0] + n * dr, where[1] + n * dc)
        g[where], g[cell] = -1, colour
    return render(g)
