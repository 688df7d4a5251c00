"""The live local websites: five generated sites whose content and layout change with a version clock.

Each site is modelled on one of LiveWeb-IE's scraping sandboxes (a book store, a quotes site, a
table site, a product catalogue, a paper listing) and has page groups: many URLs sharing one
template, as the benchmark groups them. At version `t`:
- content drift: every step removes a few items, adds new ones, and updates volatile fields
  (prices, stock, wins), each step seeded by `derive_seed(seed, site, t)`;
- layout drift: `layout_of(t)` picks template v1, v2 or v3 (`LAYOUTS`): renamed classes, extra
  wrappers, reordered fields and table columns, a moved pagination, shorter "..." truncation.

A page is first built as a `PageContent` (the values exactly as they will appear: truncated
titles, hrefs relative to the page); `render` turns it into HTML and `groundtruth` reads the
ground truth off the same object, so the two cannot disagree.
"""

from __future__ import annotations

import hashlib
import html
import posixpath
import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from iclr26.core.errors import UserError
from iclr26.core.seeding import derive_seed

KINDS = ("text", "image", "link")
"""Attribute kinds, as LiveWeb-IE has them: element text, an image's `src`, a link's `href`."""


@dataclass(frozen=True)
class Field:
    """One attribute of a page group: its name in queries and ground-truth files, and how it is shown."""

    name: str
    kind: str
    tag: str
    cls: str
    phrase: str
    many: bool = False  # several values per item (authors, tags): one element each
    truncate: bool = False  # shortened with "..." in list views (as books.toscrape does)


@dataclass(frozen=True)
class Layout:
    """The template knobs of one layout version."""

    version: str
    renamed: frozenset[int]  # indices of the group's fields whose classes are renamed
    wrappers: int  # extra <div> levels around the main content
    reverse_fields: bool  # fields of an item in reverse order
    rotate_columns: int  # table columns rotated by this much
    pager_on_top: bool
    truncate_at: int  # characters kept before "..." in list views
    heading_tag: str  # h3 in v1, h2 later (list titles)

    def cls(self, f: Field, i: int) -> str:
        """The class of field number `i` under this layout."""
        if i in self.renamed:
            return "x-" + f.cls.replace("_", "-") + ("-" + self.version if self.version != "v2" else "")
        return f.cls

    def tag(self, f: Field) -> str:
        """The tag of a field under this layout (list headings change in v3)."""
        return self.heading_tag if f.tag == "h3" else f.tag


LAYOUTS = (
    Layout("v1", frozenset(), 0, False, 0, False, 40, "h3"),
    Layout("v2", frozenset({0, 2}), 1, True, 1, True, 28, "h3"),
    Layout("v3", frozenset({0, 1, 2, 3, 4, 5}), 2, True, 2, True, 22, "h2"),
)
LAYOUT_EVERY = 2
"""The layout moves to the next template every LAYOUT_EVERY versions (v1 at t = 0, 1; v2 at 2, 3; ...)."""


