"""Segmentation of responses (blank lines by default, one line a step on the testbed) and the top-k
selection of segments by the entropy of their first token."""

import pytest
import torch

from iclr26.repro_reward.segments import (
    first_token_entropy,
    segment_completion,
    select_top_k,
    split_segments,
    token_cuts,
)
from iclr26.rlvr.tokenizer import CharTokenizer


def test_split_on_blank_lines():
    text = "First, 3+4.\n\nThat is 7.\n\n\n\nCheck: ok.\n\nAnswer 7"
    spans = split_segments(text)
    assert [text[s:e] for s, e in spans] == [
        "First, 3+4.\n\n",
        "That is 7.\n\n\n\n",  # a run of blank lines stays with the segment before it
        "Check: ok.\n\n",
        "Answer 7",
    ]
    assert split_segments("\n\nA\n\nB") == [(0, 5), (5, 6)]  # a leading blank joins the next segment
    assert split_segments("") == [] and split_segments("\n\n") == []
    with pytest.raises(ValueError, match="sep must be a non-empty string"):
        split_segments(text, sep="")


def test_testbed_lines_stop_at_the_answer():
    text = "3+5+0=8\n5+0+0=5\nA:58\n"
    spans = split_segments(text, sep="\n", stop="A:")
    assert [text[s:e] for s, e in spans] == ["3+5+0=8\n", "5+0+0=5\n"]
    assert split_segments("A:58\n", sep="\n", stop="A:") == []  # no reasoning at all


def test_token_cuts_and_segment_tokens():
    tok = CharTokenizer()
    ids = tok.encode("ab\ncde\nA:1\n", eos=True)
    assert token_cuts(tok.decode, ids, [0, 1, 3, 7]) == [0, 1, 3, 7]  # one token per character
    seg = segment_completion(tok.decode, ids, sep="\n", stop="A:")
    assert seg.token_spans == ((0, 3), (3, 7)) and len(seg) == 2
    # a tokenizer whose tokens span several characters: "ab\n|cd" is one token with the separator
    pieces = ["ab", "\nc", "d\n", "e"]
    seg = segment_completion(lambda ids: "".join(pieces[i] for i in ids), [0, 1, 2, 3], sep="\n")
    assert seg.token_spans == ((0, 2), (2, 3), (3, 4))  # the straddling token goes to the earlier segment


def test_top_k_segments_by_first_token_entropy():
    tok = CharTokenizer()
    ids = tok.encode("ab\ncde\nf\ngh\nA:5\n", eos=True)
    seg = segment_completion(tok.decode, ids, sep="\n", stop="A:")
    assert [s for s, _ in seg.token_spans] == [0, 3, 7, 9]
    entropy = torch.full((len(ids),), 10.0)  # high everywhere but at the segments' first tokens
    entropy[[0, 3, 7, 9]] = torch.tensor([0.5, 2.0, 0.1, 1.5])
    first = first_token_entropy(seg, entropy)
    torch.testing.assert_close(first, torch.tensor([0.5, 2.0, 0.1, 1.5]))
    assert select_top_k(first, 2) == [1, 3]  # the two most uncertain starts, in text order
    assert select_top_k(first, 3) == [0, 1, 3]
    assert select_top_k(first, 10) == [0, 1, 2, 3]  # k beyond the count keeps every segment
    assert select_top_k([1.0, 2.0, 2.0, 0.0], 1) == [1]  # ties: the earlier segment
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        select_top_k(first, 0)
    with pytest.raises(ValueError, match="pass the entropies of this same completion"):
        first_token_entropy(seg, entropy[:5])
