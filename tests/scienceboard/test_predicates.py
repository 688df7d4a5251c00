"""The predicate interpreter: ScienceBoard-shaped getters and predicates evaluate as Python would, and
code injection, unknown names, dunder attributes and oversized values are refused before or while
running, never executed."""

from __future__ import annotations

import datetime

import pytest

from iclr26.scienceboard.predicates import PredicateError, compile_predicate

DUMP = {
    "time": {"value": 2460000.5, "pause": False},
    "layers": [
        {"name": "countries@PERMANENT", "visible": True},
        {"name": "rivers@PERMANENT", "visible": False},
    ],
    "region": {"n": 40.0, "s": -10.0},
}


@pytest.mark.parametrize(
    ("getter", "want"),
    [
        ("lambda dump: dump['time']['value']", 2460000.5),
        (
            "lambda dump: [layer['name'] for layer in dump['layers'] if layer['visible']]",
            ["countries@PERMANENT"],
        ),
        ("lambda dump: dump['region']['n'] - dump['region']['s']", 50.0),
        ("lambda dump: {k: v for k, v in dump['region'].items() if v > 0}", {"n": 40.0}),
        ("lambda dump: dump.get('missing', 'none').upper()", "NONE"),
        ("lambda dump: sorted(x['name'].split('@')[0] for x in dump['layers'])", ["countries", "rivers"]),
        ("lambda dump: dump['layers'][-1]['name'][:6]", "rivers"),
        ("lambda dump: len(dump['layers']) == 2 and not dump['time']['pause']", True),
        ("lambda dump: 'a' if dump['time']['value'] > 1 else 'b'", "a"),
    ],
)
def test_getters_evaluate_like_python(getter, want):
    assert compile_predicate(getter, arity=1)(DUMP) == want


def test_two_argument_predicates_and_the_datetime_import():
    assert compile_predicate("lambda key, value: abs(key - value) < 0.1")(10.35, 10.31)
    assert not compile_predicate("lambda key, value: abs(key - value) < 0.1")(10.5, 10.31)
    pred = compile_predicate("lambda key, value: any([item['name'] == value for item in key])")
    assert pred(DUMP["layers"], "rivers@PERMANENT") and not pred(DUMP["layers"], "roads@PERMANENT")
    today = compile_predicate("lambda: __import__('datetime').date.today().strftime('%Y-%m-%d')")()
    assert today == datetime.date.today().strftime("%Y-%m-%d")
    assert compile_predicate("lambda s: __import__('re').search('^1\\\\.0+$', s) is not None")("1.000")
    assert compile_predicate("lambda a, b: __import__('math').isclose(a, b, rel_tol=1e-3)")(1.0, 1.0005)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("lambda: __import__('os').system('echo pwned')", "attribute 'system'"),
        ("lambda x: x.__class__", "attribute '__class__'"),
        ("lambda: ().__class__.__base__.__subclasses__()", "attribute '__subclasses__'"),
        ("lambda: open('/etc/passwd')", "name 'open'"),
        ("lambda x: getattr(x, 'y')", "name 'getattr'"),
        ("lambda: eval('1')", "name 'eval'"),
        ("lambda x: '{0.__class__}'.format(x)", "attribute 'format'"),
        ("lambda: (yield 1)", "Yield"),
        ("lambda x: (x.y := 1)", "not an expression"),
        ("import os", "not an expression"),
        ("dump['time']", "must be a lambda"),
        ("lambda *a: a", "plain positional"),
        ("lambda x: {**x}", "\\*\\* in a dict"),
        ("lambda x: dict(**x)", "\\*\\* in a call"),
        ("lambda x: [y for y.attr in x]", "names or tuples"),
        ("lambda x: z", "name 'z'"),
    ],
)
def test_injection_and_unknown_constructs_are_refused_before_running(source, message):
    with pytest.raises(PredicateError, match=message):
        compile_predicate(source)


def test_walrus_binds_for_the_rest_of_the_lambda():
    dist = compile_predicate("lambda d: (s := d['sun'], e := d['earth'], abs(s - e))[-1]")
    assert dist({"sun": 1.0, "earth": 4.0}) == 3.0


def test_only_the_listed_modules_import():
    with pytest.raises(PredicateError, match="may load only datetime, math, re, not 'os'"):
        compile_predicate("lambda: __import__('os')")()


def test_a_predicate_cannot_stall_the_evaluator():
    with pytest.raises(PredicateError, match="exponent"):
        compile_predicate("lambda: 9 ** 9 ** 9")()
    with pytest.raises(PredicateError, match="repeated sequence"):
        compile_predicate("lambda: 'a' * 10 ** 9")()
    with pytest.raises(PredicateError, match="range"):
        compile_predicate("lambda: sum(range(10 ** 8))")()
    with pytest.raises(PredicateError, match="at most 2000"):
        compile_predicate("lambda x: " + " + ".join(["x"] * 1000))
    with pytest.raises(PredicateError, match="takes 1 arguments, the evaluator passes 2"):
        compile_predicate("lambda dump: dump", arity=2)
    with pytest.raises(PredicateError, match="takes 2 arguments, got 1"):
        compile_predicate("lambda a, b: a")(1)
