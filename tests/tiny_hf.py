"""A tiny, randomly initialised Hugging Face causal LM with a character tokenizer, for tests
(no hub access)."""

import torch

CHARS = "abcdefghijklmnopqrstuvwxyz0123456789 .,?!:+=\n"


def tiny_llama(roles: bool = False, seed: int = 0, chars: str = CHARS):
    """(LlamaForCausalLM, PreTrainedTokenizerFast): 2 layers, width 32, one token per character.

    With `roles`, <system>/<user>/<assistant> tokens and a chat template are added; `chars` is the
    character vocabulary.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    roles_tokens = ["<system>", "<user>", "<assistant>"] if roles else []
    vocab = {t: i for i, t in enumerate(["<pad>", "<eos>", *roles_tokens, *CHARS])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", additional_special_tokens=roles_tokens
    )
    if roles:
        fast.chat_template = (
            "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{% endfor %}"
            "{% if add_generation_prompt %}<assistant>{% endif %}"
        )
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        eos_token_id=1,
        pad_token_id=0,
    )
    return LlamaForCausalLM(cfg), fast


def save_tiny_checkpoint(path, tokenizer: bool = True):
    """A tiny chat Llama whose characters cover the rlvr tasks, saved as a checkpoint folder
    (without its tokenizer files when `tokenizer` is False); returns `path`."""
    import string

    model, fast = tiny_llama(roles=True, chars=string.digits + string.ascii_letters + ":+-*=,;>\n ")
    model.save_pretrained(path)
    if tokenizer:
        fast.save_pretrained(path)
    return path
