"""Each VGS stage's parser, and the baselines' XPath parsers, on messy replies."""

from __future__ import annotations

from iclr26.liveweb_ie.replies import (
    asks_for_many,
    default_kind,
    parse_attributes,
    parse_marks,
    parse_region,
    parse_xpath,
    parse_xpath_map,
)


def test_stage1_attribute_lines_in_any_shape():
    reply = (
        "Sure! Here is what I found:\n- **title** | text | one | the big heading\n"
        "book_image: it is an IMAGE, several of them\nnothing about price here"
    )
    title, image, price = parse_attributes(
        reply, ("title", "book_image", "price"), "Get the title, images and price"
    )
    assert (title.kind, title.many, title.description, title.parsed) == (
        "text",
        False,
        "the big heading",
        True,
    )
    assert (image.kind, image.many, image.parsed) == ("image", True, True)
    assert (price.kind, price.parsed) == ("text", False)  # not mentioned: the defaults
    (link,) = parse_attributes("", ("author_link",), "List all author links")
    assert (link.kind, link.many, link.parsed) == ("link", True, False)
    assert (
        default_kind("product_image") == "image"
        and default_kind("pdf_link") == "link"
        and default_kind("upc") == "text"
    )
    assert asks_for_many("Collect all book prices") and not asks_for_many("Extract the price of the book")


def test_stage2_region_numbers_in_prose_words_and_out_of_range():
    assert parse_region("Region 2", 4) == 2
    assert parse_region("I think it is in region two of the page.", 4) == 2
    assert parse_region("The 7th region, no wait, 1", 4) == 1  # 7 is out of range: skipped
    assert parse_region("the price is near the top", 4) is None
    assert parse_region("", 3) is None


def test_stage3_mark_ids_only_valid_ones_once():
    valid = {3, 7, 8, 12}
    assert parse_marks("Elements: 3, 7, 7 and [12]; also 99", valid, many=True) == [3, 7, 12]
    assert parse_marks("[7] <p.price> and [8]", valid, many=False) == [7]
    assert parse_marks("none of them", valid, many=True) == []


def test_stage4_xpath_from_fences_prose_and_quotes():
    assert (
        parse_xpath("```xpath\n//p[@class='price_color']/text()\n```") == "//p[@class='price_color']/text()"
    )
    assert parse_xpath('XPath: "/html/body/div[2]/h1".') == "/html/body/div[2]/h1"
    assert parse_xpath('The XPath is //h1[@class="title"] which selects the title.') == '//h1[@class="title"]'
    assert (
        parse_xpath('//div[@class="a" and contains(., "b c")] done')
        == '//div[@class="a" and contains(., "b c")]'
    )
    assert parse_xpath("I cannot tell from this page.") == ""
    assert parse_xpath("XPath: //div[") == "//div["  # not valid: returned as is, counted empty when run


def test_cot_maps_from_json_cut_json_and_lines():
    attrs = ("title", "price", "x")
    assert parse_xpath_map('{"title": "//h1", "price": "//p"}', attrs) == {
        "title": "//h1",
        "price": "//p",
        "x": "",
    }
    cut = '```json\n{"title": "//h1[@class=\'t\']", "price": "/html/body/p'
    assert parse_xpath_map(cut, ("title", "price")) == {"title": "//h1[@class='t']", "price": "/html/body/p"}
    assert parse_xpath_map('title: //h1\n* price = //p[@class="p"]', ("title", "price")) == {
        "title": "//h1",
        "price": '//p[@class="p"]',
    }
