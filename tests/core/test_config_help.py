"""Every implemented system's config documents itself: `iclr26 run NAME --help-config`."""

import dataclasses

import pytest
from typer.testing import CliRunner

from iclr26 import cli
from iclr26.catalog import PAPERS, get_system, status_of
from iclr26.core.config import describe_config, field_help, with_changes

IMPLEMENTED = [p.name for p in PAPERS if status_of(p.name)[0] == "implemented"]


@dataclasses.dataclass(frozen=True)
class Inner:
    width: int = 64
    """hidden width"""


@dataclasses.dataclass(frozen=True)
class Outer:
    steps: int = 10
    """gradient steps"""
    lr: float = dataclasses.field(default=1e-3, metadata={"help": "learning rate"})
    inner: Inner = dataclasses.field(default_factory=Inner)
    """the network"""


def test_field_help_reads_docstrings_and_metadata():
    assert field_help(Outer) == {"steps": "gradient steps", "lr": "learning rate", "inner": "the network"}
    rows = describe_config(with_changes(Outer(), {"inner.width": 32}))
    assert [(r.path, r.default, r.value, r.help) for r in rows] == [
        ("steps", 10, 10, "gradient steps"),
        ("lr", 1e-3, 1e-3, "learning rate"),
        ("inner.width", 64, 32, "hidden width"),
    ]


@pytest.mark.parametrize("name", IMPLEMENTED)
def test_every_config_field_has_help(name):
    system = get_system(name)
    for preset in ("smoke", "demo", "bench", "paper"):
        missing = [r.path for r in describe_config(system.presets[preset]) if not r.help]
        assert not missing, f"{name} ({preset}): fields without help: {missing}"


@pytest.mark.parametrize("name", IMPLEMENTED)
def test_help_config_prints_every_field(name):
    res = CliRunner().invoke(cli.app, ["run", name, "--help-config", "--preset", "smoke"])
    assert res.exit_code == 0, res.output
    for row in describe_config(get_system(name).presets["smoke"]):
        assert row.path in res.output


@pytest.mark.parametrize("name", IMPLEMENTED)
def test_configs_have_no_extra_escape_hatch(name):
    fields = [r.path for r in describe_config(get_system(name).presets["bench"])]
    assert not any(p == "extra" or p.endswith(".extra") for p in fields), name
