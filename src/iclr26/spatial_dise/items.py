"""A Spatial-DISE item: a question scene, four options, the answer proved from the scene.

Every task implements the `Task` protocol:

- `draft(rng, difficulty)` builds scene parameters (no pixels): a `Draft` with the question
  scene and four option scenes, the correct option first (the authors' generator writes the
  answer as option 0, then shuffles);
- `check(draft)` is the verifier: it proves from the scene parameters that option 0 answers the
  question, that no distractor does, and that no two options are equivalent, and returns the
  problems it found (none: the draft is proved);
- `panels(draft)` renders the question panels and the four option panels as PIL images.

`make_item` drafts, verifies and regenerates until a draft is proved (counting the rejections),
shuffles the options with the item's own generator, and `compose` lays the panels out in one
640x480 image with the letters A-D under the options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from iclr26.core.errors import UserError

QUADRANTS = ("Intrinsic-Static", "Intrinsic-Dynamic", "Extrinsic-Static", "Extrinsic-Dynamic")
"""The taxonomy's four quadrants (intrinsic/extrinsic x static/dynamic)."""

DIFFICULTIES = ("easy", "medium", "hard")
LETTERS = ("A", "B", "C", "D")
WIDTH, HEIGHT = 640, 480
"""Every item is one 640x480 RGB image: question panels on top, options A-D below."""

PROMPT_SUFFIX = "Please respond with only one letter: A, B, C, or D."
"""The paper's answer instruction, appended to every question."""


@dataclass
class Draft:
    """Scene parameters of one item before shuffling; `options[0]` is the correct one."""

    task: str
    difficulty: str
    question: str
    scene: Any
    options: list[Any]
    meta: dict[str, Any] = field(default_factory=dict)


class Task(Protocol):
    """One of the ten tasks: its names, its quadrant, and how to draft, prove and draw an item."""

    name: str  # our task id, e.g. "3d_rotation" (the authors' category for the 3D tasks)
    quadrant: str  # one of QUADRANTS
    dimension: str  # "2d" or "3d"

    def draft(self, rng: np.random.Generator, difficulty: str) -> Draft: ...

    def check(self, draft: Draft) -> list[str]: ...

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]: ...


@dataclass
class Item:
    """A proved, shuffled item: `order[k]` is the draft option shown under letter k."""

    task: str
    quadrant: str
    difficulty: str
    question: str
    draft: Draft
    order: tuple[int, ...]
    rejected: int  # drafts the verifier refused before this one was proved

    @property
    def answer(self) -> str:
        """The letter under which the correct option (draft option 0) is shown."""
        return LETTERS[self.order.index(0)]

    @property
    def prompt(self) -> str:
        """The question text with the paper's one-letter instruction."""
        return f"{self.question} {PROMPT_SUFFIX}"

    def option_scenes(self) -> list[Any]:
        """The option scenes in letter order."""
        return [self.draft.options[i] for i in self.order]


class GenerationError(UserError):
    """The verifier refused every draft a task produced."""


def make_item(
    task: Task, rng: np.random.Generator, difficulty: str, *, max_tries: int = 50, gate: bool = True
) -> Item:
    """Draft, prove (regenerating refused drafts) and shuffle one item of `task`.

    With `gate` a proved draft must also pass the answerability gate (`answerability.problems`: the
    difference of each distractor shows in the pictures); one that fails is redrafted like a refused
    one. The gate draws no random numbers, so `gate=False` gives the items made before it."""
    from iclr26.spatial_dise.answerability import problems as unanswerable

    if difficulty not in DIFFICULTIES:
        raise UserError(f"unknown difficulty {difficulty!r}; choose from {', '.join(DIFFICULTIES)}")
    problems: list[str] = []
    for tries in range(max_tries):
        draft = task.draft(rng, difficulty)
        if len(draft.options) != len(LETTERS):
            raise GenerationError(f"{task.name} drafted {len(draft.options)} options, not 4")
        problems = task.check(draft)
        if not problems and gate:
            problems = unanswerable(task, draft)
        if not problems:
            order = tuple(int(i) for i in rng.permutation(len(LETTERS)))
            return Item(task.name, task.quadrant, difficulty, draft.question, draft, order, tries)
    raise GenerationError(f"{task.name} ({difficulty}): no draft proved in {max_tries} tries: {problems[:3]}")


def font(size: int) -> ImageFont.ImageFont:
    """PIL's bundled font at `size` (deterministic: no system fonts are looked up)."""
    return ImageFont.load_default(size=size)


def fit(panel: Image.Image, width: int, height: int) -> Image.Image:
    """`panel` scaled to fit in width x height, centred on white."""
    scale = min(width / panel.width, height / panel.height)
    size = (max(1, round(panel.width * scale)), max(1, round(panel.height * scale)))
    canvas = Image.new("RGB", (width, height), "white")
    canvas.paste(
        panel.convert("RGB").resize(size, Image.Resampling.LANCZOS),
        ((width - size[0]) // 2, (height - size[1]) // 2),
    )
    return canvas


QUESTION_BOX = (0, 0, WIDTH, 250)
"""Where the question panels go (left, top, right, bottom)."""
OPTION_TOP, OPTION_HEIGHT, LABEL_HEIGHT = 262, 190, 28


def option_box(k: int) -> tuple[int, int, int, int]:
    """The box of option k (0-3) in the composed image."""
    w = WIDTH // 4
    return (k * w + 4, OPTION_TOP, (k + 1) * w - 4, OPTION_TOP + OPTION_HEIGHT)


def question_boxes(n: int) -> list[tuple[int, int, int, int]]:
    """The boxes of n question panels side by side in the question strip."""
    left, top, right, bottom = QUESTION_BOX
    w = (right - left) // n
    return [(left + i * w + 6, top + 6, left + (i + 1) * w - 6, bottom - 6) for i in range(n)]


def compose(question_panels: Sequence[Image.Image], option_panels: Sequence[Image.Image]) -> Image.Image:
    """The item image: question panels across the top, options A-D with their letters below."""
    if not question_panels or len(option_panels) != len(LETTERS):
        raise ValueError("compose needs at least one question panel and exactly four option panels")
    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    draw = ImageDraw.Draw(image)
    for panel, (x0, t, r, b) in zip(question_panels, question_boxes(len(question_panels)), strict=True):
        image.paste(fit(panel, r - x0, b - t), (x0, t))
    draw.line([(8, QUESTION_BOX[3] + 4), (WIDTH - 8, QUESTION_BOX[3] + 4)], fill=(160, 160, 160), width=2)
    label_font = font(22)
    for k, panel in enumerate(option_panels):
        x0, t, r, b = option_box(k)
        image.paste(fit(panel, r - x0, b - t), (x0, t))
        draw.rectangle([x0, t, r - 1, b - 1], outline=(200, 200, 200), width=1)
        draw.text(
            ((x0 + r) / 2, b + LABEL_HEIGHT / 2 + 2), LETTERS[k], fill="black", font=label_font, anchor="mm"
        )
    return image


def render_item(task: Task, item: Item) -> Image.Image:
    """The composed image of a shuffled item."""
    question_panels, options = task.panels(item.draft)
    return compose(question_panels, [options[i] for i in item.order])


def crop_panels(image: Image.Image, n_question: int) -> tuple[list[Image.Image], list[Image.Image]]:
    """The question and option panels cut back out of a composed image (for the trained scorer)."""
    qs = [image.crop(box) for box in question_boxes(n_question)]
    return qs, [image.crop(option_box(k)) for k in range(len(LETTERS))]
