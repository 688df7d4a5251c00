"""The metric's normalisation and P/R/F1 on crafted value sets."""

from __future__ import annotations

import pytest

from iclr26.liveweb_ie.evaluate import PageResult, f1_table
from iclr26.liveweb_ie.metric import normalise, page_score, prf, same


@pytest.mark.parametrize(
    ("raw", "url", "want"),
    [
        ("  In  Stock\n(22 available) ", False, "in stock (22 available)"),
        ("\uff21\uff22\uff23", False, "abc"),  # full-width letters: NFKC
        ("\u00a351.77", False, "\u00a351.77"),
        ("../../media/cache/a.jpg", True, "media/cache/a.jpg"),
        ("./media/a.jpg", True, "media/a.jpg"),
        ("/media/a.jpg", True, "media/a.jpg"),
        ("https://books.toscrape.com/media/a.jpg", False, "media/a.jpg"),  # a scheme marks a URL
        ("HTTP://Host.com/A.html?x=1", True, "a.html?x=1"),
    ],
)
def test_normalise(raw, url, want):
    assert normalise(raw, url=url) == want


def test_truncated_values_match_by_prefix_in_either_direction():
    assert same("a light in the ...", "a light in the attic")
    assert same("a light in the attic", "a light in the\u2026")
    assert not same("a light ...", "the light in the attic")
    assert not same("a light", "a light in the attic")  # no dots: no prefix match


def test_prf_on_crafted_sets():
    assert prf(["A", "B"], ["a", "b"]).f1 == 1.0
    r = prf(["a", "x"], ["a", "b", "c"])
    assert (r.precision, r.recall) == (0.5, pytest.approx(1 / 3)) and r.f1 == pytest.approx(0.4)
    assert prf(["a", "a"], ["a"]).precision == 0.5  # one-to-one: a duplicate is not matched twice
    assert prf([], []).f1 == 1.0 and prf([], ["a"]).f1 == 0.0 and prf(["a"], []).f1 == 0.0
    assert prf(["", "  "], []).f1 == 1.0  # empty strings are not values
    assert prf(["The Red ..."], ["The Red Fox", "The Red Fox"]).f1 == pytest.approx(2 / 3)


def test_page_score_averages_attributes_and_the_table_macro_averages_pages():
    s = page_score({"title": ["t"], "img": []}, {"title": ["t"], "img": ["/a.jpg"]}, ["img"])
    assert s.f1 == 0.5
    s = page_score({"img": ["../a.jpg"]}, {"img": ["http://h/a.jpg"]}, ["img"])
    assert s.f1 == 1.0
    rows = [
        PageResult("m", "q1", "type_1", 0, "u1", 1, 1, 1.0),
        PageResult("m", "q1", "type_1", 0, "u2", 0, 0, 0.0),
        PageResult("m", "q2", "type_3", 0, "u1", 1, 1, 0.5),
    ]
    t = f1_table(rows, ["m"], [0])["m"][0]
    assert t["type_1"] == 50.0 and t["type_3"] == 50.0 and t["overall"] == pytest.approx(50.0)
    assert t["type_2"] != t["type_2"]  # no page of that type: NaN, printed blank
