"""Both figures draw a PNG from a small generated split."""

import pytest

from iclr26.conavbench import agents as A
from iclr26.conavbench import figures
from iclr26.conavbench.sim import SimConfig
from iclr26.conavbench.splits import build_split


@pytest.fixture(scope="module")
def split():
    return build_split(0, n_single=6, n_collab=9, n_scenes=3, jobs=1)


@pytest.mark.parametrize("noise", [0.0, 0.15])
def test_episode_figure_from_evaluate(split, tmp_path, noise):
    ep = next(e for e in split.all if e.kind == "collaborative")
    cfg = A.EvalConfig(sim=SimConfig(forward_noise=noise, turn_noise=20 * noise))
    ev = A.evaluate([ep], split.scenes, A.CollaborativePlanner(), config=cfg, keep_runs=True)
    name = figures.episode_figure(split.scenes[ep.scene], ep, ev.runs[0], tmp_path)
    assert name == f"episode_{ep.id}.png" and (tmp_path / name).stat().st_size > 10_000
    with pytest.raises(ValueError, match="scene"):
        other = next(s for s in split.scenes.values() if s.id != ep.scene)
        figures.episode_figure(other, ep, ev.runs[0], tmp_path)


def test_comparison_figure(split, tmp_path):
    collab = [e for e in split.all if e.kind == "collaborative"]
    groups = {"all": collab, **{t: [e for e in collab if e.collab_type == t] for t in ("A1", "A2")}}
    cfg = A.EvalConfig(sim=SimConfig(forward_noise=0.15, turn_noise=2.0))
    rows = []
    for group, eps in groups.items():
        if not eps:
            continue
        for name, agent in (("greedy", A.GreedySinglePolicy()), ("collaborative", A.CollaborativePlanner())):
            high = A.evaluate(eps, split.scenes, agent, config=cfg)
            step = A.evaluate(eps, split.scenes, agent, protocol="step", config=cfg)
            rows.append({"group": group, "policy": name, "metrics": high.metrics, "step": step.metrics})
    rows.append({"group": "all", "policy": "oracle", "metrics": rows[0]["metrics"], "step": {}})  # no step
    out = figures.comparison_figure(rows, tmp_path)
    assert out == "comparison.png" and (tmp_path / out).stat().st_size > 10_000
    with pytest.raises(ValueError, match="empty"):
        figures.comparison_figure([], tmp_path)
    with pytest.raises(ValueError, match="metrics"):
        figures.comparison_figure([{"group": "all", "policy": "x"}], tmp_path)
