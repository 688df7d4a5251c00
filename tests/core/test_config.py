from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from iclr26.core.config import ConfigError, apply_overrides, config_to_dict, parse_overrides


@dataclass(frozen=True)
class Critic:
    width: int = 256
    layers: int = 2


@dataclass(frozen=True)
class Cfg:
    lr: float = 3e-4
    steps: int = 1000
    env: Literal["Hopper-v5", "Walker2d-v5"] = "Hopper-v5"
    normalize: bool = True
    name: str = "run"
    k: int | None = None
    sizes: tuple[int, ...] = (64, 128)
    out: Path = Path("runs")
    critic: Critic = field(default_factory=Critic)

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise ValueError(f"steps must be >= 1, got {self.steps}")


def test_parse_overrides_splits_on_first_equals():
    assert parse_overrides(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}


@pytest.mark.parametrize("bad", ["novalue", "=3"])
def test_parse_overrides_rejects_malformed(bad):
    with pytest.raises(ConfigError, match="field=value"):
        parse_overrides([bad])


def test_parse_overrides_rejects_duplicates():
    with pytest.raises(ConfigError, match="twice"):
        parse_overrides(["a=1", "a=2"])


def test_apply_overrides_converts_each_type():
    cfg = apply_overrides(
        Cfg(),
        {
            "lr": "1e-3",
            "steps": "1e4",
            "env": "Walker2d-v5",
            "normalize": "false",
            "name": "x",
            "k": "none",
            "sizes": "1,2,3",
            "out": "/tmp/o",
            "critic.width": "512",
        },
    )
    assert cfg.lr == 1e-3 and cfg.steps == 10000 and isinstance(cfg.steps, int)
    assert cfg.env == "Walker2d-v5" and cfg.normalize is False and cfg.name == "x"
    assert cfg.k is None and cfg.sizes == (1, 2, 3) and cfg.out == Path("/tmp/o")
    assert cfg.critic == Critic(width=512, layers=2)
    assert apply_overrides(Cfg(), {"k": "7"}).k == 7
    assert Cfg().lr == 3e-4  # the original is untouched


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("steps", "ten", r"field 'steps': cannot use 'ten', expected int"),
        ("steps", "2.5", "not a whole number"),
        ("lr", "fast", r"field 'lr'.*expected float"),
        ("normalize", "maybe", "true/false"),
        ("env", "Ant-v5", r"choose one of 'Hopper-v5', 'Walker2d-v5'"),
        ("nope", "1", r"Cfg has no field 'nope'; fields are: .*lr"),
        ("critic.depth", "3", "Critic has no field 'depth'"),
        ("lr.x", "3", "not a nested config"),
        ("steps", "0", "steps must be >= 1"),  # __post_init__ runs on the result
    ],
)
def test_apply_overrides_errors_name_field_and_fix(key, value, match):
    with pytest.raises(ConfigError, match=match):
        apply_overrides(Cfg(), {key: value})


def test_config_to_dict_is_json_ready():
    d = config_to_dict(Cfg())
    assert d["critic"] == {"width": 256, "layers": 2}
    assert d["sizes"] == [64, 128] and d["out"] == "runs"
