"""LiveWeb-IE's data layout: records in `dataset.json`, URL groups in `group.jsonl`, ground truth in
SWDE-style text files; written for our sites, and read from the real release by path.

The layout (as in sbY99/LiveWeb-IE, which is for non-commercial research and is never copied here):

    dataset.json                     {site folder: [record, ...]}
    <folder>/group/group.jsonl       one line per group: {"g_000": {"group_url": [url, ...]}}
    groundtruth/<domain>/<website>-<group>-<attribute>.txt

A record has website_id, website, group_id, group_url (the group file), query_id, query,
attribute (a list), type (type_1 .. type_4) and label (attribute -> ground-truth file). A ground-
truth file has a header line, a counts line (pages, values, values), then one line per page:
`"<url>" <n> <v1>\\t<v2>...`. Values are as they appear on the page (href and src unresolved).
"""

from __future__ import annotations

import itertools
import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iclr26.core.datapaths import inside
from iclr26.core.errors import UserError
from iclr26.core.jsonfile import read_json, read_jsonl
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_fields
from iclr26.liveweb_ie.sites import Group, Site, groundtruth

TYPES = ("type_1", "type_2", "type_3", "type_4")
"""type_1: one attribute, one value; type_2: several attributes, one value each; type_3: one
attribute, many values; type_4: several attributes, many values each (the release's data)."""
log = logging.getLogger(__name__)
RECORD_FIELDS = (
    "website_id",
    "website",
    "group_id",
    "group_url",
    "query_id",
    "query",
    "attribute",
    "type",
    "label",
)


@dataclass(frozen=True)
class Record:
    """One query over one page group."""

    website_id: str
    website: str
    group_id: str
    group_url: str
    query_id: str
    query: str
    attribute: tuple[str, ...]
    type: str
    label: dict[str, str]
    sample_id: str

    def json(self) -> dict[str, Any]:
        """The record as the release's JSON object."""
        return {
            "website_id": self.website_id,
            "website": self.website,
            "group_id": self.group_id,
            "group_url": self.group_url,
            "query_id": self.query_id,
            "query": self.query,
            "attribute": list(self.attribute),
            "type": self.type,
            "label": dict(self.label),
            "sample_id": self.sample_id,
        }


def parse_record(raw: Any, where: str) -> Record:
    """A record from its JSON object; a missing field, a bad attribute list or an unknown type is named."""
    check_fields(where, raw, RECORD_FIELDS, "record")
    assert isinstance(raw, dict)
    attrs = raw["attribute"]
    if not isinstance(attrs, list) or not attrs or not all(isinstance(a, str) and a for a in attrs):
        raise UserError(
            f"{where}: record {raw.get('sample_id', '?')}: attribute must be a non-empty list of names"
        )
    if raw["type"] not in TYPES:
        raise UserError(
            f"{where}: record {raw.get('sample_id', '?')} has unknown type {raw['type']!r} (one of {TYPES})"
        )
    label = raw["label"]
    if not isinstance(label, dict) or any(a not in label for a in attrs):
        raise UserError(
            f"{where}: record {raw.get('sample_id', '?')}: label must map every attribute to a file"
        )
    sample = raw.get("sample_id") or f"{raw['website_id']}_{raw['group_id']}_{raw['query_id']}"
    return Record(
        str(raw["website_id"]), str(raw["website"]), str(raw["group_id"]), str(raw["group_url"]),
        str(raw["query_id"]), str(raw["query"]), tuple(attrs), raw["type"], dict(label), str(sample),
    )  # fmt: skip


