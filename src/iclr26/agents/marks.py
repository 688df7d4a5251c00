"""Drawing on screenshots: numbered set-of-mark boxes, and the point an action hit.

Set-of-mark prompting (Yang et al., 2023) shows a vision model the screenshot with a numbered box
on each element it may act on; the agent names the number instead of guessing pixels. `draw_boxes`
draws those boxes (and, in a second colour, the ones to highlight); `mark_point` draws a cross-hair
where an action landed, for figures and episode viewers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

BLUE, RED = (30, 90, 220), (220, 30, 30)


def draw_boxes(
    image: Image.Image,
    boxes: Sequence[tuple[str, tuple[int, int, int, int]]],
    *,
    highlight: Iterable[str] = (),
    offset_y: int = 0,
) -> Image.Image:
    """A copy of `image` with each (label, (x, y, w, h)) box outlined and its label on a tab above
    it (inside, when there is no room above); labels in `highlight` in red. `offset_y` is subtracted
    from each y (boxes in page coordinates drawn on a slice that starts lower)."""
    from PIL import ImageDraw

    img = image.copy()
    draw = ImageDraw.Draw(img)
    hot = set(highlight)
    for label, (x, y, w, h) in boxes:
        y -= offset_y
        colour = RED if label in hot else BLUE
        draw.rectangle((x, y, x + w, y + h), outline=colour, width=3 if label in hot else 2)
        top = y - 14 if y >= 14 else y  # above the box, so the element's first letters stay readable
        draw.rectangle((x, top, x + 7 * len(label) + 6, top + 14), fill=colour)
        draw.text((x + 3, top + 1), label, fill=(255, 255, 255))
    return img


def mark_point(image: Image.Image, x: int, y: int, *, label: str = "", radius: int = 14) -> Image.Image:
    """A copy of `image` with a red circle and cross-hair at (x, y), and `label` beside it."""
    from PIL import ImageDraw

    img = image.copy()
    draw = ImageDraw.Draw(img)
    draw.ellipse((x - radius, y - radius, x + radius, y + radius), outline=RED, width=3)
    draw.line((x - 2 * radius, y, x + 2 * radius, y), fill=RED, width=2)
    draw.line((x, y - 2 * radius, x, y + 2 * radius), fill=RED, width=2)
    if label:
        width = 7 * len(label) + 8
        left = x + radius + 4 if x + radius + 4 + width < img.width else x - radius - 4 - width
        draw.rectangle((left, y - 9, left + width, y + 9), fill=RED)
        draw.text((left + 4, y - 6), label, fill=(255, 255, 255))
    return img
