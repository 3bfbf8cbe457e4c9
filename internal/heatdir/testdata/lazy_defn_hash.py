"""Exercises lazy_defn_hash (python/ephemeral_heat_engine.py) on Heat's own
template parser and resource definitions, and prints what it saw as JSON,
for TestLazyDefnHash (internal/heatdir/python_test.go).

argv: the plugin name, then the mode: "on" (Heat as installed) or "guard"
(ResourceDefinition.__hash__ replaced by one that is not its _hash).
"""
import copy
import json
import sys

from heat.engine import scheduler  # noqa: F401 (a Heat engine process)
from heat.common import context
from heat.engine import environment
from heat.engine import resources
from heat.engine import rsrc_defn
from heat.engine import stack as parser
from heat.engine import template
from oslo_config import cfg
from sqlalchemy.engine import url as sa_url

import ephemeral_heat_engine as ehe
import plugin_warnings

plugin, mode = sys.argv[1:3]
cfg.CONF([], project="heat", default_config_files=[])
warnings = plugin_warnings.collect()
resources.initialise()
out = {}
RD = rsrc_defn.ResourceDefinition

# Every section Heat hashes, with functions (a macro, if, among them) and
# without; three resources with one definition (a set keeps one of them);
# an external id, for which Heat sets the deletion policy to Retain after
# hashing the one given.
member = {
    "type": "OS::Heat::Value",
    "properties": {
        "value": {"list_join": [",", [{"get_param": "names"}, "x"]]},
        "type": "string",
    },
}
TEMPLATE = {
    "heat_template_version": "wallaby",
    "parameters": {
        "names": {"type": "comma_delimited_list", "default": "a,b"},
        "flag": {"type": "boolean", "default": True},
        "maps": {"type": "json", "default": {"k": [1, 2.5, None, True]}},
    },
    "conditions": {"on": {"get_param": "flag"}},
    "resources": {
        "one": member, "two": copy.deepcopy(member),
        "three": copy.deepcopy(member),
        "full": {
            "type": "OS::Heat::Value",
            "properties": {
                "value": {"if": ["on", {"get_param": "maps"}, {"a": 1}]},
                "type": "json",
            },
            "metadata": {"m": {"str_replace": {
                "template": "H-%i", "params": {"%i": {"get_attr": ["one", "value"]}}}}},
            "depends_on": ["two"],
            "deletion_policy": "Delete",
            "update_policy": {"p": [1, {"q": "r"}]},
            "condition": "on",
        },
        "adopted": {
            "type": "OS::Heat::None",
            "external_id": "3c9cb1d0-6a5e-4a59-a0d5-9e4b9c2f3c6e",
            "deletion_policy": "Delete",
        },
        "bare": {"type": "OS::Heat::None"},
    },
}
ctx = context.RequestContext(is_admin=True, project_id="p", user_id="u")


def definitions(tmpl=TEMPLATE):
    """A fresh parse: every definition, frozen, reparsed and deep-copied."""
    t = template.Template(copy.deepcopy(tmpl), env=environment.Environment({}))
    stack = parser.Stack(ctx, "lazy", t)
    defns = t.resource_definitions(stack)
    got = {}
    for name in sorted(defns):
        d = defns[name]
        got[name] = d
        got[name + ".frozen"] = d.freeze()
        got[name + ".reparsed"] = d.reparse(stack, t)
        got[name + ".copied"] = copy.deepcopy(d)
    return stack, got


# Count Heat's hashing walks: every call of rsrc_defn._hash_data, outermost
# and recursive (the lever finds this function as Heat's).
walks = [0]
heat_hash_data = rsrc_defn._hash_data


def counted_hash_data(data):
    walks[0] += 1
    return heat_hash_data(data)


rsrc_defn._hash_data = counted_hash_data



def distinct(defns):
    """How many of the parsed definitions a set keeps (Stack.validate's use)."""
    return len(set(d for n, d in defns.items() if "." not in n))


def unhashable():
    """A definition Heat cannot hash (a set: no JSON or YAML template yields
    one)."""
    return RD("odd", "OS::Heat::None", properties={"a": {1, 2}})


# Heat's answers, before the lever.
walks[0] = 0
_, heat_defns = definitions()
out["heat_build_walks"] = walks[0]
heat = {n: hash(d) for n, d in heat_defns.items()}
out["heat_distinct"] = distinct(heat_defns)
try:
    unhashable()
    out["heat_unhashable"] = "built"
except TypeError as e:
    out["heat_unhashable"] = "TypeError: %s" % e

if mode == "guard":
    def other_hash(self):
        return id(self)

    RD.__hash__ = other_hash

ehe.LazyDefnHash(sa_url.make_url("sqlite:///x?plugin=" + plugin), {})
out["on"] = ehe._applied.get("lazy_defn_hash")
out["warnings"] = list(warnings)
if mode == "guard":
    out["left_unchanged"] = RD.__hash__ is other_hash and \
        rsrc_defn._hash_data is counted_hash_data
    print(json.dumps(out))
    sys.exit(0)
out["replaced"] = rsrc_defn._hash_data is not counted_hash_data

# Built with the lever: no walk until a hash is asked for.
walks[0] = 0
_, defns = definitions()
out["build_walks"] = walks[0]
got = {n: hash(d) for n, d in defns.items()}
out["hash_walks"] = walks[0]
out["names"] = sorted(got)
out["equal_heat"] = [n for n in sorted(got) if got[n] != heat[n]]
# The value is kept: asking again walks nothing.
walks[0] = 0
out["again_equal"] = all(hash(d) == got[n] for n, d in defns.items())
out["again_walks"] = walks[0]
out["distinct"] = distinct(defns)
out["retain"] = defns["adopted"]._deletion_policy
# What Heat fails to build is built with the lever, and each hash of it
# fails the same way.
odd = unhashable()
out["unhashable"] = []
for _ in range(2):
    try:
        hash(odd)
        out["unhashable"].append("hashed")
    except TypeError as e:
        out["unhashable"].append("TypeError: %s" % e)

# Heat's own use: a stack's validation puts its definitions in a set (an
# update policy OS::Heat::Value accepts: none).
valid = copy.deepcopy(TEMPLATE)
del valid["resources"]["full"]["update_policy"]
stack, _ = definitions(valid)
stack.validate()
out["validated"] = True
print(json.dumps(out))