def layout_of(version: int) -> Layout:
    """The template served at clock `version`."""
    return LAYOUTS[min(version // LAYOUT_EVERY, len(LAYOUTS) - 1)]


GRADED: dict[str, Layout] = {
    "wrappers": Layout("v1-wrappers", frozenset(), 2, False, 0, False, 40, "h3"),
    "classes": Layout("v1-classes", frozenset(range(8)), 0, False, 0, False, 40, "h3"),
    "order": Layout("v1-order", frozenset(), 0, True, 0, False, 40, "h3"),
    "columns": Layout("v1-columns", frozenset(), 0, False, 1, False, 40, "h3"),
}
"""Graded drift: layout v1 with exactly one change each (two wrapper `<div>`s around the content; every
field's class renamed; the fields of a card or detail page in reverse order; the table's columns
rotated by one). The content, truncation and headings are v1's, so a page's ground truth at version 0
holds under each (`render(..., layout=GRADED[name])`)."""


@dataclass(frozen=True)
class Group:
    """A page group: many URLs with one template. kind: detail (one item a page), list (cards), table."""

    group_id: str
    kind: str
    noun: str
    fields: tuple[Field, ...]
    container: str = ""  # class of the list / table element


@dataclass
class PageContent:
    """One page exactly as shown: its title, page-level values and items (values as they appear)."""

    path: str
    title: str
    group: Group
    page_values: dict[str, list[str]] = field(default_factory=dict)  # fields shown once per page
    items: list[dict[str, list[str]]] = field(default_factory=list)
    link_labels: dict[str, str] = field(default_factory=dict)  # href -> its anchor text
    pager: tuple[int, int] = (0, 0)  # (page, pages); (0, 0) for none
    page_dir: str = ""


Item = dict[str, object]

# ---------------------------------------------------------------- vocabularies
_WORDS = [
    "light",
    "attic",
    "velvet",
    "sharp",
    "objects",
    "requiem",
    "dirty",
    "secrets",
    "coming",
    "woman",
    "boys",
    "black",
    "starving",
    "hearts",
    "sonnets",
    "free",
    "pilgrim",
    "band",
    "rip",
    "olio",
    "mesaerion",
    "libertarian",
    "sapiens",
    "river",
    "silent",
    "garden",
    "winter",
    "glass",
    "harbor",
    "empire",
    "shadow",
    "orchard",
    "lantern",
    "compass",
    "meridian",
    "hollow",
    "crimson",
    "quiet",
    "signal",
    "north",
    "paper",
    "falcon",
    "marble",
    "ember",
    "tide",
    "forest",
    "echo",
    "atlas",
    "copper",
    "violet",
    "canyon",
    "summit",
    "prairie",
    "lighthouse",
]
_FIRST = [
    "Ada",
    "Alan",
    "Grace",
    "Edsger",
    "Barbara",
    "Donald",
    "Leslie",
    "Radia",
    "Ken",
    "Margaret",
    "Tim",
    "John",
    "Frances",
    "Yann",
    "Fei",
]
_LAST = [
    "Lovelace",
    "Turing",
    "Hopper",
    "Dijkstra",
    "Liskov",
    "Knuth",
    "Lamport",
    "Perlman",
    "Thompson",
    "Hamilton",
    "Berners",
    "Backus",
    "Allen",
    "Chen",
    "Li",
]
_CATEGORIES = [
    "Travel",
    "Mystery",
    "Historical-Fiction",
    "Poetry",
    "Science",
    "Romance",
    "Fantasy",
    "Philosophy",
    "Music",
    "Humor",
]
_TAGS = [
    "life",
    "love",
    "humor",
    "truth",
    "books",
    "friendship",
    "inspirational",
    "change",
    "choices",
    "reading",
    "simile",
    "world",
]
_CITIES = [
    "Hamburg",
    "Ulm",
    "Alabama",
    "Paris",
    "London",
    "Boston",
    "Vienna",
    "Warsaw",
    "Lagos",
    "Lima",
    "Kyoto",
    "Oslo",
]
_GENRES = ["Action", "Puzzle", "Strategy", "Adventure", "Racing", "Simulation", "Platformer", "Shooter"]
_STUDIOS = ["Nintendo", "Valve", "Ubisoft", "Capcom", "Sega", "Atlus", "Bungie", "Konami"]
_SUBJECTS = ["cs.LG", "cs.CL", "cs.CV", "cs.DB", "cs.DC", "stat.ML", "math.OC"]
_REGIONS = ["africa", "asia", "europe", "americas", "oceania"]


def _title(rng: random.Random, lo: int = 2, hi: int = 8) -> str:
    return " ".join(w.capitalize() for w in rng.sample(_WORDS, rng.randint(lo, hi)))


def _slug(text: str) -> str:
    return "-".join("".join(c for c in w.lower() if c.isalnum()) for w in text.split())


def _person(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def _digest(*parts: object) -> str:
    return hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()


def shorten(text: str, limit: int) -> str:
    """`text` cut at a word boundary within `limit` characters, with "..." when cut."""
    if len(text) <= limit:
        return text
    words, out = text.split(), ""
    for w in words:
        if len(out) + len(w) + 1 > limit:
            break
        out = f"{out} {w}".strip()
    return f"{out or text[:limit]} ..."


def relative(target: str, page_dir: str) -> str:
    """`target` (a path from the site root) as an href relative to the page's folder."""
    return posixpath.relpath(target, page_dir or ".")


# ---------------------------------------------------------------- the site base class
class Site(ABC):
    """A generated website: items that change with the clock, page groups and their pages."""

    key = ""  # the URL prefix on the server: /<key>/...
    website = ""  # the website name in records (a made-up host)
    folder = ""  # the release's folder name for this site
    domain = ""  # the ground-truth folder (academic, book, ...)
    name = ""
    base_items = 100
    groups: tuple[Group, ...] = ()

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._memo: dict[tuple[str, int], dict[str, object]] = {}
        self._items: dict[int, list[Item]] = {}

    def indexed(self, name: str, version: int, build: Callable[[], dict[str, object]]) -> dict[str, object]:
        """A per-version lookup table (path -> item, ...) built once by `build`."""
        key = (name, version)
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    # content over time
    @abstractmethod
    def new_item(self, rng: random.Random, item_id: int) -> Item:
        """A new item of this site (its fields' raw values), drawn from `rng`."""
        ...

    @abstractmethod
    def update_item(self, rng: random.Random, item: Item) -> None:
        """Change the volatile fields of `item` in place (one content-drift step)."""
        ...

    def items_at(self, version: int) -> list[Item]:
        """The site's items at clock `version` (cached): version 0, then `version` drift steps."""
        if version not in self._items:
            self._items[version] = _drift(self, version)
        return self._items[version]

    # pages
    @abstractmethod
    def pages(self, group: Group, version: int) -> list[str]:
        """The group's page paths at `version` (relative to the site root), in a fixed order."""
        ...

    @abstractmethod
    def content(self, group: Group, path: str, version: int) -> PageContent | None:
        """The page's content at `version`, or None when the page does not exist (then: 404)."""
        ...

    listing = ""  # the paginated list's path, e.g. "catalogue/page-{n}.html"
    per_page = 20

    def listing_paths(self, version: int) -> list[str]:
        """The paginated list's pages at `version`."""
        return [
            self.listing.format(n=n + 1) for n in range(len(_paged(self.items_at(version), self.per_page)))
        ]

    def listing_page(
        self,
        group: Group,
        path: str,
        version: int,
        title: str,
        row: Callable[[Item, str], dict[str, list[str]]],
        labels: Callable[[list[dict[str, list[str]]]], dict[str, str]] = lambda rows: {},
    ) -> PageContent | None:
        """List page `path` at `version`: `row(item, page_dir)` gives each item's values, `labels` the
        links' anchor texts; None when `path` is not one of its pages."""
        pages = _paged(self.items_at(version), self.per_page)
        for n, chunk in enumerate(pages):
            if path == self.listing.format(n=n + 1):
                page_dir = posixpath.dirname(path)
                rows = [row(it, page_dir) for it in chunk]
                return PageContent(
                    path, title.format(n=n + 1), group, items=rows, link_labels=labels(rows),
                    pager=(n + 1, len(pages)), page_dir=page_dir,
                )  # fmt: skip
        return None

    def group(self, group_id: str) -> Group:
        """The page group `group_id`; an unknown id is named."""
        for g in self.groups:
            if g.group_id == group_id:
                return g
        raise UserError(
            f"site {self.key} has no group {group_id!r} (it has {[g.group_id for g in self.groups]})"
        )

    def page(self, path: str, version: int) -> PageContent | None:
        """The content of `path` in whichever group serves it, or None."""
        where = self.indexed(
            "groups", version, lambda: {p: g for g in self.groups for p in self.pages(g, version)}
        )
        g = where.get(path)
        return None if g is None else self.content(g, path, version)  # type: ignore[arg-type]

    def item_at(self, path: str, version: int, path_of: Callable[[Item], str]) -> Item | None:
        """The item whose detail page is `path` at `version` (an index built once per version)."""
        table = self.indexed("items", version, lambda: {path_of(it): it for it in self.items_at(version)})
        return table.get(path)  # type: ignore[return-value]


def _drift(site: Site, version: int) -> list[Item]:
    """The items at `version`: generated at 0, else one drift step applied to `version - 1`'s."""
    if version < 0:
        raise UserError(f"version must be >= 0, got {version}")
    if version == 0:
        rng = random.Random(derive_seed(site.seed, site.key, 0))
        return [site.new_item(rng, i + 1) for i in range(site.base_items)]
    items = [dict(it) for it in site.items_at(version - 1)]
    rng = random.Random(derive_seed(site.seed, site.key, version))
    n = len(items)
    for victim in sorted(rng.sample(range(n), max(1, n // 12)), reverse=True):  # removed
        items.pop(victim)
    for it in rng.sample(items, max(1, len(items) // 4)):  # prices, stock, counts updated
        site.update_item(rng, it)
    next_id = max(int(it["id"]) for it in items) + 1  # type: ignore[call-overload]
    items += [site.new_item(rng, next_id + k) for k in range(max(1, n // 12))]  # added
    return items


def _paged(items: list[Item], per_page: int) -> list[list[Item]]:
    return [items[i : i + per_page] for i in range(0, len(items), per_page)] or [[]]


# ---------------------------------------------------------------- 1. the book store
class BookStore(Site):
    """books.toscrape-like: book pages, category pages, a paginated catalogue."""

    key, website, folder, domain, name = "books", "books.toscrape.local", "booktoscrape", "book", "book store"
    base_items = 1000
    listing = "catalogue/page-{n}.html"
    per_page = 20
    groups = (
        Group(
            "g_000",
            "detail",
            "book",
            (
                Field("title", "text", "h1", "product_title", "the title of the book"),
                Field("price", "text", "p", "price_color", "the price of the book"),
                Field("stock_status", "text", "p", "availability", "the stock status of the book"),
                Field("upc", "text", "td", "upc", "the UPC of the book"),
                Field("book_image", "image", "img", "thumbnail", "the image of the book"),
            ),
        ),
        Group(
            "g_001",
            "detail",
            "category",
            (
                Field("category", "text", "h1", "category_name", "the book category"),
                Field("count", "text", "strong", "result_count", "the number of books"),
            ),
        ),
        Group(
            "g_002",
            "list",
            "book",
            (
                Field("title", "text", "h3", "book_title", "the titles of the books", truncate=True),
                Field("price", "text", "p", "price_color", "the prices of the books"),
                Field("stock_status", "text", "p", "availability", "the stock status of the books"),
                Field("book_image", "image", "img", "thumbnail", "the images of the books"),
                Field("book_link", "link", "a", "book_link", "the links of the books"),
            ),
            container="product_pod",
        ),
    )

    def new_item(self, rng: random.Random, item_id: int) -> Item:
        title = _title(rng)
        return {
            "id": item_id,
            "title": title,
            "price": round(rng.uniform(10, 60), 2),
            "stock": rng.choice(range(23)),
            "upc": _digest(self.seed, "upc", item_id)[:16],
            "category": rng.choice(_CATEGORIES),
            "image": f"media/cache/{_digest(title)[:2]}/{_digest(title)[2:4]}/"
            f"{_digest(title, item_id)[:32]}.jpg",
        }

    def update_item(self, rng: random.Random, item: Item) -> None:
        item["price"] = round(float(item["price"]) * rng.uniform(0.8, 1.2), 2)  # type: ignore[arg-type]
        item["stock"] = rng.choice(range(23))

    @staticmethod
    def _stock(item: Item) -> str:
        return f"In stock ({item['stock']} available)" if item["stock"] else "Out of stock"

    def _book_path(self, item: Item) -> str:
        return f"catalogue/{_slug(str(item['title']))}_{item['id']}/index.html"

    def pages(self, group: Group, version: int) -> list[str]:
        items = self.items_at(version)
        if group.group_id == "g_000":
            return [self._book_path(it) for it in items]
        if group.group_id == "g_001":
            return [
                f"catalogue/category/books/{c.lower()}_{k + 2}/index.html" for k, c in enumerate(_CATEGORIES)
            ]
        return self.listing_paths(version)

    def content(self, group: Group, path: str, version: int) -> PageContent | None:
        items, lay = self.items_at(version), layout_of(version)
        page_dir = posixpath.dirname(path)
        if group.group_id == "g_000":
            hit = self.item_at(path, version, self._book_path)
            if hit is None:
                return None
            values = {
                "title": [str(hit["title"])],
                "price": [f"£{hit['price']:.2f}"],
                "stock_status": [self._stock(hit)],
                "upc": [str(hit["upc"])],
                "book_image": [relative(str(hit["image"]), page_dir)],
            }
            return PageContent(path, str(hit["title"]), group, page_values=values, page_dir=page_dir)
        if group.group_id == "g_001":
            for k, c in enumerate(_CATEGORIES):
                if path == f"catalogue/category/books/{c.lower()}_{k + 2}/index.html":
                    n = sum(it["category"] == c for it in items)
                    return PageContent(path, c, group, page_values={"category": [c], "count": [str(n)]})
            return None
        return self.listing_page(
            group,
            path,
            version,
            "All products | page {n}",
            lambda it, here: {
                "title": [shorten(str(it["title"]), lay.truncate_at)],
                "price": [f"£{it['price']:.2f}"],
                "stock_status": [self._stock(it)],
                "book_image": [relative(str(it["image"]), here)],
                "book_link": [relative(self._book_path(it), here)],
            },
            lambda rows: {r["book_link"][0]: r["title"][0] for r in rows},
        )


# ---------------------------------------------------------------- 2. the quotes site
class QuotesSite(Site):
    """quotes.toscrape-like: paginated quotes with authors and tags, and author pages."""

    key, website, folder, domain, name = (
        "quotes",
        "quotes.toscrape.local",
        "quotestoscrape",
        "other",
        "quotes",
    )
    base_items = 100
    listing = "page/{n}/index.html"
    per_page = 10
    groups = (
        Group(
            "g_000",
            "list",
            "quote",
            (
                Field("quote", "text", "span", "text", "the quote texts"),
                Field("author", "text", "small", "author", "the authors of the quotes"),
                Field("tag", "text", "a", "tag", "the tags of the quotes", many=True),
                Field("author_link", "link", "a", "author_about", "the links to the author pages"),
            ),
            container="quote",
        ),
        Group(
            "g_001",
            "detail",
            "author",
            (
                Field("author_name", "text", "h3", "author-title", "the author's name"),
                Field("born_date", "text", "span", "author-born-date", "the author's birth date"),
                Field("born_location", "text", "span", "author-born-location", "the author's birth place"),
            ),
        ),
    )
    _authors = tuple(f"{f} {last}" for f, last in zip(_FIRST, _LAST, strict=True))

    def new_item(self, rng: random.Random, item_id: int) -> Item:
        words = rng.sample(_WORDS, rng.randint(6, 12))
        return {
            "id": item_id,
            "quote": "\u201c" + " ".join(words).capitalize() + ".\u201d",
            "author": rng.choice(self._authors),
            "tags": sorted(rng.sample(_TAGS, rng.randint(1, 4))),
        }

    def update_item(self, rng: random.Random, item: Item) -> None:
        item["tags"] = sorted(rng.sample(_TAGS, rng.randint(1, 4)))

    def _author_path(self, author: str) -> str:
        return f"author/{_slug(author)}/index.html"

    def _author(self, name: str) -> dict[str, list[str]]:
        rng = random.Random(derive_seed(self.seed, "author", name))
        month = ("January", "March", "May", "July", "September", "December")[rng.randrange(6)]
        return {
            "author_name": [name],
            "born_date": [f"{month} {rng.randint(1, 28)}, {rng.randint(1815, 1990)}"],
            "born_location": [f"in {rng.choice(_CITIES)}"],
        }

    def pages(self, group: Group, version: int) -> list[str]:
        items = self.items_at(version)
        if group.group_id == "g_001":
            return [self._author_path(a) for a in sorted({str(it["author"]) for it in items})]
        return self.listing_paths(version)

    def content(self, group: Group, path: str, version: int) -> PageContent | None:
        items = self.items_at(version)
        if group.group_id == "g_001":
            for a in sorted({str(it["author"]) for it in items}):
                if path == self._author_path(a):
                    return PageContent(path, a, group, page_values=self._author(a))
            return None
        return self.listing_page(
            group,
            path,
            version,
            "Quotes to Scrape",
            lambda it, here: {
                "quote": [str(it["quote"])],
                "author": [str(it["author"])],
                "tag": list(it["tags"]),  # type: ignore[call-overload]
                "author_link": [relative(self._author_path(str(it["author"])), here)],
            },
            lambda rows: {r["author_link"][0]: "(about)" for r in rows},
        )


# ---------------------------------------------------------------- 3. the table site
class TableSite(Site):
    """scrapethissite-like: paginated hockey-team tables and country cards per region."""

    key, website, folder, domain, name = "tables", "scrapethissite.local", "scrapethissite", "other", "tables"
    base_items = 240
    listing = "pages/forms/page-{n}.html"
    per_page = 25
    groups = (
        Group(
            "g_000",
            "table",
            "team",
            (
                Field("team_name", "text", "td", "name", "the team names"),
                Field("year", "text", "td", "year", "the seasons"),
                Field("wins", "text", "td", "wins", "the wins"),
                Field("losses", "text", "td", "losses", "the losses"),
            ),
            container="table",
        ),
        Group(
            "g_001",
            "list",
            "country",
            (
                Field("country_name", "text", "h3", "country-name", "the country names"),
                Field("capital", "text", "span", "country-capital", "the capitals"),
                Field("population", "text", "span", "country-population", "the populations"),
                Field("area", "text", "span", "country-area", "the areas (km2)"),
            ),
            container="country",
        ),
    )

    def new_item(self, rng: random.Random, item_id: int) -> Item:
        return {
            "id": item_id,
            "team": f"{rng.choice(_CITIES)} {rng.choice(_WORDS).capitalize()}s",
            "year": rng.randint(1990, 2011),
            "wins": rng.randint(10, 60),
            "losses": rng.randint(10, 60),
            "country": _title(rng, 1, 2) + "ia",
            "capital": rng.choice(_CITIES),
            "population": rng.randint(10_000, 90_000_000),
            "area": round(rng.uniform(100, 900_000), 1),
            "region": rng.choice(_REGIONS),
        }

    def update_item(self, rng: random.Random, item: Item) -> None:
        item["wins"] = int(item["wins"]) + rng.randint(1, 5)  # type: ignore[call-overload]
        item["population"] = int(int(item["population"]) * rng.uniform(0.98, 1.03))  # type: ignore[call-overload]

    def pages(self, group: Group, version: int) -> list[str]:
        if group.group_id == "g_001":
            return [f"pages/simple/{r}.html" for r in _REGIONS]
        return self.listing_paths(version)

    def content(self, group: Group, path: str, version: int) -> PageContent | None:
        items = self.items_at(version)
        if group.group_id == "g_001":
            for r in _REGIONS:
                if path == f"pages/simple/{r}.html":
                    rows = [
                        {
                            "country_name": [str(it["country"])],
                            "capital": [str(it["capital"])],
                            "population": [str(it["population"])],
                            "area": [str(it["area"])],
                        }
                        for it in items
                        if it["region"] == r
                    ]
                    return PageContent(path, f"Countries of {r.capitalize()}", group, items=rows)
            return None
        return self.listing_page(
            group,
            path,
            version,
            "Hockey Teams",
            lambda it, _: {
                k: [str(it[v])]
                for k, v in (("team_name", "team"), ("year", "year"), ("wins", "wins"), ("losses", "losses"))
            },
        )


# ---------------------------------------------------------------- 4. the product catalogue
class ProductShop(Site):
    """sandbox.oxylabs-like: a paginated game catalogue with images, and product detail pages."""

    key, website, folder, domain, name = (
        "shop",
        "sandbox.oxylabs.local",
        "sandboxoxylabs",
        "ecommerce",
        "shop",
    )
    base_items = 150
    listing = "products/page-{n}.html"
    per_page = 16
    groups = (
        Group(
            "g_000",
            "list",
            "product",
            (
                Field("product_name", "text", "h3", "title", "the product names", truncate=True),
                Field("price", "text", "div", "price-wrapper", "the product prices"),
                Field("product_image", "image", "img", "product-image", "the product images"),
                Field("product_link", "link", "a", "card-header", "the product links"),
                Field("genre", "text", "p", "category", "the product genres", many=True),
            ),
            container="product-card",
        ),
        Group(
            "g_001",
            "detail",
            "product",
            (
                Field("product_name", "text", "h2", "title", "the product name"),
                Field("price", "text", "div", "price", "the product price"),
                Field("availability", "text", "p", "availability", "the availability"),
                Field("developer", "text", "span", "brand developer", "the developer"),
                Field("product_image", "image", "img", "main-image", "the product image"),
                Field("genre", "text", "span", "genre", "the genres of the product", many=True),
            ),
        ),
    )

    def new_item(self, rng: random.Random, item_id: int) -> Item:
        name = _title(rng, 1, 5)
        return {
            "id": item_id,
            "name": name,
            "price": round(rng.uniform(5, 90), 2),
            "stock": rng.random() < 0.8,
            "developer": rng.choice(_STUDIOS),
            "genres": sorted(rng.sample(_GENRES, rng.randint(1, 3))),
            "image": f"assets/images/{_digest(name, item_id)[:12]}.jpg",
        }

    def update_item(self, rng: random.Random, item: Item) -> None:
        item["price"] = round(float(item["price"]) * rng.uniform(0.7, 1.1), 2)  # type: ignore[arg-type]
        item["stock"] = not item["stock"]

    def pages(self, group: Group, version: int) -> list[str]:
        items = self.items_at(version)
        if group.group_id == "g_001":
            return [f"products/{it['id']}.html" for it in items]
        return self.listing_paths(version)

    def content(self, group: Group, path: str, version: int) -> PageContent | None:
        lay = layout_of(version)
        page_dir = posixpath.dirname(path)
        if group.group_id == "g_001":
            hit = self.item_at(path, version, lambda it: f"products/{it['id']}.html")
            if hit is None:
                return None
            values = {
                "product_name": [str(hit["name"])],
                "price": [f"{hit['price']:.2f} €"],
                "availability": ["In stock" if hit["stock"] else "Out of stock"],
                "developer": [str(hit["developer"])],
                "product_image": [relative(str(hit["image"]), page_dir)],
                "genre": list(hit["genres"]),  # type: ignore[call-overload]
            }
            return PageContent(path, str(hit["name"]), group, page_values=values, page_dir=page_dir)
        return self.listing_page(
            group,
            path,
            version,
            "Video games",
            lambda it, here: {
                "product_name": [shorten(str(it["name"]), lay.truncate_at)],
                "price": [f"{it['price']:.2f} €"],
                "product_image": [relative(str(it["image"]), here)],
                "product_link": [relative(f"products/{it['id']}.html", here)],
                "genre": list(it["genres"]),  # type: ignore[call-overload]
            },
            lambda rows: {r["product_link"][0]: "View" for r in rows},
        )


# ---------------------------------------------------------------- 5. the paper listing
class PaperListing(Site):
    """arXiv-like: abstract pages with authors and a PDF link, and a paginated listing."""

    key, website, folder, domain, name = "papers", "arxiv.local", "arxiv", "academic", "papers"
    base_items = 120
    listing = "list/page-{n}.html"
    per_page = 15
    groups = (
        Group(
            "g_000",
            "detail",
            "paper",
            (
                Field("title", "text", "h1", "title", "the title of the paper"),
                Field("author", "text", "a", "author", "the authors of the paper", many=True),
                Field("pdf_link", "link", "a", "download-pdf", "the PDF link of the paper"),
                Field("subject", "text", "span", "primary-subject", "the primary subject"),
            ),
        ),
        Group(
            "g_001",
            "list",
            "paper",
            (
                Field("title", "text", "div", "list-title", "the paper titles"),
                Field("abstract_link", "link", "a", "abs-link", "the abstract page links"),
                Field("pdf_link", "link", "a", "pdf-link", "the PDF links"),
            ),
            container="list-entry",
        ),
    )

    def new_item(self, rng: random.Random, item_id: int) -> Item:
        return {
            "id": item_id,
            "arxiv": f"2401.{item_id:05d}",
            "title": _title(rng, 4, 9),
            "authors": [_person(rng) for _ in range(rng.randint(1, 6))],
            "subject": rng.choice(_SUBJECTS),
        }

    def update_item(self, rng: random.Random, item: Item) -> None:
        item["subject"] = rng.choice(_SUBJECTS)  # a re-classified paper

    def pages(self, group: Group, version: int) -> list[str]:
        items = self.items_at(version)
        if group.group_id == "g_000":
            return [f"abs/{it['arxiv']}.html" for it in items]
        return self.listing_paths(version)

    def content(self, group: Group, path: str, version: int) -> PageContent | None:
        page_dir = posixpath.dirname(path)
        if group.group_id == "g_000":
            hit = self.item_at(path, version, lambda it: f"abs/{it['arxiv']}.html")
            if hit is None:
                return None
            values = {
                "title": [str(hit["title"])],
                "author": list(hit["authors"]),  # type: ignore[call-overload]
                "pdf_link": [relative(f"pdf/{hit['arxiv']}", page_dir)],
                "subject": [str(hit["subject"])],
            }
            labels = {values["pdf_link"][0]: "View PDF"}
            return PageContent(
                path, str(hit["title"]), group, page_values=values, link_labels=labels, page_dir=page_dir
            )
        return self.listing_page(
            group,
            path,
            version,
            "Recent submissions",
            lambda it, here: {
                "title": [str(it["title"])],
                "abstract_link": [relative(f"abs/{it['arxiv']}.html", here)],
                "pdf_link": [relative(f"pdf/{it['arxiv']}", here)],
            },
            lambda rows: {
                **{r["abstract_link"][0]: "arXiv:" + r["abstract_link"][0][4:-5] for r in rows},
                **{r["pdf_link"][0]: "pdf" for r in rows},
            },
        )


SITE_TYPES: tuple[type[Site], ...] = (BookStore, QuotesSite, TableSite, ProductShop, PaperListing)
SITE_KEYS = tuple(s.key for s in SITE_TYPES)


def make_sites(seed: int = 0, keys: tuple[str, ...] = SITE_KEYS) -> dict[str, Site]:
    """The sites named by `keys`, generated from `seed`."""
    by_key = {s.key: s for s in SITE_TYPES}
    unknown = [k for k in keys if k not in by_key]
    if unknown:
        raise UserError(f"unknown site {unknown[0]!r}; the sites are {', '.join(SITE_KEYS)}")
    return {k: by_key[k](seed) for k in keys}


# ---------------------------------------------------------------- ground truth and HTML
def groundtruth(content: PageContent) -> dict[str, list[str]]:
    """Every attribute's values on the page, in page order (page-level values, then items')."""
    out: dict[str, list[str]] = {
        f.name: list(content.page_values.get(f.name, [])) for f in content.group.fields
    }
    for it in content.items:
        for f in content.group.fields:
            out[f.name].extend(it.get(f.name, []))
    return out


def oracle_xpaths(group: Group, layout: Layout) -> dict[str, str]:
    """The generator's own XPath for each field of `group` under `layout` (the oracle wrapper)."""
    out = {}
    for i, f in enumerate(group.fields):
        cls = layout.cls(f, i)
        if group.kind == "table":
            col = _columns(group, layout).index(i) + 1
            path = f"//table[contains(@class,'{group.container}')]/tbody/tr/td[{col}]"
        elif f.kind == "link":
            path = f"//a[@class='{cls}']/@href"
        elif f.kind == "image":
            path = f"//img[@class='{cls}']/@src"
        else:
            path = f"//{layout.tag(f)}[@class='{cls}']"
        out[f.name] = path
    return out


def _columns(group: Group, layout: Layout) -> list[int]:
    idx = list(range(len(group.fields)))
    r = layout.rotate_columns % len(idx)
    return idx[r:] + idx[:r]


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _value_html(f: Field, cls: str, tag: str, value: str, labels: dict[str, str], alt: str) -> str:
    if f.kind == "image":
        return f'<img class="{cls}" src="{_esc(value)}" alt="{_esc(alt)}" width="120" height="160">'
    if f.kind == "link":
        return f'<a class="{cls}" href="{_esc(value)}">{_esc(labels.get(value, "link"))}</a>'
    if tag == "td":
        return f'<td class="{cls}">{_esc(value)}</td>'
    return f'<{tag} class="{cls}">{_esc(value)}</{tag}>'


def _fields_html(
    group: Group, values: dict[str, list[str]], lay: Layout, labels: dict[str, str], alt: str
) -> str:
    order = list(enumerate(group.fields))
    if lay.reverse_fields:
        order.reverse()
    parts, rows = [], []
    for i, f in order:
        cls, tag = lay.cls(f, i), lay.tag(f)
        vals = values.get(f.name, [])
        if tag == "td":  # detail-page values in a product-information table
            rows += [
                f"<tr><th>{_esc(f.name.upper())}</th>{_value_html(f, cls, tag, v, labels, alt)}</tr>"
                for v in vals
            ]
            continue
        inner = "".join(_value_html(f, cls, tag, v, labels, alt) for v in vals)
        parts.append(f'<div class="field">{inner}</div>' if f.many else inner)
    if rows:
        parts.append(f'<table class="table table-striped"><tbody>{"".join(rows)}</tbody></table>')
    return "\n".join(parts)


def _pager(content: PageContent) -> str:
    page, pages = content.pager
    if not pages:
        return ""
    prev = f'<li class="previous"><a href="page-{page - 1}.html">previous</a></li>' if page > 1 else ""
    nxt = f'<li class="next"><a href="page-{page + 1}.html">next</a></li>' if page < pages else ""
    return f'<ul class="pager">{prev}<li class="current">Page {page} of {pages}</li>{nxt}</ul>'


def render(site: Site, content: PageContent, version: int, layout: Layout | None = None) -> str:
    """The page's HTML under the layout served at `version` (or `layout`, e.g. a `GRADED` one)."""
    lay, g = layout or layout_of(version), content.group
    alt = content.title
    if g.kind == "detail":
        fields = _fields_html(g, content.page_values, lay, content.link_labels, alt)
        body = f'<article class="product_page">\n{fields}\n</article>'
    elif g.kind == "table":
        cols = _columns(g, lay)
        head = "".join(f"<th>{_esc(g.fields[i].name.replace('_', ' ').title())}</th>" for i in cols)
        trs = []
        for it in content.items:
            tds = "".join(
                f'<td class="{lay.cls(g.fields[i], i)}">{_esc(it[g.fields[i].name][0])}</td>' for i in cols
            )
            trs.append(f'<tr class="team">{tds}</tr>')
        rows = "".join(trs)
        body = f'<table class="{g.container}"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
    else:
        cards = []
        for it in content.items:
            inner = _fields_html(g, it, lay, content.link_labels, alt)
            cards.append(f'<li><article class="{g.container}">{inner}</article></li>')
        body = f'<ol class="row">{"".join(cards)}</ol>'
    pager = _pager(content)
    main = (pager + body) if lay.pager_on_top else (body + pager)
    for k in range(lay.wrappers):
        main = f'<div class="wrap-{k}">{main}</div>'
    nav = "".join(
        f'<li><a href="/{site.key}/{p}">{_esc(_plural(noun))}</a></li>' for noun, p in _nav(site, version)
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_esc(content.title)} | {site.name}</title><style>{_CSS}</style></head>\n"
        f'<body><header class="page_header"><a class="brand" href="/{site.key}/'
        f'index.html">{_esc(site.website)}</a><ul class="nav">{nav}</ul></header>\n'
        f'<div class="page_inner"><ul class="breadcrumb"><li><a href="/{site.key}/index.html">Home</a></li>'
        f'<li class="active">{_esc(content.title)}</li></ul>\n<div class="content">{main}</div></div>\n'
        '<footer class="footer"><p>Generated site for LiveWeb-IE drift tests; '
        f"layout {lay.version}.</p></footer>"
        "</body></html>\n"
    )


def _plural(noun: str) -> str:
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"


def _nav(site: Site, version: int) -> list[tuple[str, str]]:
    """(noun, first page) of each group: the site's navigation bar."""
    firsts = site.indexed(
        "nav", version, lambda: {g.group_id: site.pages(g, version)[:1] for g in site.groups}
    )
    return [(g.noun, p) for g in site.groups for p in firsts[g.group_id]]  # type: ignore[attr-defined]


_CSS = (
    "body{font-family:sans-serif;margin:0;background:#fff;color:#222;width:1200px}"
    "header{background:#5b7c99;padding:12px}header a{color:#fff;margin-right:16px}"
    ".nav,.breadcrumb,.pager,.row{list-style:none;padding:0}"
    ".nav li,.breadcrumb li,.pager li{display:inline;margin:0 6px}"
    ".page_inner{padding:12px 24px}.row{display:flex;flex-wrap:wrap}"
    ".row>li{width:260px;margin:8px;border:1px solid #ddd;padding:8px}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}"
    "h1,h2,h3{margin:6px 0}p,span,small,div{margin:4px 0}img{display:block;margin:4px 0}"
    ".footer{padding:12px;color:#888}"
)


def image_bytes(path: str) -> bytes:
    """A small JPEG for an image path (a cover in a colour hashed from the path), for Chromium to draw."""
    return _image_bytes(path)


@lru_cache(maxsize=4096)
def _image_bytes(path: str) -> bytes:
    import io

    from PIL import Image, ImageDraw

    h = int(_digest(path)[:6], 16)
    img = Image.new("RGB", (120, 160), ((h >> 16) & 255, (h >> 8) & 255, h & 255))
    ImageDraw.Draw(img).rectangle((10, 10, 110, 150), outline=(255, 255, 255), width=3)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=70)
    return buf.getvalue()
