"""Exercises static_dep_attrs (python/ephemeral_heat_engine.py) on Heat's own
template parser and stack definitions, and prints what it saw as JSON, for
TestStaticDepAttrs (internal/heatdir/python_test.go).

argv: the plugin name, then the mode: "on" (Heat as installed) or "guard"
(stk_defn.update_resource_data replaced by one that drops no memo first).
"""
import json
import logging
import sys

from heat.engine import scheduler  # noqa: F401 (a Heat engine process)
from heat.engine import environment
from heat.engine import resources
from heat.engine import stk_defn
from heat.engine import template
from heat.common import context
from oslo_config import cfg
from sqlalchemy.engine import url as sa_url

import ephemeral_heat_engine as ehe
import plugin_warnings

plugin, mode = sys.argv[1:3]
cfg.CONF([], project="heat", default_config_files=[])
logging.disable(logging.INFO)  # Heat's registry lists hidden types at INFO
warnings = plugin_warnings.collect()
out = {}

if mode == "guard":
    def update_resource_data(stack_definition, resource_name, resource_data):
        stack_definition._resource_data[resource_name] = resource_data
    stk_defn.update_resource_data = update_resource_data

# Loaded as Heat loads it: an entry point named in connection_parameters.
cls = getattr(ehe, "StaticDepAttrs")
cls(sa_url.make_url("sqlite:///x?plugin=" + plugin), {})
out["on"] = ehe._applied.get("static_dep_attrs")
out["warnings"] = list(warnings)
if mode == "guard":
    out["left_unchanged"] = stk_defn.update_resource_data is \
        update_resource_data
    print(json.dumps(out))
    sys.exit(0)

resources.initialise()
na = lambda **props: {"type": "OS::Heat::None", "properties": props}
tmpl = {
    "heat_template_version": "2016-10-14",
    "parameters": {"which": {"type": "string", "default": "a"}},
    "resources": {
        "a": na(),
        "b": na(),
        # Plain get_attr arguments, under other functions too: kept.
        "plain": na(p={"get_attr": ["a", "x", 0]}),
        "joined": na(p={"list_join": [",", [{"get_attr": ["a", "x"]},
                                            {"get_param": "which"}]]}),
        "repeated": na(p={"repeat": {"for_each": {"<%v%>": ["1", "2"]},
                                     "template": {"get_attr": ["a", "y"]}}}),
        # An attribute or resource name computed by a function: dropped.
        "computed_attr": na(p={"get_attr": ["a", {"get_attr": ["b", "n"]}]}),
        "computed_path": na(p={"get_attr": ["a", "x", {"get_attr": ["b", "n"]}]}),
        "computed_name": na(p={"get_attr": [{"get_param": "which"}, "x"]}),
        "meta_computed": {"type": "OS::Heat::None",
                          "metadata": {"m": {"get_attr": [
                              "a", {"get_attr": ["b", "n"]}]}}},
    },
    "outputs": {
        # A ResourceGroup's outputs: a list of every member's attribute.
        "group": {"value": [{"get_attr": ["a", "x"]},
                            {"get_attr": ["b", "x"]}]},
        "computed": {"value": {"get_attr": ["a", {"get_attr": ["b", "n"]}]}},
    },
}
t = template.Template(tmpl, env=environment.Environment({}))
sd = stk_defn.StackDefinition(context.RequestContext(is_admin=True), t,
                              None, {})
defns = {n: sd.resource_definition(n) for n in sd.enabled_rsrc_names()}
defns.update({"output " + n: sd.output_definition(n)
              for n in sd.enabled_output_names()})


def memos():
    for d in defns.values():
        for r in ("a", "b"):
            list(d.dep_attrs(r, load_all=True))  # Heat's memo, filled
    return {n: d._all_dep_attrs for n, d in defns.items()}


before = memos()
stk_defn.update_resource_data(sd, "a", None)
out["kept_after_a"] = sorted(n for n, d in defns.items()
                             if d._all_dep_attrs is not None)
kept = {n: d._all_dep_attrs for n, d in defns.items()
        if d._all_dep_attrs is not None}
# What a kept memo says is what Heat computes again from scratch.
same = True
for n, d in defns.items():
    d._all_dep_attrs = None
    fresh = {r: set(d.dep_attrs(r, load_all=True)) for r in ("a", "b")}
    if n in kept and {r: set(kept[n][r]) for r in ("a", "b")} != fresh:
        same = False
out["kept_equal_heat"] = same
memos()
stk_defn.update_resource_data(sd, "b", None)
out["kept_after_b"] = sorted(n for n, d in defns.items()
                             if d._all_dep_attrs is not None)
out["data_stored"] = sorted(sd._resource_data)


# A definition it cannot look at (no __dict__ for its mark): nothing is
# kept, Heat's own function still runs, one warning.
class Slotted:
    __slots__ = ("_all_dep_attrs",)

    def required_resource_names(self):
        return {"a"}


odd = Slotted()
odd._all_dep_attrs = {"a": {"x"}}
sd._resource_defns["odd"] = odd
memos()
stk_defn.update_resource_data(sd, "a", "data")
out["odd_dropped"] = odd._all_dep_attrs is None
out["odd_data_stored"] = sd._resource_data.get("a") == "data"
out["odd_warnings"] = warnings
print(json.dumps(out))
