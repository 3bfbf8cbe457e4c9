"""Exercises yaql_cache (python/ephemeral_heat_engine.py) on Heat's own yaql
function, and prints what it saw as JSON, for TestYaqlCache
(internal/heatdir/python_test.go).

argv: the plugin name, then the mode: "on" (Heat as installed) or "guard"
(Yaql.result replaced by one that does not evaluate in a child context).
"""
import collections
import json
import sys

from heat.engine import scheduler  # noqa: F401 (a Heat engine process)
from heat.engine.hot import functions as hot_functions
from oslo_config import cfg
from sqlalchemy.engine import url as sa_url
from yaql.language import expressions

import ephemeral_heat_engine as ehe
import plugin_warnings

plugin, mode = sys.argv[1:3]
cfg.CONF([], project="heat", default_config_files=[])
warnings = plugin_warnings.collect()
out = {}
Yaql = hot_functions.Yaql


def yaql(expression, data):
    return Yaql(None, "yaql", {"expression": expression, "data": data})


# What Heat itself answers, before the lever: (expression, data) cases whose
# data differ only in type, order or nesting, so a cache keyed too loosely
# answers one with another's result.
cases = [
    ("$.data.x", {"x": 1}),
    ("$.data.x", {"x": 1.0}),
    ("$.data.x", {"x": True}),
    ("$.data.x", {"x": "1"}),
    ("$.data.x.keys()", {"x": {"a": 1, "b": 2}}),
    ("$.data.x.keys()", {"x": {"b": 2, "a": 1}}),
    ("$.data.x.len()", {"x": [1, [2, 3]]}),
    ("$.data.x.len()", {"x": [[1, 2], 3, 4]}),
    ("$.data.l.where($ != null).select($ * 2)", {"l": [1, None, 3]}),
    ("dict($.data.m.items().select([$[0], $[1].k]))",
     {"m": {"a": {"k": [1]}, "b": {"k": "v"}}}),
    ("$.data.x.toUpper()", {"x": "abc"}),
    ("$.data.x", {"x": None}),
    ("$.data", {}),
]


def results(calls=2):
    got = []
    for expr, data in cases:
        for _ in range(calls):
            v = yaql(expr, data).result()
            got.append([v, type(v).__name__])
    return got


heat = results(1)


def errors():
    """What each failing expression raises, twice: Heat's error each time
    (a non-string expression, a parse error, a method yaql lacks)."""
    got = []
    for expr in ("$.data.x.nosuchfunction()", "$.data.(", 7):
        for _ in range(2):
            try:
                yaql(expr, {"x": 1}).result()
                got.append("no error")
            except Exception as e:
                got.append("%s: %s" % (type(e).__name__, e))
    return got


heat_errors = errors()

if mode == "guard":
    def result(self):
        statement = self._parse(self._expression)
        return statement.evaluate({"data": self._data}, self._context)
    Yaql.result = result

# Count evaluations: every miss evaluates the parsed statement once.
evaluations = [0]
orig_evaluate = expressions.Statement.evaluate


def evaluate(self, *args, **kwargs):
    evaluations[0] += 1
    return orig_evaluate(self, *args, **kwargs)


expressions.Statement.evaluate = evaluate
parses = [0]
orig_parse = Yaql._parse


def counted_parse(self, expression):
    parses[0] += 1
    return orig_parse(self, expression)


Yaql._parse = counted_parse

ehe.YaqlCache(sa_url.make_url("sqlite:///x?plugin=" + plugin), {})
out["on"] = ehe._applied.get("yaql_cache")
out["warnings"] = list(warnings)
if mode == "guard":
    out["left_unchanged"] = Yaql.result is result and \
        Yaql._parse is counted_parse
    print(json.dumps(out))
    sys.exit(0)

# Each case twice: the second from the cache, equal to Heat's answer, type too.
evaluations[0] = 0
got = results(2)
out["equal_heat"] = all(got[2 * i] == heat[i] and got[2 * i + 1] == heat[i]
                        for i in range(len(cases)))
out["evaluations"] = evaluations[0]
out["cases"] = len(cases)

# A hit is a fresh copy: changing an answer leaves the next one intact.
f = yaql("$.data.l.select($ + 1)", {"l": [1, 2]})
first = f.result()
first.append(99)
out["copy_intact"] = f.result()

# now(), random() and call() (now() by a name from the data) are evaluated
# every time.
evaluations[0] = 0
for _ in range(3):
    yaql("now()", {}).result()
    yaql("$.data.x + random()", {"x": 1}).result()
    yaql("call($.data.f, [], {})", {"f": "now"}).result()
out["impure_evaluations"] = evaluations[0]

# Data marshal refuses (a str or int subclass: Heat's resolve turns other
# mappings and sequences into dicts and lists) are not cached; an
# OrderedDict reaches yaql as a dict, and is.


class Name(str):
    pass


class Count(int):
    pass


evaluations[0] = 0
refused = []
for _ in range(2):
    refused.append(yaql("$.data.x", {"x": Name("n")}).result())
    refused.append(yaql("$.data.x + 1", {"x": Count(1)}).result())
out["refused_evaluations"] = evaluations[0]
out["refused_results"] = refused
evaluations[0] = 0
for _ in range(2):
    refused.append(yaql("$.data.o.keys()",
                        {"o": collections.OrderedDict(a=1)}).result())
out["ordered_evaluations"] = evaluations[0]

# An expression that fails raises Heat's error each time.
out["errors"] = errors()
out["errors_equal_heat"] = out["errors"] == heat_errors

# The parse is kept: the same text is parsed by Heat once.
parses[0] = 0
for _ in range(3):
    yaql("$.data.k.sum()", {"k": [1, 2]}).validate()
    yaql("$.data.k.sum()", {"k": [1, 2]}).result()
out["parses"] = parses[0]

# The kept results stay under the byte bound, least recently used first out.
ehe_max = 20000
ehe._YAQL_CACHE_MAX_BYTES = ehe_max
evaluations[0] = 0
big = "x" * 4000
for i in range(10):
    yaql("$.data.s", {"s": big, "i": i}).result()
yaql("$.data.s", {"s": big, "i": 9}).result()  # most recent: kept
yaql("$.data.s", {"s": big, "i": 0}).result()  # oldest: gone
out["bounded_evaluations"] = evaluations[0]
print(json.dumps(out, default=sorted))  # a yaql set as a sorted list
