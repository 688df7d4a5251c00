"""ChatModel over a local Hugging Face checkpoint directory (transformers), for systems that need
gradients or direct access to the model; and the SmolLM2 GGUF converted once to safetensors.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import torch

from iclr26.core.cache_dir import user_cache_dir
from iclr26.core.llm.base import (
    Completion,
    LLMError,
    LLMUnsupported,
    Message,
    TextStream,
    TokenLogprob,
    refuse_images,
    text_only,
    validate_request,
)
from iclr26.core.llm.embedded import smollm2_gguf_path
from iclr26.core.llm.identity import files_fingerprint
from iclr26.core.llm.usage import UsageMeter

_MODEL_SUFFIXES = (".json", ".safetensors", ".bin", ".gguf", ".model", ".txt")  # what makes the model


def smollm2_hf_dir(cache_dir: Path | None = None) -> Path:
    """A transformers checkpoint of SmolLM2-135M-Instruct, converted from the shipped GGUF once.

    The first call dequantizes the GGUF through transformers (seconds to a minute on 2 cores) and
    saves safetensors under the user cache; later calls return the cached folder at once.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = (cache_dir or user_cache_dir()) / "smollm2-135m-instruct-hf"
    if (target / "config.json").exists() and any(target.glob("*.safetensors")):
        return target
    gguf = smollm2_gguf_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".convert-"))
    try:
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        # transformers marks a GGUF-loaded model as quantized and refuses to save it: copy the
        # dequantized weights into a plain model built from the same config.
        config = loaded.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        model.load_state_dict(loaded.state_dict())
        tok.save_pretrained(tmp)
        model.save_pretrained(tmp, safe_serialization=True)
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)  # atomic on one filesystem: never a half-written cache
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


