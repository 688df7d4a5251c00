"""MSE-Bench's protocol with a judge that knows the target scene (VINCIE §4.1).

At turn k the judge scores prompt following and consistency from 0 to 10; the turn passes only if
both exceed 6, and a session's success stops at its first failed turn (cumulative success).

Our judge is deterministic. With X_k the model's previous image, Y_{k+1} the true next image, R
the true change region (current ∪ next mask) and D = R dilated by 2 pixels:
- prompt following = 10 · min(IoU, colour match):
  IoU = |C ∩ T| / |C ∪ T|, T = {|Y_{k+1} − Y_k|∞ > δ} where the scene truly changed and
  C = D ∩ {|out − X_k|∞ > δ} where the model changed its image near the edit;
  colour match = share of the edited object's target pixels (M_next, or T for a removal) whose
  colour is right, |out − Y_{k+1}|∞ ≤ δ_c;
- consistency = 10 · min((PSNR − 10) / 20, SSIM), both outside R dilated by 1 pixel, clipped to
  [0, 1]: a pass needs PSNR > 22 dB and SSIM > 0.6 there.
Both thresholds are "> 6", as MSE-Bench's. `LLMJudge` asks a vision chat model (`core.llm`) the
paper's two questions instead, for users with a vision server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from iclr26.core.errors import UserError
from iclr26.core.ssim import ssim_map as core_ssim_map

PASS_SCORE = 6.0  # a turn passes iff both scores exceed this (MSE-Bench)
DELTA = 0.12  # a pixel changed when some channel moved by more than this
DELTA_COLOUR = 0.2  # a pixel has the right colour when every channel is within this
SSIM_SIGMA, SSIM_RADIUS = 1.5, 3  # a 7×7 Gaussian window (32-pixel frames are small)


def dilate(mask: np.ndarray, pixels: int) -> np.ndarray:
    """Binary dilation by a (2·pixels + 1)² square."""
    if pixels <= 0:
        return mask.astype(bool)
    m = torch.from_numpy(mask.astype(np.float32))[None, None]
    return (F.max_pool2d(m, 2 * pixels + 1, stride=1, padding=pixels)[0, 0] > 0).numpy()


def psnr(a: np.ndarray, b: np.ndarray, where: np.ndarray | None = None) -> float:
    """PSNR in dB (data range 1) over the pixels in `where` (all by default); 99 when identical."""
    d = (np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2
    mse = d.mean() if where is None else d[where].mean() if where.any() else 0.0
    return 99.0 if mse <= 1e-10 else float(10 * np.log10(1.0 / mse))


def ssim_map(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-pixel SSIM of two (H, W, 3) images (Gaussian σ = 1.5 window, reflect padding), averaged
    over channels: (H, W)."""
    x = torch.from_numpy(np.asarray(a, np.float64)).permute(2, 0, 1)
    y = torch.from_numpy(np.asarray(b, np.float64)).permute(2, 0, 1)
    return core_ssim_map(x, y, sigma=SSIM_SIGMA, radius=SSIM_RADIUS, pad=True).mean(dim=0).numpy()


def mask_iou(pred: np.ndarray, true: np.ndarray) -> float:
    """IoU of two binary masks (1 when both are empty)."""
    p, t = pred.astype(bool), true.astype(bool)
    union = (p | t).sum()
    return 1.0 if union == 0 else float((p & t).sum() / union)


@dataclass(frozen=True)
class TurnScore:
    """The judge's verdict on one turn and the pixel metrics behind it."""

    prompt_following: float
    consistency: float
    iou: float
    colour: float
    psnr_outside: float
    ssim_outside: float
    l1: float
    psnr: float
    ssim: float

    @property
    def passed(self) -> bool:
        """Both scores above 6 (MSE-Bench)."""
        return self.prompt_following > PASS_SCORE and self.consistency > PASS_SCORE


def score_turn(
    out: np.ndarray, previous: np.ndarray, truth_prev: np.ndarray, truth_next: np.ndarray,
    mask_current: np.ndarray, mask_next: np.ndarray,
) -> TurnScore:  # fmt: skip
    """Judge the model's image `out` for one turn (images (H, W, 3) in [0, 1]; `previous` is the
    model's own previous image, `truth_*` the true scenes, masks the true change region)."""
    out = np.clip(np.asarray(out, np.float64), 0, 1)
    region = mask_current.astype(bool) | mask_next.astype(bool)
    near = dilate(region, 2)
    true_change = np.abs(truth_next - truth_prev).max(-1) > DELTA
    changed = near & (np.abs(out - previous).max(-1) > DELTA)
    iou = mask_iou(changed, true_change)
    obj = mask_next.astype(bool) if mask_next.any() else true_change
    colour = float((np.abs(out - truth_next).max(-1) <= DELTA_COLOUR)[obj].mean()) if obj.any() else 1.0
    outside = ~dilate(region, 1)
    p_out = psnr(out, truth_next, outside)
    smap = ssim_map(out, truth_next)
    s_out = float(smap[outside].mean()) if outside.any() else 1.0
    pf = 10 * min(iou, colour)
    cs = 10 * min(float(np.clip((p_out - 10) / 20, 0, 1)), float(np.clip(s_out, 0, 1)))
    return TurnScore(
        pf, cs, iou, colour, p_out, s_out,
        float(np.abs(out - truth_next).mean()), psnr(out, truth_next), float(smap.mean()),
    )  # fmt: skip


def cumulative_success(passed: list[list[bool]], turns: int) -> list[float]:
    """Share of sessions whose turns 1..k all passed, for k = 1..turns (MSE-Bench's success@k)."""
    if not passed:
        raise ValueError("no sessions to score")
    out = []
    for k in range(1, turns + 1):
        out.append(float(np.mean([all(p[:k]) and len(p) >= k for p in passed])))
    return out


class LLMJudge:
    """The paper's GPT-4o judge through a vision chat model (`core.llm`): at turn k it sees prompts
    1..k and images 0..k and answers two 0–10 scores."""

    def __init__(self, model: object) -> None:
        if not getattr(model, "supports_images", False):
            raise UserError(
                f"the LLM judge needs a vision chat model; {getattr(model, 'name', model)!r} takes no images"
            )
        self.model = model

    def score(self, instructions: list[str], images: list[np.ndarray]) -> tuple[float, float]:
        """(prompt following, consistency) of the last image, each 0–10."""
        from iclr26.core.llm.images import user_message

        steps = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(instructions))
        text = (
            "The images are a source image followed by the result of each editing turn. The edit "
            f"instructions were:\n{steps}\nJudge only the last image. Give two scores from 0 to 10: "
            "prompt_following (does the last edit do what its instruction asks?) and consistency (is "
            "everything the instructions did not ask to change unchanged?). Answer as "
            '{"prompt_following": n, "consistency": n}.'
        )
        reply = self.model.chat([user_message(text, *images)], max_tokens=60)[0]  # type: ignore[attr-defined]
        nums = re.findall(r'"?(prompt_following|consistency)"?\s*:\s*(\d+(?:\.\d+)?)', reply.text)
        found = {k: float(v) for k, v in nums}
        if len(found) != 2:
            raise UserError(f"the LLM judge's answer has no two scores: {reply.text[:120]!r}")
        return found["prompt_following"], found["consistency"]
