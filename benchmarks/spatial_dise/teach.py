"""Does generated data teach? The Siamese scorer's learning curve (`spatial_dise.teach`) as a study.

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/spatial_dise/teach.py --out runs/spatial_dise_teach/run

Runs `iclr26 run spatial_dise --preset bench --set experiment=teach` with the item shards under
runs/spatial_dise_teach/data (a rerun resumes the shards, the training checkpoints and the cells) and
3D rotation capped at 4k training items (its items take about ten times longer to draw and gate than
the 2D tasks'; `--set "teach.caps=[]"` lifts the cap); saves results/spatial_dise_bench_teach.json and
teach_curve.png beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.spatial_dise import SYSTEM

SETS = ("experiment=teach", "data_dir=runs/spatial_dise_teach/data", "teach.caps=[3d_rotation:4000]")

if __name__ == "__main__":
    run_preset_benchmark(
        SYSTEM, Path(__file__).parent / "results", "spatial_dise", __doc__.splitlines()[0], SETS, tag="teach"
    )