# ---------------------------------------------------------------- ground-truth files
def write_groundtruth(path: Path, header: str, pages: dict[str, list[str]]) -> None:
    """Write one attribute's ground truth: url -> values, in the SWDE-style layout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = sum(len(v) for v in pages.values())
    lines = [header, f"{len(pages)} {n} {n}"]
    for url, values in pages.items():
        clean = [" ".join(v.split()) for v in values]
        lines.append(f'"{url}" {len(clean)} ' + "\t".join(clean))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_groundtruth(path: Path) -> dict[str, list[str]]:
    """url -> values from a ground-truth file; a missing file or a line that is not `"<url>" <n> ...`
    raises an error naming it. Two irregularities are read, not refused: a line that does not start with
    a quote continues the previous line (a value broken by a line break; the public release has such
    lines), and a count that differs from the values found is logged."""
    if not path.is_file():
        raise UserError(f"ground-truth file {path} does not exist")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if len(lines) < 2:
        raise UserError(f"ground-truth file {path} has no header and counts lines")
    out: dict[str, list[str]] = {}
    announced: dict[str, tuple[int, int]] = {}  # url -> (count, line number)
    last: list[str] | None = None
    for i, line in enumerate(lines[2:], start=3):
        if not line.strip():
            continue
        if not line.startswith('"'):
            if last is None:
                raise UserError(f'{path}:{i}: expected "<url>" <count> <values>, got {line[:80]!r}')
            head, *more = line.strip().split("\t")  # the broken value's rest, then further values
            if last:
                last[-1] = f"{last[-1]} {head}".strip()
            else:
                last.append(head)
            last.extend(v for v in more if v != "")
            continue
        url, sep, rest = line[1:].partition('" ')
        count, _, values = rest.partition(" ")
        if not sep or not count.strip().isdigit():
            raise UserError(f'{path}:{i}: expected "<url>" <count> <values>, got {line[:80]!r}')
        last = out.setdefault(url, [])
        last.extend(v for v in values.split("\t") if v != "")
        announced[url] = (announced.get(url, (0, i))[0] + int(count), i)
    for url, (count, i) in announced.items():
        if count != len(out[url]):
            log.warning("%s:%d: %d values announced, %d found (kept)", path, i, count, len(out[url]))
    return out


# ---------------------------------------------------------------- the loader
@dataclass
class Release:
    """A LiveWeb-IE-layout release: its records, and each group's URLs."""

    root: Path
    records: list[Record]
    groups: dict[tuple[str, str], list[str]]  # (group file, group id) -> URLs

    def urls(self, record: Record) -> list[str]:
        """The URLs of the record's page group."""
        return self.groups[(record.group_url, record.group_id)]

    def groundtruth(self, record: Record, attribute: str) -> dict[str, list[str]]:
        """url -> values of `attribute` for `record`'s group."""
        return read_groundtruth(self.root / record.label[attribute])

    def by_type(self) -> dict[str, int]:
        """How many records of each type."""
        return {t: sum(r.type == t for r in self.records) for t in TYPES}


def load_release(root: str | Path) -> Release:
    """Read a release (our generated one or the public LiveWeb-IE folder) from `root`."""
    root = Path(root).expanduser()
    dataset = root / "dataset.json"
    if not dataset.is_file():
        raise UserError(f"{root} has no dataset.json: point to the LiveWeb_IE folder of the release")
    raw = read_json(dataset)
    if not isinstance(raw, dict) or not all(isinstance(rs, list) for rs in raw.values()):
        raise UserError(f"{dataset} must map each site to a list of records")
    records = []
    for site, rs in raw.items():
        for i, r in enumerate(rs):
            where = f"{dataset}[{site!r}][{i}]"
            records.append(record := parse_record(r, where))
            inside(root, record.group_url, f"{where}: field 'group_url'")
            for attribute, file in record.label.items():
                inside(root, file, f"{where}: field 'label'[{attribute!r}]")
    groups: dict[tuple[str, str], list[str]] = {}
    for file in sorted({r.group_url for r in records}):
        path = root / file
        if not path.is_file():
            raise UserError(f"group file {path} does not exist")
        for n, line in read_jsonl(path):
            try:
                for gid, spec in line.items():
                    groups[(file, gid)] = [str(u) for u in spec["group_url"]]
            except (AttributeError, KeyError, TypeError) as e:
                got = json.dumps(line)[:80]
                raise UserError(
                    f'{path}: line {n}: expected {{"g_000": {{"group_url": [...]}}}}, got {got}'
                ) from e
    for r in records:
        if (r.group_url, r.group_id) not in groups:
            raise UserError(f"record {r.sample_id}: group {r.group_id} is not in {r.group_url}")
    return Release(root, records, groups)


