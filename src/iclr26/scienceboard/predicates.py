"""ScienceBoard's state predicates without `eval`: a small interpreter for the lambdas its task files hold.

The authors' task files carry getters and predicates as Python source, e.g.
`"lambda dump: dump['time']['value']"` and `"lambda key, value: abs(key - value) < 0.1"`, and their
harness runs them with `eval`. Here the text is parsed with `ast` and walked by `interpret`, which
knows only a whitelisted subset: lambdas, literals, names bound by the lambda or a comprehension,
indexing and slicing, comparisons, boolean and arithmetic operators, conditional expressions,
comprehensions, `:=` (one Celestia task binds the Sun's and Earth's positions with it), calls of a
fixed set of builtins and of listed methods, and three modules reached by `__import__` (datetime,
math, and re as `core.taskregex`, which caps sizes and time). Anything else (dunder attributes,
other names, statements, other imports, lambdas that capture more than they bind) is refused with
`PredicateError` naming the construct, before anything runs. Sizes are bounded (`range`, `**`,
repeated strings) so a task file cannot stall the evaluator.
"""

from __future__ import annotations

import ast
import datetime
import math
import operator
from collections.abc import Callable
from typing import Any

from iclr26.core import taskregex
from iclr26.core.errors import UserError

MAX_SOURCE = 2000  # characters
MAX_DEPTH = 64  # levels of nested expressions; the checker and the interpreter recurse on them
MAX_RANGE = 1_000_000
MAX_POWER = 64
MAX_SEQUENCE = 1_000_000


class PredicateError(UserError):
    """A task's predicate uses something the interpreter does not allow, or failed to evaluate."""


MODULES = {"datetime": datetime, "math": math, "re": taskregex.RE}

BUILTINS: dict[str, Any] = {
    f.__name__: f
    for f in (
        abs,
        all,
        any,
        bool,
        dict,
        enumerate,
        float,
        int,
        len,
        list,
        max,
        min,
        round,
        set,
        sorted,
        str,
        sum,
        tuple,
        zip,
        reversed,
    )
}
BUILTINS["True"], BUILTINS["False"], BUILTINS["None"] = True, False, None

_STR_METHODS = "lower upper strip lstrip rstrip split rsplit splitlines startswith endswith replace join"
_MORE_STR = (
    "find count isdigit isalpha isnumeric casefold title zfill partition"  # no format: it reads attributes
)
_CONTAINER_METHODS = "get keys values items index"
_MODULE_ATTRS = (
    "date datetime time today now strftime isoformat year month day hour minute second timedelta "
    "isclose sqrt floor ceil fabs log exp pi e inf isnan radians degrees sin cos tan "
    "search match fullmatch findall group groups IGNORECASE I"
)
METHODS = frozenset(" ".join((_STR_METHODS, _MORE_STR, _CONTAINER_METHODS, _MODULE_ATTRS)).split())
"""The attributes a predicate may read: str, dict and list methods, and datetime / math / re members."""

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}  # fmt: skip
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.Not: operator.not_,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _guarded_import(name: str, *rest: Any) -> Any:
    if rest or name not in MODULES:
        raise PredicateError(f"__import__ may load only {', '.join(MODULES)}, not {name!r}")
    return MODULES[name]


def _guarded_range(*args: int) -> range:
    r = range(*args)
    if len(r) > MAX_RANGE:
        raise PredicateError(f"range of {len(r)} items is over the limit of {MAX_RANGE}")
    return r


CALLABLE = {**BUILTINS, "__import__": _guarded_import, "range": _guarded_range}


def compile_predicate(source: str, *, arity: int | None = None) -> Callable[..., Any]:
    """The lambda in `source` as a Python callable run by the interpreter; checked before it runs."""
    if not isinstance(source, str) or not source.strip():
        raise PredicateError(f"a predicate must be a lambda's source text, got {source!r}")
    if len(source) > MAX_SOURCE:
        raise PredicateError(f"a predicate is at most {MAX_SOURCE} characters, got {len(source)}")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as e:
        raise PredicateError(f"predicate {source[:80]!r} is not an expression: {e.msg}") from None
    node = tree.body
    if _depth(node) > MAX_DEPTH:
        raise PredicateError(f"predicate {source[:80]!r} nests expressions over {MAX_DEPTH} levels deep")
    if not isinstance(node, ast.Lambda):
        raise PredicateError(f"a predicate must be a lambda, got {type(node).__name__} in {source[:80]!r}")
    _check(node, set(), source)
    params = [a.arg for a in node.args.args]
    if arity is not None and len(params) != arity:
        raise PredicateError(
            f"predicate {source[:80]!r} takes {len(params)} arguments, the evaluator passes {arity}"
        )
    return _closure(node, {})


