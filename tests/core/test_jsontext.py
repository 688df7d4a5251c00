"""JSON objects in free text: balanced spans that skip braces inside strings, and the single-quote
fallback small models need."""

from iclr26.core.jsontext import balanced_spans, json_objects


def test_balanced_spans_skip_braces_inside_strings_and_keep_nesting():
    text = 'say {"a": "}{", "b": {"c": 1}} then {"d": "x\\"}"} and a stray } {unclosed'
    assert balanced_spans(text) == ['{"a": "}{", "b": {"c": 1}}', '{"d": "x\\"}"}']
    assert balanced_spans("no braces") == []


def test_json_objects_parse_each_span_and_tolerate_single_quotes_on_request():
    text = "{'state': 'kitchen', 'value': 3} and {\"state\": \"hall\"} and {not json} and [1]"
    assert json_objects(text) == [{"state": "hall"}]
    assert json_objects(text, single_quotes=True) == [{"state": "kitchen", "value": 3}, {"state": "hall"}]
    assert json_objects('{"a": [1, 2]}') == [{"a": [1, 2]}]