class TransformersChatModel:
    """Chat completions from a local transformers checkpoint (no hub access).

    Log-probs are those of the model's raw next-token distribution (before temperature).
    JSON-schema-constrained decoding, images and streaming are not available here and raise
    `LLMUnsupported`.
    """

    supports_images = False
    supports_json_schema = False
    supports_logprobs = True

    def __init__(
        self,
        path: Path | str,
        *,
        gguf_file: str | None = None,
        device: str | torch.device = "cpu",
        dtype: torch.dtype = torch.float32,
    ) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(path)
        if not path.is_dir():
            raise FileNotFoundError(f"transformers checkpoint folder {path} does not exist")
        kw: dict[str, Any] = {"local_files_only": True}
        if gguf_file:
            kw["gguf_file"] = gguf_file
        self.tokenizer = AutoTokenizer.from_pretrained(path, **kw)
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, **kw).to(device)
        self.model.eval()
        self.device = torch.device(device)
        self.name = f"transformers:{path.name}"
        self.path = path
        self._identity: str | None = None
        self._generating = threading.Lock()  # generate() and its seeded RNG, one request at a time
        self.usage = UsageMeter()
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

    def identity(self) -> str:
        """`transformers:<folder>:<fingerprint of its config and weight files>`, computed once."""
        if self._identity is None:
            files = [p for p in self.path.iterdir() if p.is_file() and p.suffix in _MODEL_SUFFIXES]
            self._identity = f"transformers:{self.path.name}:{files_fingerprint(files)}"
        return self._identity

    def prompt(self, messages: Sequence[Message], prefix: str | None = None) -> str:
        """The model's chat template applied to `messages`, ready for the assistant's turn (which
        starts with `prefix` when given)."""
        refuse_images(self.name, messages)
        turns = text_only(messages)
        if self.tokenizer.chat_template:
            if prefix:
                return self.tokenizer.apply_chat_template(
                    [*turns, {"role": "assistant", "content": prefix}],
                    continue_final_message=True,
                    tokenize=False,
                )
            return self.tokenizer.apply_chat_template(turns, add_generation_prompt=True, tokenize=False)
        lines = [f"{m['role']}: {m['content']}" for m in turns]
        return "\n".join([*lines, "assistant:" + (f" {prefix}" if prefix else "")])

    def stream(self, messages: Sequence[Message], **kwargs: Any) -> TextStream:
        """Not available on this backend."""
        raise LLMUnsupported(
            f"{self.name}: streaming is not supported by the transformers backend; use the embedded "
            "or HTTP backend"
        )

    def _stop_criteria(self, stop: list[str], prompt_len: int) -> Any:
        """Stop each sequence once its decoded continuation contains a stop string.

        Decoding the text (rather than transformers' `stop_strings` token tables) works with any
        tokenizer, including ones without byte-level pieces.
        """
        from transformers import StoppingCriteria, StoppingCriteriaList

        tokenizer = self.tokenizer

        class _StopOnText(StoppingCriteria):
            def __call__(self, input_ids: torch.Tensor, scores: Any, **kw: Any) -> torch.Tensor:
                texts = tokenizer.batch_decode(input_ids[:, prompt_len:], skip_special_tokens=True)
                hit = [any(s in t for s in stop) for t in texts]
                return torch.tensor(hit, dtype=torch.bool, device=input_ids.device)

        return StoppingCriteriaList([_StopOnText()])

    @torch.no_grad()
    def chat(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        json_schema: dict[str, Any] | None = None,
        logprobs: bool = False,
        top_logprobs: int = 0,
        seed: int | None = None,
        prefix: str | None = None,
    ) -> list[Completion]:
        """Sample `n` completions with `model.generate` (continuing `prefix` if given)."""
        validate_request(messages, n, temperature, max_tokens, top_logprobs)
        if json_schema is not None:
            raise LLMUnsupported(
                f"{self.name}: JSON-schema-constrained output is not supported by the "
                "transformers backend; use the embedded or HTTP backend"
            )
        start = time.perf_counter()
        enc = self.tokenizer(self.prompt(messages, prefix), return_tensors="pt", add_special_tokens=False)
        enc = {k: v.to(self.device) for k, v in enc.items()}
        gen_kw: dict[str, Any] = {
            "max_new_tokens": max_tokens,
            "num_return_sequences": n,
            "return_dict_in_generate": True,
            "output_logits": True,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if temperature > 0:
            gen_kw.update(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
        else:
            gen_kw.update(do_sample=False, temperature=None, top_k=None, top_p=None)
        if stop:
            gen_kw["stopping_criteria"] = self._stop_criteria(list(stop), enc["input_ids"].shape[1])
        devices = [self.device] if self.device.type == "cuda" else []
        with self._generating, torch.random.fork_rng(devices=devices):
            if seed is not None:
                torch.manual_seed(seed)
            out = self.model.generate(**enc, **gen_kw)
        prompt_len = enc["input_ids"].shape[1]
        new = out.sequences[:, prompt_len:]
        # Raw next-token log-probabilities at each generated position: (n, T, V).
        logp = torch.stack(out.logits, dim=1).float().log_softmax(-1) if out.logits else None
        eos = self.tokenizer.eos_token_id
        completions = []
        for i in range(n):
            ids = new[i].tolist()
            finish = "length"
            if eos is not None and eos in ids:
                ids = ids[: ids.index(eos)]
                finish = "stop"
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            for s in stop or ():
                if s in text:
                    text = text[: text.index(s)]
                    finish = "stop"
            lp = None
            if (logprobs or top_logprobs) and logp is not None:
                lp = tuple(
                    TokenLogprob(
                        token=self.tokenizer.decode([tok]),
                        logprob=float(logp[i, t, tok]),
                        top=tuple(
                            (self.tokenizer.decode([int(j)]), float(v))
                            for v, j in zip(*logp[i, t].topk(top_logprobs), strict=True)
                        )
                        if top_logprobs
                        else (),
                    )
                    for t, tok in enumerate(ids)
                )
            completions.append(
                Completion(
                    text=text,
                    finish_reason=finish,
                    logprobs=lp,
                    usage={"prompt_tokens": prompt_len, "completion_tokens": len(ids)},
                )
            )
        if len(completions) != n:
            raise LLMError(f"{self.name}: generated {len(completions)} of {n} samples")
        total = sum(c.usage["completion_tokens"] for c in completions)
        self.usage.record(prompt_len, total, time.perf_counter() - start)
        return completions


class _Loaded:
    """The process's loaded checkpoints, by folder and fingerprint (`shared_transformers_model`)."""

    lock = threading.Lock()
    models: ClassVar[dict[tuple[str, str], TransformersChatModel]] = {}


def shared_transformers_model(path: Path | str) -> TransformersChatModel:
    """One `TransformersChatModel` per checkpoint folder per process, as `--llm hf:PATH` opens it
    for every `chat_model()` of a run: the weights are loaded once, not once per call. A folder
    whose files changed (another fingerprint) is loaded again."""
    folder = Path(path).resolve()
    files = (
        [p for p in folder.iterdir() if p.is_file() and p.suffix in _MODEL_SUFFIXES]
        if folder.is_dir()
        else []
    )
    key = (str(folder), files_fingerprint(files))
    with _Loaded.lock:
        if key not in _Loaded.models:
            _Loaded.models[key] = TransformersChatModel(folder)
        return _Loaded.models[key]