# ---------------------------------------------------------------- our sites' release
def site_url(site: Site, path: str) -> str:
    """The release URL of a page on our site (its made-up host; the evaluator maps it to 127.0.0.1)."""
    return f"http://{site.website}/{path}"


def _verb(rng: random.Random, kind: str) -> str:
    return rng.choice(
        {
            "one": ("Extract", "Retrieve", "Get", "Find"),
            "many": ("Get all", "Collect all", "Return all", "List all"),
        }[kind]
    )


def queries(site: Site, group: Group, seed: int) -> list[tuple[str, tuple[str, ...], str]]:
    """(type, attributes, query) for a group: every single attribute and pairs, triples of them."""
    rng = random.Random(derive_seed(seed, site.key, group.group_id, "queries"))
    listy = group.kind in ("list", "table")
    single = [f for f in group.fields if not (f.many or listy)]
    many = [f for f in group.fields if f.many or listy]
    out: list[tuple[str, tuple[str, ...], str]] = []

    def phrase(fs: tuple[Any, ...]) -> str:
        """The fields' phrases joined as a list: a, b and c."""
        names = [f.phrase for f in fs]
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]

    for fs in (
        [(f,) for f in single]
        + list(itertools.combinations(single, 2))
        + list(itertools.combinations(single, 3))
    ):
        out.append(
            (
                "type_1" if len(fs) == 1 else "type_2",
                tuple(f.name for f in fs),
                f"{_verb(rng, 'one')} {phrase(fs)}",
            )
        )
    for fs in (
        [(f,) for f in many] + list(itertools.combinations(many, 2)) + list(itertools.combinations(many, 3))
    ):
        out.append(
            (
                "type_3" if len(fs) == 1 else "type_4",
                tuple(f.name for f in fs),
                f"{_verb(rng, 'many')} {phrase(fs)}",
            )
        )
    return out


def write_release(sites: dict[str, Site], root: Path, version: int, *, seed: int = 0) -> Path:
    """Write our sites at `version` in the release layout under `root`: every query, every group's
    pages and their ground truth (computed from the sites' own data at that version)."""
    root.mkdir(parents=True, exist_ok=True)
    dataset: dict[str, list[dict[str, Any]]] = {}
    for w, site in enumerate(sites.values()):
        group_file = f"./{site.folder}/group/group.jsonl"
        lines = []
        records: list[dict[str, Any]] = []
        for group in site.groups:
            paths = site.pages(group, version)
            urls = [site_url(site, p) for p in paths]
            lines.append(json.dumps({group.group_id: {"group_url": urls}}))
            truth = {u: groundtruth(site.page(p, version)) for u, p in zip(urls, paths, strict=True)}  # type: ignore[arg-type]
            label = {}
            for f in group.fields:
                rel = f"./groundtruth/{site.domain}/{site.website}-{group.group_id}-{f.name}.txt"
                header = f"{site.domain} {site.website} {group.group_id} {f.name}"
                write_groundtruth(root / rel, header, {u: t[f.name] for u, t in truth.items()})
                label[f.name] = rel
            for kind, attrs, text in queries(site, group, seed):
                qid = f"q_{len(records):03d}"
                records.append(
                    Record(
                        f"w_{w:03d}", site.website, group.group_id, group_file, qid, text, attrs, kind,
                        {a: label[a] for a in attrs}, f"w_{w:03d}_{group.group_id}_{qid}",
                    ).json()
                )  # fmt: skip
        (root / site.folder / "group").mkdir(parents=True, exist_ok=True)
        (root / site.folder / "group" / "group.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        dataset[site.folder] = records
    (root / "dataset.json").write_text(json.dumps(dataset, indent=1, ensure_ascii=False), encoding="utf-8")
    return root
