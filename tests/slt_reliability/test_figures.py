"""The three figures write a PNG at the given path and reject malformed input with a named ValueError."""

import math

import numpy as np
import pytest

from iclr26.slt_reliability import figures as F
from iclr26.slt_reliability.figures import RocCurve, TokenExample

PNG = b"\x89PNG\r\n\x1a\n"


def _is_png(path):
    data = path.read_bytes()
    return data[:8] == PNG and len(data) > 5_000


def _examples():
    long = "Donaudampfschifffahrtsgesellschaftskapitän" * 2  # longer than a row
    words = ("morgen", "regen", "im", "norden", "und", "sonne", "in", "berlin") * 3 + (long, "ende")
    rel = tuple(float(x) for x in np.linspace(0, 1, len(words)))
    flagged = tuple(w == "berlin" for w in words)
    return [
        TokenExample(
            "hallucinated (CHAIR 0.50), R = 0.21", words, rel, ("morgen", "regen", "im", "norden"), flagged
        ),
        TokenExample(
            "grounded (CHAIR 0.00), R = 0.93", ("morgen", "regen"), (0.9, 0.95), ("morgen", "regen")
        ),
        TokenExample("empty hypothesis", (), (), ("nichts",)),
    ]


def test_token_figure_writes_png(tmp_path):
    path = tmp_path / "tokens.png"
    assert F.token_figure(_examples(), path) == "tokens.png"
    assert _is_png(path)
    assert F.token_figure(_examples()[1:2], str(tmp_path / "one.png")) == "one.png"


def test_layout_wraps_rows_and_cuts_long_words():
    boxes = F._layout(["a" * 10] * 20 + ["b" * 200])
    assert max(x + w for _, x, w, _ in boxes) <= F.ROW_CHARS
    assert boxes[-1][0] > boxes[0][0] and boxes[-1][3].endswith("…")
    assert [row for row, *_ in boxes] == sorted(row for row, *_ in boxes)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"words": ("a", "b"), "reliability": (0.5,)}, "example 'bad'.*2 words but 1 reliability"),
        ({"words": ("a",), "reliability": (1.5,)}, r"reliability must be in \[0, 1\]"),
        ({"words": ("a",), "reliability": (-0.1,)}, r"reliability must be in \[0, 1\]"),
        ({"words": ("a",), "reliability": (math.nan,)}, "NaN"),
        ({"words": ("a",), "reliability": (0.5,), "flagged": (True, False)}, "flagged"),
    ],
)
def test_token_example_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TokenExample(title="bad", reference=("a",), **kwargs)


def test_token_figure_errors(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        F.token_figure([], tmp_path / "t.png")
    with pytest.raises(ValueError, match=r"\.png"):
        F.token_figure(_examples(), tmp_path / "t.pdf")


def _curve(power):
    fpr = np.linspace(0, 1, 21)
    tpr = fpr**power
    return RocCurve(fpr, tpr, float(np.trapezoid(tpr, fpr)))


def test_roc_figure_writes_png(tmp_path):
    curves = {
        "phoenix_like / gloss_based": {
            "grounding": _curve(0.3),
            "confidence": _curve(0.6),
            "META": _curve(0.4),
        },
        "phoenix_like / gloss_free": {"grounding": _curve(0.5), "s_hid": RocCurve([0, 1], [0, 1], math.nan)},
        "csl_like / gloss_based": {"confidence": _curve(0.7)},
        "csl_like / gloss_free": {"grounding": _curve(0.2)},
    }
    path = tmp_path / "roc.png"
    assert F.roc_figure(curves, path) == "roc.png"
    assert _is_png(path)


def test_roc_errors(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        F.roc_figure({}, tmp_path / "r.png")
    with pytest.raises(ValueError, match="'m' has no curves"):
        F.roc_figure({"m": {}}, tmp_path / "r.png")
    with pytest.raises(ValueError, match="not RocCurve"):
        F.roc_figure({"m": {"grounding": (np.zeros(2), np.ones(2), 0.5)}}, tmp_path / "r.png")
    with pytest.raises(ValueError, match="same non-zero length"):
        RocCurve(np.zeros(3), np.ones(2), 0.5)
    with pytest.raises(ValueError, match=r"tpr must lie in \[0, 1\]"):
        RocCurve(np.zeros(2), np.array([0.0, 2.0]), 0.5)
    with pytest.raises(ValueError, match="auc"):
        RocCurve(np.zeros(2), np.ones(2), 1.5)


def _rows():
    rows = []
    for model, base in (("gloss_based", 0.8), ("gloss_free", 0.6)):
        for kind, strengths in (
            ("noise", (0.0, 0.1, 0.3)),
            ("downsample", (1, 2, 4)),
            ("drop", (0.0, 0.25, 0.5)),
        ):
            for k, s in enumerate(strengths):
                rel = base - 0.15 * k
                rows.append(
                    {
                        "degradation": kind,
                        "strength": s,
                        "model": model,
                        "reliability": rel,
                        "hallucinated": 1 - rel,
                    }
                )
    return rows


def test_degradation_figure_writes_png(tmp_path):
    path = tmp_path / "degradation.png"
    assert F.degradation_figure(_rows(), path) == "degradation.png"
    assert _is_png(path)
    one = [r for r in _rows() if r["degradation"] == "noise" and r["model"] == "gloss_free"]
    assert F.degradation_figure(one, tmp_path / "one.png") == "one.png"


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"strength": None}, "strength"),
        ({"strength": math.inf}, "strength"),
        ({"reliability": 1.2}, r"reliability 1.2, must be in \[0, 1\]"),
        ({"hallucinated": math.nan}, "hallucinated"),
    ],
)
def test_degradation_bad_values(tmp_path, change, match):
    rows = _rows()
    rows[0] = {**rows[0], **change}
    with pytest.raises(ValueError, match=match):
        F.degradation_figure(rows, tmp_path / "d.png")


def test_degradation_errors(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        F.degradation_figure([], tmp_path / "d.png")
    rows = _rows()
    del rows[2]["model"]
    with pytest.raises(ValueError, match="row 2 is missing key 'model'"):
        F.degradation_figure(rows, tmp_path / "d.png")
    with pytest.raises(ValueError, match="repeats"):
        F.degradation_figure(_rows() + _rows()[:1], tmp_path / "d.png")
