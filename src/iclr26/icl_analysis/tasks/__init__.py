"""The nine tasks of "Is In-Context Learning Learning?" as probabilistic automata with an OOD
perturbation Q(δ) (Q(0) = P), independent label checkers, and seeded splits."""

from iclr26.icl_analysis.tasks.base import DELTAS, NOISE, Item, Splits, Task, kl_rows, make_splits
from iclr26.icl_analysis.tasks.hamiltonian import Hamiltonian
from iclr26.icl_analysis.tasks.mazes import MazeComplete, MazeSolve
from iclr26.icl_analysis.tasks.stack import Stack
from iclr26.icl_analysis.tasks.strings import Parity, PatternMatching, Reversal
from iclr26.icl_analysis.tasks.vending import VendingMachine, VendingMachineSum

TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Parity(),
        PatternMatching(),
        Reversal(),
        Stack(),
        VendingMachine(),
        VendingMachineSum(),
        Hamiltonian(),
        MazeSolve(),
        MazeComplete(),
    )
}


def get_task(name: str) -> Task:
    """The task called `name` (one of TASKS), or a one-line error listing them."""
    from iclr26.core.validation import check_in

    return TASKS[check_in("task", name, TASKS)]


__all__ = ["DELTAS", "NOISE", "TASKS", "Item", "Splits", "Task", "get_task", "kl_rows", "make_splits"]
