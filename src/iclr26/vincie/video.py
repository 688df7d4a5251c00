"""Videos made here and annotated into sessions (VINCIE §3.1, with code that knows the scene in
place of the paper's VLM and GroundingDINO + SAM2).

A video is a scene changing through a list of edits, each spread over `frames_per_edit` frames
(moves and resizes are continuous; appearing, disappearing, recolouring and retexturing happen
mid-edit). Frames are sampled sparsely, by equal interval or by a fixed count. Each transition
between two kept frames gets an instruction written from the scene difference and the exact masks
of the changed sprites in both frames. A `Session` is the interleaved (I₀, T₀, M₀₀, M₀₁, I₁, …).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr26.core.errors import UserError
from iclr26.vincie.scenes import (
    COLOURS,
    DIRECTIONS,
    PLACES,
    SHAPES,
    TEXTURES,
    Edit,
    Scene,
    apply_edit,
    change_mask,
    changed_idents,
    random_edit,
    random_scene,
    render,
)

SAMPLINGS = ("interval", "count")


class SessionError(UserError):
    """A session that cannot be used; the message names the session and the turn."""


def words(text: str) -> list[str]:
    """The words of an instruction as the text encoder reads them (lower case, commas and full
    stops as spaces); the text budget counts these."""
    return text.lower().replace(",", " ").replace(".", " ").split()


@dataclass
class Session:
    """An editing session: n images (n, H, W, 3) in [0, 1], n − 1 instructions, and per turn the
    masks of the changed region in the current and the next image ((n − 1, H, W) bool each, or None
    when the session has no masks)."""

    ident: str
    images: np.ndarray
    instructions: list[str]
    masks_current: np.ndarray | None = None
    masks_next: np.ndarray | None = None

    @property
    def turns(self) -> int:
        """Number of edits (images − 1)."""
        return len(self.instructions)

    def truncated(self, turns: int) -> Session:
        """The first `turns` turns (turns + 1 images)."""
        cut = lambda m: None if m is None else m[:turns]  # noqa: E731
        return Session(
            self.ident, self.images[: turns + 1], self.instructions[:turns],
            cut(self.masks_current), cut(self.masks_next),
        )  # fmt: skip


def check_session(session: Session, max_words: int | None = None) -> Session:
    """Raise SessionError naming the session and turn unless sizes agree, masks are binary and each
    instruction fits `max_words`; returns the session."""
    sid = session.ident
    images = np.asarray(session.images)
    if images.ndim != 4 or images.shape[-1] != 3 or len(images) < 2:
        raise SessionError(f"session {sid}: images must be (n ≥ 2, H, W, 3), got shape {images.shape}")
    if len(session.instructions) != len(images) - 1:
        raise SessionError(
            f"session {sid}: {len(images)} images need {len(images) - 1} instructions, "
            f"got {len(session.instructions)}"
        )
    if (session.masks_current is None) != (session.masks_next is None):
        have = "masks_current" if session.masks_current is not None else "masks_next"
        raise SessionError(f"session {sid}: has {have} only; give both mask sets or neither")
    for name in ("masks_current", "masks_next"):
        m = getattr(session, name)
        if m is None:
            continue
        m = np.asarray(m)
        if m.shape != (len(images) - 1, *images.shape[1:3]):
            raise SessionError(
                f"session {sid}: {name} must be ({len(images) - 1}, {images.shape[1]}, {images.shape[2]}), "
                f"got {m.shape}"
            )
        for k in range(len(m)):
            if not np.isin(m[k], (0, 1)).all():
                raise SessionError(
                    f"session {sid}, turn {k}: {name} is not binary (values other than 0 and 1)"
                )
    if max_words is not None:
        for k, text in enumerate(session.instructions):
            n = len(words(text))
            if n > max_words:
                raise SessionError(
                    f"session {sid}, turn {k}: instruction has {n} words, over the text budget of {max_words}"
                )
    return session


# ---------------------------------------------------------------------------------------------
# Instructions from the scene difference

_PLACE_WORDS = {"centre": "in the centre"}


def instruction(edit: Edit, amount: float = 1.0, variant: int = 0) -> str:
    """A template instruction for `amount` of `edit` (a partial move or resize says 'a little')."""
    name = f"the {edit.colour} {edit.shape}"
    little = "a little " if amount < 0.75 else ""
    v = variant % 2
    if edit.kind == "move":
        return (f"move {name} {little}{edit.value}", f"shift {name} {little}{edit.value}")[v]
    if edit.kind == "add":
        where = _PLACE_WORDS.get(edit.value, f"at the {edit.value}")
        return (f"add a {edit.colour} {edit.shape} {where}", f"put a {edit.colour} {edit.shape} {where}")[v]
    if edit.kind == "remove":
        return (f"remove {name}", f"delete {name}")[v]
    if edit.kind == "recolour":
        return (f"make {name} {edit.value}", f"turn {name} {edit.value}")[v]
    if edit.kind == "resize":
        word = {"bigger": ("bigger", "larger"), "smaller": ("smaller", "smaller")}[edit.value][v]
        return f"make {name} {little}{word}"
    if edit.kind == "retexture":
        return (f"make {name} {edit.value}", f"give {name} a {edit.value} look")[v]
    raise ValueError(f"unknown edit kind {edit.kind!r}")


def vocabulary() -> list[str]:
    """Every word the templates can write (the text encoder's vocabulary)."""
    vocab = {"move", "shift", "a", "little", "add", "put", "at", "the", "in", "remove", "delete", "make"}
    vocab |= {"turn", "bigger", "larger", "smaller", "give", "look", "and", "centre"}
    vocab |= set(COLOURS) | set(SHAPES) | set(TEXTURES) | set(DIRECTIONS)
    vocab |= {w for p in PLACES for w in p.split()}
    return sorted(vocab)


def paraphrase(text: str, model: object) -> str:
    """`text` reworded by a chat model (`core.llm`), kept only if every colour and shape word of
    the original survives; else the template itself."""
    prompt = (
        "Reword this image-editing instruction in one short sentence. Keep every colour and shape "
        f"word. Reply with the sentence only.\nInstruction: {text}"
    )
    reply = model.chat([{"role": "user", "content": prompt}], max_tokens=40)[0]  # type: ignore[attr-defined]
    out = reply.text.strip().strip(".").lower()
    keep = [w for w in words(text) if w in COLOURS or w in SHAPES]
    return out if out and all(w in words(out) for w in keep) and len(words(out)) <= 24 else text


# ---------------------------------------------------------------------------------------------
# Videos and their sparse frames


@dataclass
class Video:
    """The scene at every frame, and for each frame the (edit, amount done) history behind it."""

    scenes: list[Scene]
    progress: list[list[tuple[Edit, float]]]


def make_video(
    rng: np.random.Generator, edits: int, frames_per_edit: int = 4, n_objects: tuple[int, int] = (2, 4)
) -> Video:
    """A random scene changed by `edits` random edits, each over `frames_per_edit` frames."""
    scene = random_scene(rng, n_objects)
    scenes, progress = [scene], [[]]
    done: list[tuple[Edit, float]] = []
    for _ in range(edits):
        edit = random_edit(rng, scene)
        for f in range(1, frames_per_edit + 1):
            amount = f / frames_per_edit
            scenes.append(apply_edit(scene, edit, amount))
            progress.append([*done, (edit, amount)])
        scene = scenes[-1]
        done.append((edit, 1.0))
    return Video(scenes, progress)


def sample_frames(n_frames: int, mode: str, rng: np.random.Generator, frames_per_edit: int) -> list[int]:
    """Sparse frame indices: `interval` keeps every s-th frame from a random offset (s from half an
    edit to one edit), `count` keeps a fixed number (one to two per edit, at most 8) spread evenly."""
    if mode == "interval":
        stride = int(rng.integers(max(1, frames_per_edit // 2), frames_per_edit + 1))
        start = int(rng.integers(0, stride))
        idx = list(range(start, n_frames, stride))
        return idx if len(idx) >= 2 else [0, n_frames - 1]
    if mode == "count":
        edits = max(1, (n_frames - 1) // frames_per_edit)
        count = int(rng.integers(min(8, edits + 1), min(8, 2 * edits + 1) + 1))
        return sorted(set(np.linspace(0, n_frames - 1, count).round().astype(int).tolist()))
    raise ValueError(f"sampling must be one of {SAMPLINGS}, got {mode!r}")


def transition_text(video: Video, a: int, b: int, variant: int) -> str:
    """The instruction for frames a → b: each edit that progressed between them, joined by 'and'."""
    before = dict((id(e), amt) for e, amt in video.progress[a])
    parts = []
    for e, amt in video.progress[b]:
        step = amt - before.get(id(e), 0.0)
        if step <= 0:
            continue
        instant = e.kind in ("add", "remove", "recolour", "retexture")
        if instant and not (before.get(id(e), 0.0) < 0.5 <= amt):
            continue  # an instant edit that happened outside this transition
        parts.append(instruction(e, 1.0 if instant else step, variant))
    return " and ".join(parts)


def annotate(video: Video, frames: Sequence[int], size: int, ident: str, variant: int = 0) -> Session | None:
    """The session of the kept `frames`: images, instructions and exact change masks. Consecutive
    kept frames that show no change are merged; None when fewer than two images remain."""
    keep = [frames[0]]
    for f in frames[1:]:
        if changed_idents(video.scenes[keep[-1]], video.scenes[f]):
            keep.append(f)
    if len(keep) < 2:
        return None
    rendered = [render(video.scenes[f], size) for f in keep]
    texts, cur, nxt = [], [], []
    for k in range(len(keep) - 1):
        a, b = keep[k], keep[k + 1]
        idents = changed_idents(video.scenes[a], video.scenes[b])
        cur.append(change_mask(video.scenes[a], rendered[k][1], idents))
        nxt.append(change_mask(video.scenes[b], rendered[k + 1][1], idents))
        texts.append(transition_text(video, a, b, variant + k))
    images = np.stack([r[0] for r in rendered])
    return Session(ident, images, texts, np.stack(cur), np.stack(nxt))


def video_session(
    rng: np.random.Generator,
    size: int,
    ident: str,
    max_images: int = 8,
    frames_per_edit: int = 4,
    max_words: int = 16,
) -> Session:
    """One training session from a fresh random video, sampled by a random mode, at most
    `max_images` images (a longer session is cut); a video whose instructions exceed `max_words`
    words is drawn again."""
    while True:
        edits = int(rng.integers(1, max_images))
        video = make_video(rng, edits, frames_per_edit)
        mode = SAMPLINGS[int(rng.integers(2))]
        frames = sample_frames(len(video.scenes), mode, rng, frames_per_edit)
        s = annotate(video, frames, size, ident, variant=int(rng.integers(2)))
        if s is not None:
            s = s.truncated(min(s.turns, max_images - 1))
            if all(len(words(t)) <= max_words for t in s.instructions):
                return s


def edit_session(rng: np.random.Generator, size: int, turns: int, ident: str) -> tuple[Session, list[Scene]]:
    """A benchmark session: a scene and `turns` complete edits (no partial moves), with its scenes.
    An edit that changes no pixel (a sprite hidden behind another) is drawn again, so copying the
    previous image can never pass a turn."""
    scenes = [random_scene(rng)]
    edits = []
    for k in range(turns):
        for _ in range(100):
            e = random_edit(rng, scenes[-1])
            after = apply_edit(scenes[-1], e)
            if (np.abs(render(after, size)[0] - render(scenes[-1], size)[0]).max(-1) > 0.12).any():
                break
        else:
            raise ValueError(f"session {ident}, turn {k}: no visible edit found in 100 draws")
        edits.append(e)
        scenes.append(after)
    video = Video(scenes, [[(e, 1.0) for e in edits[:k]] for k in range(turns + 1)])
    s = annotate(video, list(range(turns + 1)), size, ident)
    if s is None or s.turns != turns:  # cannot happen: every kept edit changes pixels
        raise ValueError(f"session {ident}: an edit left the scene unchanged")
    s.instructions = [instruction(e, 1.0, int(rng.integers(2))) for e in edits]
    return s, scenes


# ---------------------------------------------------------------------------------------------
# Real video folders


def load_sessions(folder: Path | str, max_words: int | None = None, size: int | None = None) -> list[Session]:
    """Sessions from `folder/annotation.json`: a list of {"id", "images": [paths], "instructions":
    [...], optional "masks_current"/"masks_next": [paths]}, paths relative to the folder (images are
    RGB files, masks single-channel 0/255). With `size`, images are resized to size × size."""
    from PIL import Image

    folder = Path(folder)
    path = folder / "annotation.json"
    if not path.is_file():
        raise UserError(
            f"{folder}: no annotation.json (see iclr26.vincie.video.load_sessions for the schema)"
        )
    try:
        rows = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise UserError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(rows, list):
        raise UserError(f"{path}: expected a list of sessions")
    out = []
    for n, row in enumerate(rows):
        sid = str(row.get("id", n)) if isinstance(row, dict) else str(n)
        if not isinstance(row, dict) or "images" not in row or "instructions" not in row:
            raise SessionError(f"session {sid}: needs 'images' and 'instructions'")

        def load(p: str, mode: str, turn: int, sid: str = sid) -> np.ndarray:
            file = folder / p
            if not file.is_file():
                raise SessionError(f"session {sid}, turn {turn}: file {file} does not exist")
            im = Image.open(file).convert(mode)
            if size is not None:
                im = im.resize((size, size), Image.NEAREST if mode == "L" else Image.BILINEAR)
            return np.asarray(im)

        images = [load(p, "RGB", k) for k, p in enumerate(row["images"])]
        for k, im in enumerate(images[1:], start=1):
            if im.shape != images[0].shape:
                raise SessionError(
                    f"session {sid}, turn {k}: image size {im.shape[1]}x{im.shape[0]} differs from the first "
                    f"image's {images[0].shape[1]}x{images[0].shape[0]}"
                )
        masks = {}
        for key in ("masks_current", "masks_next"):
            if row.get(key):
                arrs = [load(p, "L", k) for k, p in enumerate(row[key])]
                for k, m in enumerate(arrs):
                    if not np.isin(m, (0, 255)).all():
                        raise SessionError(
                            f"session {sid}, turn {k}: {key} is not binary (values other than 0 and 255)"
                        )
                masks[key] = np.stack(arrs) > 127
        session = Session(
            sid, np.stack(images).astype(np.float32) / 255.0, list(row["instructions"]), **masks
        )
        out.append(check_session(session, max_words))
    return out
