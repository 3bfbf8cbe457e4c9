"""Exercises gc_pace (python/ephemeral_heat_engine.py) on this interpreter's
own collector, and prints what it saw as JSON, for TestGCPace
(internal/heatdir/python_test.go).

argv: the mode: "on" (the collector as Python starts it) or "disabled"
(gc.disable() before the plugin loads).
"""
import gc
import json
import sys
import weakref

from sqlalchemy.engine import url as sa_url

import ephemeral_heat_engine as ehe
import plugin_warnings

mode = sys.argv[1]
warnings = plugin_warnings.collect()
out = {"defaults": list(gc.get_threshold())}
if mode == "disabled":
    gc.disable()

# Loaded as Heat loads it, by two engines of one process: one pacer.
for _ in range(2):
    ehe.GCPace(sa_url.make_url("sqlite:///x?plugin=ephemeral_heat_gc_pace"),
               {})
pacers = [c for c in gc.callbacks if isinstance(c, ehe._GCPace)]
out["on"] = ehe._applied.get("gc_pace")
out["pacers"] = len(pacers)
out["warnings"] = list(warnings)
if mode == "disabled":
    out["enabled_after"] = gc.isenabled()
    print(json.dumps(out))
    sys.exit(0)
pace = pacers[0]


def threshold():
    return gc.get_threshold()[2]


def full_collections():
    return gc.get_stats()[2]["collections"]


# A full collection of this small heap, on the real clock, is short.
gc.collect()
out["after_short_real"] = threshold()

# From here a fake clock: a callback ahead of the pacer makes each full
# collection take took[0] seconds.
now = [1000.0]
took = [0.0]
pace.clock = lambda: now[0]


def advance(phase, info):
    if phase == "stop" and info["generation"] == 2:
        now[0] += took[0]


gc.callbacks.insert(0, advance)


class Node(object):
    pass


def orphan():
    """A cycle in the oldest generation, which only a full collection frees."""
    a, b = Node(), Node()
    a.b, b.a = b, a
    gc.collect(1)  # survivors of the young generations move to the oldest
    return weakref.ref(a)


def churn():
    """Objects promoted to the oldest generation, many times a quarter of it:
    Python's own rule wants full collections."""
    for _ in range(8):
        keep = [[i] for i in range(200000)]
        del keep


# 1. A full collection of 2 s: the next waits 19 times as long (5 %).
took[0] = 2.0
gc.collect()
out["held_threshold"] = threshold()
out["hold_seconds"] = pace.until - now[0]

# 2. Within the hold: no full collection, the orphan stays.
ref = orphan()
before = full_collections()
churn()
out["held_full_collections"] = full_collections() - before
out["held_orphan_alive"] = ref() is not None
out["held_threshold_after_churn"] = threshold()

# 3. After the hold: Python's rule collects it, and holds again (2 s).
now[0] += 38.5
before = full_collections()
churn()
out["released_full_collections"] = full_collections() - before
out["released_orphan_alive"] = ref() is not None
out["released_threshold_after_churn"] = threshold()

# 4. A short full collection ends any hold.
took[0] = 0.01
gc.collect()
out["after_short_fake"] = threshold()
out["after_short_until"] = pace.until

# 5. A very long one holds 60 s at most.
took[0] = 10.0
gc.collect()
out["long_hold_seconds"] = pace.until - now[0]
took[0] = 0.0
gc.collect()
out["final_threshold"] = threshold()
out["warnings_after"] = list(warnings)

# 6. A pacer that fails inside the collector stops pacing, once, and gives
# Python back its threshold.
took[0] = 2.0
gc.collect()
out["before_failure_threshold"] = threshold()


def broken():
    raise RuntimeError("clock")


pace.clock = broken
gc.collect(1)
gc.collect(1)
out["failed_off"] = pace.off
out["failed_threshold"] = threshold()
out["failed_warnings"] = list(warnings)
print(json.dumps(out))
