"""VINCIE: in-context multi-turn image editing learned from video (arXiv 2506.10941, ICLR 2026).

Public API: videos and sessions made here (`iclr26.vincie.video`: `make_video`, `annotate`,
`video_session`, `edit_session`, `load_sessions`), the session transformer (`SessionDiT`,
`ModelConfig`), the proxy tasks (`ProxyConfig`, `layout`), rectified flow (`iclr26.vincie.flow`),
training (`train_session_model`), multi-turn editing (`model_editor`) and the MSE-Bench-style judge
(`score_turn`, `cumulative_success`); `SYSTEM` for `iclr26 run vincie`.
"""

from iclr26.core.system import system_attributes
from iclr26.vincie.editing import SamplerConfig, copy_previous, model_editor
from iclr26.vincie.judge import LLMJudge, cumulative_success, score_turn
from iclr26.vincie.model import ModelConfig, SessionDiT
from iclr26.vincie.sequence import ProxyConfig, layout
from iclr26.vincie.train import TrainConfig, train_session_model
from iclr26.vincie.video import Session, edit_session, load_sessions, video_session

__all__ = [
    "SYSTEM",
    "LLMJudge",
    "ModelConfig",
    "ProxyConfig",
    "SamplerConfig",
    "Session",
    "SessionDiT",
    "TrainConfig",
    "copy_previous",
    "cumulative_success",
    "edit_session",
    "layout",
    "load_sessions",
    "model_editor",
    "score_turn",
    "train_session_model",
    "video_session",
]

__getattr__ = system_attributes(__name__)  # SYSTEM and PRESETS, loaded from .system on first use
