"""The authors' released corpora, read from a local path (nothing is downloaded): ID files are
JSON lines with `Entry`, `Label`, `IsOOd`, `Index`; an OOD file is one JSON object holding one
list per δ key (`"delta_0.2": [...]`). Hamiltonian entries are adjacency dicts with a `Path`."""

from __future__ import annotations

from pathlib import Path

from iclr26.core.errors import UserError
from iclr26.core.jsonfile import read_json, read_jsonl
from iclr26.icl_analysis.tasks import Item, Splits
from iclr26.icl_analysis.tasks.hamiltonian import format_graph

# our task name -> (folder, ID train file stem, OOD file stem) in the authors' datasets/ folder
AUTHORS_FILES: dict[str, tuple[str, str, str]] = {
    "parity": ("PARITY", "corpus_parity_id_4k_new", "corpus_parity_ood_4k_test_new_with_negs"),
    "pattern_matching": (
        "Pattern_Matching",
        "corpus_pattern_matching_id_4k_new",
        "corpus_pattern_matching_ood_4k_new_test",
    ),
    "reversal": ("Reversal", "corpus_reversal_id_4k", "corpus_reversal_ood_4k_test"),
    "stack": ("Stack", "corpus_stack_id_4k", "corpus_stack_ood_4k_test"),
    "vending_machine": (
        "Vending_Machine",
        "corpus_vending_machine_id_4k",
        "corpus_vending_machine_ood_4k_test",
    ),
    "hamiltonian": ("Hamiltonian", "corpus_hamiltonian_id_4k", "corpus_hamiltonian_ood_4k_test"),
    "maze_solve": ("MazeSolve", "corpus_maze_solve_id_4k", "corpus_maze_solve_ood_4k_test"),
    "maze_complete": ("MazeComplete", "corpus_maze_complete_id_4k", "corpus_maze_complete_ood_4k_test"),
}


class CorpusError(UserError, ValueError):
    """A corpus file that cannot be read; the message names the file and the line."""


def _item(obj: object, where: str, delta: float) -> Item:
    if not isinstance(obj, dict) or "Entry" not in obj or "Label" not in obj:
        raise CorpusError(f"{where}: expected an object with 'Entry' and 'Label', got {str(obj)[:80]!r}")
    entry, label = obj["Entry"], obj["Label"]
    if isinstance(entry, dict):  # Hamiltonian: an adjacency dict and a separate path
        try:
            adj = {int(v): sorted(int(u) for u in succ) for v, succ in entry.items()}
            path = [int(v) for v in str(obj.get("Path") or "").split(",") if v.strip()]
        except (TypeError, ValueError) as e:
            raise CorpusError(f"{where}: a graph entry that is not an adjacency list ({e})") from e
        entry = format_graph(adj, path)
    if not isinstance(entry, str) or not isinstance(label, int) or isinstance(label, bool):
        raise CorpusError(
            f"{where}: 'Entry' must be a string and 'Label' an int, got {entry!r:.60}, {label!r}"
        )
    return Item(entry, label, delta, int(obj.get("Index", 0)))  # the clean label is not released


def load_jsonl(path: str | Path, delta: float = 0.0) -> list[Item]:
    """An ID corpus file: one JSON object per line."""
    path = Path(path)
    items = [_item(obj, f"{path}:{n}", delta) for n, obj in read_jsonl(path, CorpusError)]
    if not items:
        raise CorpusError(f"{path}: no items")
    return items


def load_ood(path: str | Path) -> dict[float, list[Item]]:
    """An OOD corpus file: one JSON object `{"delta_<δ>": [items], ...}`."""
    path = Path(path)
    data = read_json(path, CorpusError)
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: expected one object keyed by 'delta_<value>'")
    out = {}
    for key, items in data.items():
        try:
            if not key.startswith("delta_"):
                raise ValueError(key)
            delta = float(key.removeprefix("delta_"))
        except ValueError:
            raise CorpusError(f"{path}: key {key!r} is not 'delta_<value>'") from None
        if not isinstance(items, list):
            raise CorpusError(f"{path}: {key} must hold a list of items")
        out[delta] = [_item(obj, f"{path} [{key}][{i}]", delta) for i, obj in enumerate(items)]
    return out


def load_authors_splits(root: str | Path, task: str) -> Splits:
    """One task's released splits from the authors' `datasets/` folder at `root` (a local copy of
    their repository); OOD files missing from a copy leave `ood` empty."""
    if task not in AUTHORS_FILES:
        raise CorpusError(f"the authors released no corpus for {task!r}; have {', '.join(AUTHORS_FILES)}")
    folder, id_stem, ood_stem = AUTHORS_FILES[task]
    base = Path(root) / folder
    train = load_jsonl(base / f"{id_stem}.json")
    test = load_jsonl(base / f"{id_stem}_test.json")
    ood_path = base / f"{ood_stem}.json"
    ood = load_ood(ood_path) if ood_path.is_file() else {}
    return Splits(task, train, test, ood)
