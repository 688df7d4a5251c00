"""The run's model: one choice per run, `iclr26 run NAME --llm auto|embedded|http|hf:PATH`.

`auto` (the default) is the user's OpenAI-compatible server when `ICLR26_LLM_BASE_URL` is set, else
the embedded SmolLM2-135M-Instruct. The choice is resolved once, when the run starts
(`resolve_llm`): an `http` choice carries the server's URL and model name with it, so a Ray worker
on another machine opens the same model (`LLMChoice.open`); the API key is read from the worker's
own `ICLR26_LLM_API_KEY`, never carried.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from iclr26.core.errors import UserError

if TYPE_CHECKING:
    from iclr26.core.llm.base import ChatModel

LLM_CHOICES = ("auto", "embedded", "http", "hf:PATH")
"""what `--llm` accepts"""


@dataclass(frozen=True)
class LLMChoice:
    """A resolved `--llm`: the backend (`embedded`, `http` or `transformers`), what was asked
    (`auto` too), and the server (`http`) or the checkpoint folder (`transformers`)."""

    backend: str
    asked: str = ""
    base_url: str = ""
    model: str = ""
    path: str = ""

    @property
    def label(self) -> str:
        """`embedded`, `http` or `hf:PATH`: what `--llm` would name to choose it again."""
        return f"hf:{self.path}" if self.backend == "transformers" else self.backend

    @property
    def sees_images(self) -> bool:
        """Whether images can be sent: a server may serve a vision model; SmolLM2 and the
        transformers backend read text only."""
        return self.backend == "http"

    def describe(self) -> dict[str, str]:
        """The choice as results.json records it (`asked`, `used`, and the server or folder)."""
        out = {"asked": self.asked or self.label, "used": self.label}
        if self.backend == "http":
            shown = without_credentials(self.base_url)
            out |= {"base_url": shown, "model": self.model or "(the server's default)"}
        return out

    def open(self, *, cache: Path | str | None = None, max_concurrency: int | None = None) -> ChatModel:
        """The model, built here (in a Ray worker too). `cache` (a SQLite file) wraps it in a
        `CachedChatModel`; `max_concurrency` bounds the HTTP backend's requests in flight."""
        from iclr26.core.llm.cache import CachedChatModel, ResponseCache

        model: ChatModel
        if self.backend == "http":
            from iclr26.core.llm.http import OpenAIChatModel

            extra = {} if max_concurrency is None else {"max_concurrency": max_concurrency}
            model = OpenAIChatModel.from_env(base_url=self.base_url, model=self.model or None, **extra)
        elif self.backend == "embedded":
            from iclr26.core.llm.embedded import shared_embedded_model

            model = shared_embedded_model()  # one llama.cpp server per process
        elif self.backend == "transformers":
            from iclr26.core.llm.hf import shared_transformers_model

            model = shared_transformers_model(self.path)  # loaded once per process
        else:
            raise UserError(f"unknown LLM backend {self.backend!r}")
        return CachedChatModel(model, ResponseCache(cache)) if cache is not None else model


def without_credentials(url: str) -> str:
    """`url` without a `user:password@` part (results.json is shared; the key never goes in it)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def resolve_llm(spec: str = "auto") -> LLMChoice:
    """The `LLMChoice` that `--llm spec` names, read against the environment now; a bad `spec`, an
    `http` choice without `ICLR26_LLM_BASE_URL` or an `hf:` folder that is not there is a one-line
    `UserError`."""
    spec = spec.strip()
    backend = spec
    if spec == "auto":
        backend = "http" if os.environ.get("ICLR26_LLM_BASE_URL") else "embedded"
    if backend == "embedded":
        return LLMChoice("embedded", asked=spec)
    if backend == "http":
        base = os.environ.get("ICLR26_LLM_BASE_URL", "")
        if not base:
            raise UserError("--llm http needs ICLR26_LLM_BASE_URL (e.g. http://127.0.0.1:8000/v1)")
        if not base.startswith(("http://", "https://")):
            raise UserError(f"ICLR26_LLM_BASE_URL must start with http:// or https://, got {base!r}")
        return LLMChoice("http", asked=spec, base_url=base, model=os.environ.get("ICLR26_LLM_MODEL", ""))
    if spec.startswith("hf:"):
        path = spec[3:]
        if not path or not Path(path).is_dir():
            raise UserError(f"--llm {spec}: give hf:PATH with PATH a local Hugging Face checkpoint folder")
        return LLMChoice("transformers", asked=spec, path=str(Path(path).resolve()))
    raise UserError(f"--llm must be one of {', '.join(LLM_CHOICES)}; got {spec!r}")
