"""Loads our SQLAlchemy plugins through a database URL, as oslo.db does with
heat.conf's [database] connection_parameters, and prints as JSON how many
entry-point scans SQLAlchemy made and which class each name resolved to,
for TestPluginLookup (internal/heatdir/python_test.go).

argv: the heat_dir, then the connection_parameters value.
"""
import configparser
import json
import os
import sys

import sqlalchemy
from sqlalchemy.dialects import plugins
from sqlalchemy.util import compat

heat_dir, params = sys.argv[1:3]
scans = []
orig_get = compat.importlib_metadata_get


def counting_get(group):
    scans.append(group)
    return orig_get(group)


compat.importlib_metadata_get = counting_get

# What the distributions in the heat_dir declare: name -> "module:Class".
declared = {}
pydir = os.path.join(heat_dir, "python")
for entry in sorted(os.listdir(pydir)):
    if entry.endswith(".dist-info"):
        cp = configparser.ConfigParser()
        cp.optionxform = str
        cp.read(os.path.join(pydir, entry, "entry_points.txt"))
        declared.update(cp["sqlalchemy.plugins"])

url = "sqlite:///%s?%s" % (os.path.join(heat_dir, "lookup.sqlite"), params)
engine = sqlalchemy.create_engine(url)
engine.dispose()
names = [p.split("=", 1)[1] for p in params.split("&")]
resolved = {}
for name in names:
    cls = plugins.load(name)
    resolved[name] = "%s:%s" % (cls.__module__, cls.__name__)
print(json.dumps({"scans": len(scans), "names": names,
                  "declared": declared, "resolved": resolved}))
