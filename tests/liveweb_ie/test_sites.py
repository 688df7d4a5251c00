"""The live sites: drift changes what it claims to change, and the ground truth always matches the
served HTML (every value is on the page, in the element or attribute it claims)."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from iclr26.core.errors import UserError
from iclr26.liveweb_ie.sites import LAYOUTS, groundtruth, layout_of, make_sites, render, shorten


@pytest.fixture(scope="module")
def sites():
    return make_sites(seed=0)


def _values_on_page(html: str, kind: str) -> list[str]:
    tree = lxml_html.fromstring(html)
    if kind == "image":
        return tree.xpath("//img/@src")
    if kind == "link":
        return tree.xpath("//a/@href")
    return [" ".join("".join(e.itertext()).split()) for e in tree.iter() if isinstance(e.tag, str)]


@pytest.mark.parametrize("version", [0, 1, 2, 4])
def test_groundtruth_is_on_the_served_page(sites, version):
    for site in sites.values():
        for group in site.groups:
            paths = site.pages(group, version)
            for path in paths[:: max(1, len(paths) // 4)][:4]:
                content = site.page(path, version)
                html = render(site, content, version)
                truth = groundtruth(content)
                for f in group.fields:
                    on_page = _values_on_page(html, f.kind)
                    for v in truth[f.name]:
                        assert v in on_page, (site.key, group.group_id, path, f.name, v)
                    assert truth[f.name], (site.key, path, f.name)  # every field has a value


def test_content_drift_removes_adds_and_updates_items_but_keeps_the_layout(sites):
    books = sites["books"]
    v0 = {it["id"]: it for it in books.items_at(0)}
    v1 = {it["id"]: it for it in books.items_at(1)}
    assert set(v0) - set(v1), "some items are removed"
    assert set(v1) - set(v0), "some items are added"
    assert any(v0[i]["price"] != v1[i]["price"] for i in set(v0) & set(v1)), "some prices change"
    assert layout_of(0) == layout_of(1)
    g = books.groups[0]
    removed = next(i for i in v0 if i not in v1)
    gone = next(p for p in books.pages(g, 0) if p.endswith(f"_{removed}/index.html"))
    assert books.page(gone, 1) is None  # a removed book's page is a 404 at v1
    assert books.items_at(1) == make_sites(seed=0)["books"].items_at(1)  # seeded: the same drift again


def test_layout_drift_renames_classes_wraps_reorders_and_moves_the_pager(sites):
    books = sites["books"]
    page0 = render(books, books.page("catalogue/page-1.html", 1), 1)
    page2 = render(books, books.page("catalogue/page-1.html", 2), 2)
    t0, t2 = lxml_html.fromstring(page0), lxml_html.fromstring(page2)
    assert t0.xpath("//h3[@class='book_title']") and not t2.xpath("//h3[@class='book_title']")
    assert t2.xpath("//h3[@class='x-book-title']")
    assert not t0.xpath("//div[starts-with(@class,'wrap-')]") and t2.xpath("//div[@class='wrap-0']")
    first0 = t0.xpath("//article[@class='product_pod']")[0][0].get("class")
    first2 = t2.xpath("//article[@class='product_pod']")[0][0].get("class")
    assert first0 != first2  # fields in reverse order
    content = t2.xpath("//div[@class='wrap-0']")[0]
    assert content[0].get("class") == "pager"  # pagination moved above the list
    tables = sites["tables"]
    head0 = lxml_html.fromstring(render(tables, tables.page("pages/forms/page-1.html", 0), 0)).xpath(
        "//th/text()"
    )
    head2 = lxml_html.fromstring(render(tables, tables.page("pages/forms/page-1.html", 2), 2)).xpath(
        "//th/text()"
    )
    assert head0 != head2 and sorted(head0) == sorted(head2)  # columns reordered
    assert [lay.truncate_at for lay in LAYOUTS] == sorted((lay.truncate_at for lay in LAYOUTS), reverse=True)


def test_truncation_keeps_a_word_prefix():
    assert shorten("A Light in the Attic", 40) == "A Light in the Attic"
    assert shorten("A Light in the Attic", 12) == "A Light in ..."
    assert "A Light in the Attic".startswith(shorten("A Light in the Attic", 12)[:-4])


def test_unknown_site_and_group_are_named():
    with pytest.raises(UserError, match="unknown site 'blog'"):
        make_sites(0, ("books", "blog"))
    with pytest.raises(UserError, match="no group 'g_009'"):
        make_sites(0, ("books",))["books"].group("g_009")
