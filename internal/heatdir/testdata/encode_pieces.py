"""Feeds template_store's piece encoder (_encode_pieces in
python/ephemeral_heat_engine.py) a sequence of documents, each encoded with
the previous one's pieces as a store would, and prints as JSON, per step,
whether its text equals Heat's encoding of the whole document
(heat.db.sqlalchemy.types.dumps) and how many dicts and lists it encoded
(entries, or the whole document), for
TestEncodePieces (internal/heatdir/python_test.go).
"""
import collections
import copy
import datetime
import json

from heat.db.sqlalchemy import types

import ephemeral_heat_engine as ehe

calls = [0]


def counting_dumps(value):
    if type(value) in (dict, list):  # not the keys nor plain sections
        calls[0] += 1
    return types.dumps(value)


def member(i, **props):
    p = {"Index": i, "EndpointMap": {"Keystone": {"host": "h%d" % i,
                                                   "port": 5000}},
         "Tags": ["a", "b"]}
    p.update(props)
    return {"type": "OS::TripleO::Compute", "properties": p}


doc = {"heat_template_version": "2016-10-14",
       "resources": {str(i): member(i) for i in range(50)},
       "outputs": {"refs": {"value": [{"get_resource": str(i)}
                                      for i in range(50)]}}}
steps = []


def step(name, d):
    calls[0] = 0
    text, memo = ehe._encode_pieces(d, counting_dumps, step.memo)
    steps.append({"name": name, "equal": text == types.dumps(d),
                  "encoded": calls[0], "pieces": len(memo)})
    step.memo = memo


step.memo = None
step("first", doc)
step("unchanged", doc)
doc["resources"]["50"] = member(50)
step("member_added", doc)
doc["resources"]["7"]["properties"]["Index"] = 7.0  # 7 == 7.0
step("int_to_float", doc)
doc["resources"]["7"]["properties"]["Index"] = True
doc["resources"]["1"]["properties"]["Index"] = True  # 1 == True
step("int_to_bool", doc)
doc["resources"]["3"]["properties"]["Tags"] = ("a", "b")  # list -> tuple
step("list_to_tuple", doc)
doc["resources"]["4"]["properties"]["EndpointMap"]["Keystone"]["port"] = 5001
step("nested_change", doc)
doc["resources"] = dict(reversed(list(doc["resources"].items())))
step("reordered", doc)
del doc["resources"]["9"]
step("member_removed", doc)
doc["resources"]["5"]["properties"]["When"] = datetime.datetime(2026, 1, 1)
step("not_marshallable", doc)
del doc["resources"]["5"]["properties"]["When"]
doc["resources"]["5"]["properties"]["What"] = collections.OrderedDict(a=1)
step("dict_subclass", doc)
del doc["resources"]["5"]["properties"]["What"]
step("back_to_plain", doc)
doc["outputs"][1] = {"value": "int key"}
step("int_key", doc)
del doc["outputs"][1]
doc["resources"]["6"]["properties"]["Name"] = u"n\u00e9\u4e2d\U0001f600"
doc["description"] = None
step("unicode_and_none", doc)
shared = {"host": "same"}
doc["resources"]["8"]["properties"]["A"] = shared
doc["resources"]["8"]["properties"]["B"] = shared  # shared object
step("shared_object", doc)
doc["resources"]["8"]["properties"]["B"] = copy.deepcopy(shared)
step("unshared_copy", doc)
doc["parameters"] = {}
step("empty_section", doc)
step("list_document", [1, {"a": 2}])
step("after_list", doc)
print(json.dumps(steps))
