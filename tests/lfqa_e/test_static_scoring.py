"""Static metrics against their libraries, the tie rule, and agreement against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.core.intervals import bootstrap_interval
from iclr26.lfqa_e.data import LABELS, Comparison
from iclr26.lfqa_e.scoring import agreement, breakdown, confusion, preferences
from iclr26.lfqa_e.static import BERTSCORE_LAYER, STATIC_METRICS, length, score_static

REF = "The assert statement raises AssertionError when its expression is false. It is skipped under -O."
A = "The assert statement raises an AssertionError if the expression is false, and it is skipped with -O."
B = "Assertions print a warning and continue running the program."
ZH_REF = "瑞利散射使短波长的蓝光更容易散射，所以天空呈蓝色。"
ZH_A = "因为瑞利散射，蓝光散射更强，天空看起来是蓝色。"
ZH_B = "天空是蓝色的因为海洋反射。"


def _pair(ref, a, b, lang="en"):
    return Comparison("t", "q", ref, a, b, "response_a", language=lang)


def test_rouge_bleu_chrf_match_their_libraries():
    import sacrebleu
    from rouge_score import rouge_scorer

    got = score_static(["rouge1", "rouge2", "rougeL", "bleu", "chrf", "length"], [_pair(REF, A, B)])
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    for side, text in enumerate((A, B)):
        want = scorer.score(REF, text)
        for k in ("rouge1", "rouge2", "rougeL"):
            assert got[k][0, side] == pytest.approx(want[k].fmeasure)
        assert got["bleu"][0, side] == pytest.approx(sacrebleu.sentence_bleu(text, [REF]).score)
        assert got["chrf"][0, side] == pytest.approx(sacrebleu.sentence_chrf(text, [REF]).score)
        assert got["length"][0, side] == len(text.split())
    for k in ("rouge1", "rouge2", "rougeL", "bleu", "chrf"):
        assert got[k][0, 0] > got[k][0, 1], k  # the faithful paraphrase beats the wrong answer


def test_chinese_is_scored_by_character():
    import sacrebleu

    got = score_static(["rouge1", "bleu", "chrf", "length"], [_pair(ZH_REF, ZH_A, ZH_B, "zh")])
    assert got["rouge1"][0, 0] > got["rouge1"][0, 1] > 0  # the default tokenizer would give 0 for both
    assert got["bleu"][0, 0] == pytest.approx(sacrebleu.sentence_bleu(ZH_A, [ZH_REF], tokenize="zh").score)
    assert got["chrf"][0, 0] == pytest.approx(sacrebleu.sentence_chrf(ZH_A, [ZH_REF]).score)
    assert got["length"][0, 1] == len("天空是蓝色的因为海洋反射") == length(ZH_B, "zh")


def test_bertscore_and_cosine_on_the_local_encoder():
    import bert_score

    from iclr26.core.embed import embed, model_dir

    got = score_static(["bertscore_p", "bertscore_r", "bertscore_f1", "embed_cosine"], [_pair(REF, A, B)])
    p, r, f = bert_score.score([A, B], [REF, REF], model_type=str(model_dir()), num_layers=BERTSCORE_LAYER)
    np.testing.assert_allclose(got["bertscore_p"][0], p.numpy(), rtol=1e-5)
    np.testing.assert_allclose(got["bertscore_r"][0], r.numpy(), rtol=1e-5)
    np.testing.assert_allclose(got["bertscore_f1"][0], f.numpy(), rtol=1e-5)
    v = embed([REF, A, B])
    np.testing.assert_allclose(got["embed_cosine"][0], [v[0] @ v[1], v[0] @ v[2]], rtol=1e-5)
    assert got["bertscore_f1"][0, 0] > got["bertscore_f1"][0, 1]


def test_unknown_metric():
    with pytest.raises(ValueError, match="metric must be one of"):
        score_static(["ter"], [_pair(REF, A, B)])
    assert len(STATIC_METRICS) == 10


def test_tie_rule_is_relative_or_absolute():
    s = np.array([[10.0, 9.95], [10.0, 9.0], [0.0, 0.0], [-5.0, -4.0], [0.30, 0.31]])
    assert preferences(s, 0.01) == ["same", "response_a", "same", "response_b", "response_b"]
    assert preferences(s, 0.05) == ["same", "response_a", "same", "response_b", "same"]
    assert preferences(s, 0.0) == ["response_a", "response_a", "same", "response_b", "response_b"]
    assert preferences(s, 0.5, relative=False) == ["same", "response_a", "same", "response_b", "same"]
    with pytest.raises(ValueError, match="tie_margin"):
        preferences(s, 2.0)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        preferences(np.zeros((3, 3)))


def test_agreement_matches_scikit_learn():
    from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

    rng = np.random.default_rng(0)
    gold = list(rng.choice(LABELS, size=200, p=[0.45, 0.4, 0.15]))
    pred = [g if rng.random() < 0.5 else rng.choice(LABELS) for g in gold]
    a = agreement(pred, gold, n_boot=200)
    assert a.accuracy == pytest.approx(100 * accuracy_score(gold, pred))
    assert a.macro_f1 == pytest.approx(100 * f1_score(gold, pred, labels=list(LABELS), average="macro"))
    p, r, f, _ = precision_recall_fscore_support(gold, pred, labels=list(LABELS), zero_division=0)
    for k, lab in enumerate(LABELS):
        assert a.per_class[lab]["precision"] == pytest.approx(100 * p[k])
        assert a.per_class[lab]["recall"] == pytest.approx(100 * r[k])
        assert a.per_class[lab]["f1"] == pytest.approx(100 * f[k])
    ties = [i for i, g in enumerate(gold) if g == "same"]
    assert a.tie_accuracy == pytest.approx(100 * np.mean([pred[i] == "same" for i in ties]))
    lo, hi = a.accuracy_ci
    assert lo < a.accuracy < hi and hi - lo < 20
    assert a.macro_f1_ci[0] < a.macro_f1 < a.macro_f1_ci[1]


def test_failures_count_as_wrong_and_no_ties_gives_none():
    gold = ["response_a", "response_b", "response_a", "response_b"]
    a = agreement(["response_a", None, None, "response_b"], gold)
    assert a.accuracy == 50.0 and a.failures == 50.0 and a.tie_accuracy is None
    assert confusion(["response_a", None, "same", "response_b"], gold).tolist() == [
        [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 0, 0],
    ]  # fmt: skip
    with pytest.raises(ValueError, match="must be one of"):
        agreement(["left"], ["response_a"])
    with pytest.raises(ValueError, match="2 predictions for 1 labels"):
        agreement(["same", "same"], ["same"])


def test_bootstrap_is_seeded_and_breakdown_groups():
    pred, gold = np.array([0, 1, 1, 2, 0, 1]), np.array([0, 1, 0, 2, 1, 1])

    def acc(p, g):
        return float(np.mean(p == g))

    assert bootstrap_interval(acc, (pred, gold), 300, seed=3) == bootstrap_interval(
        acc, (pred, gold), 300, seed=3
    )
    comps = [Comparison(str(i), "q", "r", "a", "b", lab, ctype)
             for i, (lab, ctype) in enumerate([("response_a", "human_vs_model"), ("same", "model_vs_model"),
                                               ("response_b", "model_vs_model")])]  # fmt: skip
    got = breakdown(["response_a", "same", "response_a"], comps, "compare_type")
    assert {k: v.accuracy for k, v in got.items()} == {"human_vs_model": 100.0, "model_vs_model": 50.0}
