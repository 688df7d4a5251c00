"""Scaf-GRPO: scaffolded GRPO past the learning cliff (arXiv 2510.19807, ICLR 2026).

Public API: `Scaffold` (the GRPO guide hook), `ScafConfig`, the hint tiers (`hint_ladder`,
`hint_text`), the system's config `ScafGRPOConfig`, and `SYSTEM` / `PRESETS` for `iclr26 run
scaf_grpo` (loaded from `scaf_grpo.system` on first use).
"""

from iclr26.core.system import system_attributes
from iclr26.scaf_grpo.config import ScafGRPOConfig
from iclr26.scaf_grpo.hints import TIERS, Hint, hint_ladder, hint_text
from iclr26.scaf_grpo.scaffold import ScafConfig, Scaffold

__all__ = [
    "PRESETS",
    "SYSTEM",
    "TIERS",
    "Hint",
    "ScafConfig",
    "ScafGRPOConfig",
    "Scaffold",
    "hint_ladder",
    "hint_text",
]

__getattr__ = system_attributes(__name__)  # SYSTEM and PRESETS, loaded from .system on first use
