"""LiveWeb-IE's trivial wrappers: the floor and the null a reader needs beside any F1 row.

- `empty`: the empty extraction, the floor. It scores F1 = 1 on a page where the truth is empty too
  (an attribute the page lacks) and 0 elsewhere, so a method's F1 means something only above it.
- `null`: a value on no page for every attribute. F1 is 0 on every page (a prediction where the truth
  is empty scores 0 too): the metric matches nothing wrong, and the null must pass no query.
"""

from __future__ import annotations

from iclr26.liveweb_ie.release import Record


class ConstantExtraction:
    """The trivial wrappers: `empty` extracts nothing (the floor: it scores 1 on a page only where the
    truth is empty too); `null` extracts, for every attribute, a value on no page (F1 0 on every page:
    the metric matches nothing wrong)."""

    VALUE = "iclr26: a value on no page"

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.name = "empty extraction" if kind == "empty" else "null (a value on no page)"

    def build(self, record: Record, url: str, html: str) -> ConstantExtraction:
        self._attributes = list(record.attribute)
        return self

    def extract(self, html: str) -> dict[str, list[str]]:
        return {a: [] if self.kind == "empty" else [self.VALUE] for a in self._attributes}
