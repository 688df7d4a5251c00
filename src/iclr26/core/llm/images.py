"""Images in chat messages, as OpenAI content parts.

A message's `content` is either a string or a list of parts: `{"type": "text", "text": ...}`
and `{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}`.
This is the wire format vLLM (e.g. serving Qwen2.5-VL), llama.cpp's multimodal server and the
OpenAI API accept. `image_part` turns a numpy array, a PIL image or an image file into such a part.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr26.core.errors import UserError

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


def text_part(text: str) -> dict[str, Any]:
    """A text content part."""
    if not isinstance(text, str):
        raise TypeError(f"text_part needs a str, got {type(text).__name__}")
    return {"type": "text", "text": text}


def _png_bytes(image: Any) -> bytes:
    """PNG bytes of a PIL image or an (H, W), (H, W, 3) or (H, W, 4) array (uint8, or float in [0, 1])."""
    import numpy as np
    from PIL import Image

    if isinstance(image, Image.Image):
        pil = image if image.mode in ("L", "RGB", "RGBA") else image.convert("RGB")
    else:
        arr = np.asarray(image)
        if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (1, 3, 4)):
            raise UserError(f"image array must be (H, W), (H, W, 3) or (H, W, 4), got shape {arr.shape}")
        if arr.size == 0:
            raise UserError(f"image array is empty (shape {arr.shape})")
        if arr.dtype != np.uint8:
            if not np.issubdtype(arr.dtype, np.floating):
                raise UserError(f"image array must be uint8 or float in [0, 1], got dtype {arr.dtype}")
            if not np.isfinite(arr).all() or arr.min() < 0 or arr.max() > 1:
                raise UserError("a float image array must hold finite values in [0, 1]")
            arr = np.round(arr * 255).astype(np.uint8)
        if arr.ndim == 3 and arr.shape[2] == 1:
            arr = arr[..., 0]
        pil = Image.fromarray(arr)
    buf = io.BytesIO()
    pil.save(buf, format="PNG")
    return buf.getvalue()


def image_data_url(image: Any) -> str:
    """A `data:` URL for a numpy array, a PIL image, or a PNG/JPEG/WebP file path."""
    if isinstance(image, str | Path):
        path = Path(image)
        mime = IMAGE_TYPES.get(path.suffix.lower())
        if mime is None:
            raise UserError(f"image file {path} must end in one of {', '.join(IMAGE_TYPES)}")
        if not path.is_file():
            raise UserError(f"image file {path} does not exist")
        data, kind = path.read_bytes(), mime
    else:
        data, kind = _png_bytes(image), "image/png"
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


def image_part(image: Any, *, detail: str | None = None) -> dict[str, Any]:
    """An `image_url` content part holding `image` (array, PIL image or file path) as a data URL."""
    if detail not in (None, "low", "high", "auto"):
        raise UserError(f"detail must be None, 'low', 'high' or 'auto', got {detail!r}")
    url: dict[str, Any] = {"url": image_data_url(image)}
    if detail:
        url["detail"] = detail
    return {"type": "image_url", "image_url": url}


def user_message(text: str, *images: Any) -> dict[str, Any]:
    """A user message with `text` followed by `images` (plain string content when there are none)."""
    if not images:
        return {"role": "user", "content": text}
    return {"role": "user", "content": [text_part(text), *(image_part(im) for im in images)]}


def has_images(messages: Sequence[dict[str, Any]]) -> bool:
    """Whether any message carries an image part."""
    return any(
        isinstance(m.get("content"), list) and any(p.get("type") == "image_url" for p in m["content"])
        for m in messages
    )


def decode_data_url(url: str) -> tuple[str, bytes]:
    """`(mime type, bytes)` of a base64 `data:` URL."""
    head, sep, payload = url.partition(",")
    if not (url.startswith("data:") and sep and head.endswith(";base64")):
        raise UserError(f"not a base64 data URL: {url[:40]!r}...")
    return head[5:-7], base64.b64decode(payload, validate=True)
