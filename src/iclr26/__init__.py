"""iclr26: working, tested, measured implementations of 19 ICLR 2026 systems.

`iclr26 list` shows them; `iclr26 run NAME` runs one; each system is a subpackage
(`iclr26.pic`, `iclr26.dash`, ...) whose `__init__` exports its public API and a `SYSTEM`.
"""

__version__ = "0.1.0"