def _depth(node: ast.AST) -> int:
    """How deep the expression tree under `node` goes (counted without recursion)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in ast.iter_child_nodes(n))
    return deepest


_ALLOWED = (
    ast.Lambda, ast.arguments, ast.arg, ast.Constant, ast.Name, ast.Load, ast.Store, ast.Subscript, ast.Slice,
    ast.Compare, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.BinOp, ast.IfExp, ast.List, ast.Tuple,
    ast.Dict, ast.Set, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp, ast.comprehension,
    ast.Call, ast.keyword, ast.Attribute, ast.NamedExpr, *(_BINOPS), *(_CMPOPS), *(_UNARY),
)  # fmt: skip


def _check(node: ast.AST, bound: set[str], source: str) -> None:
    """Refuse any construct outside the subset, any unknown name and any dunder attribute."""
    if not isinstance(node, _ALLOWED):
        raise PredicateError(f"predicate {source[:80]!r} uses {type(node).__name__}, which is not allowed")
    if isinstance(node, ast.Lambda):
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
            raise PredicateError(
                f"predicate {source[:80]!r}: only plain positional lambda arguments are allowed"
            )
        walrus = {n.target.id for n in ast.walk(node.body) if isinstance(n, ast.NamedExpr)}  # type: ignore[union-attr]
        _check(node.body, bound | {x.arg for x in a.args} | walrus, source)
        return
    if isinstance(node, ast.NamedExpr) and not isinstance(node.target, ast.Name):
        raise PredicateError(f"predicate {source[:80]!r}: := may bind a name only")
    if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp):
        inner = set(bound)
        for gen in node.generators:
            _check(gen.iter, inner, source)
            inner |= _targets(gen.target, source)
            for cond in gen.ifs:
                _check(cond, inner, source)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            _check(part, inner, source)
        return
    if isinstance(node, ast.Dict) and any(k is None for k in node.keys):
        raise PredicateError(f"predicate {source[:80]!r}: ** in a dict literal is not allowed")
    if isinstance(node, ast.Call) and any(k.arg is None for k in node.keywords):
        raise PredicateError(f"predicate {source[:80]!r}: ** in a call is not allowed")
    if isinstance(node, ast.Name) and node.id not in bound and node.id not in CALLABLE:
        raise PredicateError(f"predicate {source[:80]!r} uses the name {node.id!r}, which is not allowed")
    if isinstance(node, ast.Attribute) and (node.attr.startswith("_") or node.attr not in METHODS):
        raise PredicateError(
            f"predicate {source[:80]!r} uses the attribute {node.attr!r}, which is not allowed"
        )
    for child in ast.iter_child_nodes(node):
        _check(child, bound, source)


def _targets(target: ast.AST, source: str) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Tuple):
        return set().union(*(_targets(t, source) for t in target.elts))
    raise PredicateError(f"predicate {source[:80]!r}: a comprehension may bind names or tuples of names only")


def _closure(node: ast.Lambda, env: dict[str, Any]) -> Callable[..., Any]:
    names = [a.arg for a in node.args.args]

    def call(*args: Any) -> Any:
        if len(args) != len(names):
            raise PredicateError(f"the predicate takes {len(names)} arguments, got {len(args)}")
        return interpret(node.body, {**env, **dict(zip(names, args, strict=True))})

    return call


def _bounded(value: Any) -> Any:
    if isinstance(value, str | list | tuple) and len(value) > MAX_SEQUENCE:
        raise PredicateError(f"a value of {len(value)} items is over the limit of {MAX_SEQUENCE}")
    return value


def interpret(node: ast.AST, env: dict[str, Any]) -> Any:
    """The value of a checked expression node in `env` (names bound by lambdas and comprehensions)."""
    match node:
        case ast.Constant(value=v):
            return v
        case ast.Name(id=name):
            return env[name] if name in env else CALLABLE[name]
        case ast.Lambda():
            return _closure(node, env)
        case ast.NamedExpr(target=ast.Name(id=name), value=v):  # binds for the rest of the lambda's body
            env[name] = interpret(v, env)
            return env[name]
        case ast.Subscript(value=v, slice=s):
            return interpret(v, env)[interpret(s, env)]
        case ast.Slice(lower=lo, upper=hi, step=st):
            return slice(*(None if x is None else interpret(x, env) for x in (lo, hi, st)))
        case ast.Attribute(value=v, attr=attr):
            return getattr(interpret(v, env), attr)
        case ast.Call(func=f, args=args, keywords=kws):
            fn = interpret(f, env)
            return _bounded(
                fn(*(interpret(a, env) for a in args), **{k.arg: interpret(k.value, env) for k in kws})
            )
        case ast.Compare(left=left, ops=ops, comparators=rights):
            a = interpret(left, env)
            for op, r in zip(ops, rights, strict=True):
                b = interpret(r, env)
                if not _CMPOPS[type(op)](a, b):
                    return False
                a = b
            return True
        case ast.BoolOp(op=op, values=values):
            out: Any = isinstance(op, ast.And)
            for v in values:
                out = interpret(v, env)
                if (isinstance(op, ast.And) and not out) or (isinstance(op, ast.Or) and out):
                    return out
            return out
        case ast.UnaryOp(op=op, operand=x):
            return _UNARY[type(op)](interpret(x, env))
        case ast.BinOp(op=op, left=left, right=right):
            a, b = interpret(left, env), interpret(right, env)
            if isinstance(op, ast.Pow) and isinstance(b, int | float) and abs(b) > MAX_POWER:
                raise PredicateError(f"an exponent of {b} is over the limit of {MAX_POWER}")
            if isinstance(op, ast.Mult):  # a repeated sequence: sized before it is built
                for seq, k in ((a, b), (b, a)):
                    if (
                        isinstance(seq, str | list | tuple)
                        and isinstance(k, int)
                        and len(seq) * k > MAX_SEQUENCE
                    ):
                        raise PredicateError(f"a repeated sequence of {len(seq) * k} items is over the limit")
            return _bounded(_BINOPS[type(op)](a, b))
        case ast.IfExp(test=t, body=b, orelse=o):
            return interpret(b, env) if interpret(t, env) else interpret(o, env)
        case ast.List(elts=elts):
            return [interpret(e, env) for e in elts]
        case ast.Tuple(elts=elts):
            return tuple(interpret(e, env) for e in elts)
        case ast.Set(elts=elts):
            return {interpret(e, env) for e in elts}
        case ast.Dict(keys=keys, values=values):
            return {
                interpret(k, env): interpret(v, env)
                for k, v in zip(keys, values, strict=True)
                if k is not None
            }
        case ast.ListComp() | ast.GeneratorExp() | ast.SetComp() | ast.DictComp():
            return _comprehension(node, env)
    raise PredicateError(f"cannot evaluate {type(node).__name__}")  # unreachable after _check


def _comprehension(node: Any, env: dict[str, Any]) -> Any:
    results: list[Any] = []

    def walk(i: int, scope: dict[str, Any]) -> None:
        if i == len(node.generators):
            if isinstance(node, ast.DictComp):
                results.append((interpret(node.key, scope), interpret(node.value, scope)))
            else:
                results.append(interpret(node.elt, scope))
            if len(results) > MAX_SEQUENCE:
                raise PredicateError(f"a comprehension of more than {MAX_SEQUENCE} items")
            return
        gen = node.generators[i]
        for item in interpret(gen.iter, scope):
            inner = {**scope, **_bind(gen.target, item)}
            if all(interpret(c, inner) for c in gen.ifs):
                walk(i + 1, inner)

    walk(0, env)
    if isinstance(node, ast.SetComp):
        return set(results)
    if isinstance(node, ast.DictComp):
        return dict(results)
    return results


def _bind(target: ast.AST, value: Any) -> dict[str, Any]:
    if isinstance(target, ast.Name):
        return {target.id: value}
    items = list(value)
    elts = target.elts  # type: ignore[attr-defined]
    if len(items) != len(elts):
        raise PredicateError(f"cannot unpack {len(items)} values into {len(elts)} names")
    out: dict[str, Any] = {}
    for t, v in zip(elts, items, strict=True):
        out.update(_bind(t, v))
    return out
