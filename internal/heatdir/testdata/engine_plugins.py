"""Exercises python/ephemeral_heat_engine.py the way Heat loads it (oslo.db's
create_engine with [database] connection_parameters) and prints what it
saw as JSON, for TestEnginePlugins (internal/heatdir/python_test.go).

argv: a scratch directory, then the plugin names (ping, indexes, cache,
wakeup) in that order.
"""
import json
import logging
import os
import sqlite3
import sys

import eventlet
eventlet.monkey_patch(os=False)

from heat.engine import service  # noqa: F401 (a Heat engine process)
from heat.engine import scheduler
from heat.engine import stack as stack_mod
from oslo_db.sqlalchemy import engines
from sqlalchemy import event, text

import ephemeral_heat_engine as ehe

work, ping_plugin, index_plugin, cache_plugin, wakeup_plugin, rpc_plugin, \
    legacy_plugin = sys.argv[1:8]
out = {}

warnings = []


class Collect(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.WARNING:
            warnings.append(record.getMessage())


logging.getLogger("ephemeral_heat_engine").addHandler(Collect())

# A schema with foreign keys: one without an index, one with, one that is
# the first column of the primary key.
db = os.path.join(work, "fk.sqlite")
c = sqlite3.connect(db)
c.executescript("""
CREATE TABLE parent (id INTEGER PRIMARY KEY);
CREATE TABLE child (id INTEGER PRIMARY KEY,
                    parent_id INTEGER REFERENCES parent(id),
                    other_id INTEGER REFERENCES parent(id));
CREATE INDEX ix_child_other ON child (other_id);
CREATE TABLE pk_child (parent_id INTEGER REFERENCES parent(id), n INTEGER,
                       PRIMARY KEY (parent_id, n));
""")
c.close()


def session_statements(params):
    e = engines.create_engine("sqlite:///" + db, connection_parameters=params,
                              max_retries=0)
    seen = []
    event.listen(e, "before_cursor_execute",
                 lambda conn, cur, stmt, *a: seen.append(stmt))
    with e.connect() as conn:
        conn.execute(text("SELECT count(*) FROM child"))
    e.dispose()
    return seen


def indexes():
    c = sqlite3.connect(db)
    try:
        return sorted(r[0] for r in c.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' "
            "AND name NOT LIKE 'sqlite_%'"))
    finally:
        c.close()


# Stock first: once the ping lever is on, it is on in this process.
out["stock_statements"] = session_statements("")
out["stock_indexes"] = indexes()
out["plugin_statements"] = session_statements(
    "plugin=%s&plugin=%s" % (ping_plugin, index_plugin))
out["plugin_indexes"] = indexes()
# A second engine on the same file: nothing more to create, no error.
session_statements("plugin=%s" % index_plugin)
out["indexes_again"] = indexes()

# sql_cache_json marks Heat's Json column type cacheable.
from heat.db.sqlalchemy import types  # noqa: E402
out["json_cache_ok_before"] = types.Json.__dict__.get("cache_ok")
session_statements("plugin=%s" % cache_plugin)
out["json_cache_ok_after"] = types.Json.__dict__.get("cache_ok")

# task_wakeup: guarded. With a TaskRunner._sleep of another signature it
# stays off, logs one warning, and Heat keeps its own method.
odd = lambda self: None  # noqa: E731
real_sleep = scheduler.TaskRunner._sleep
scheduler.TaskRunner._sleep = odd
ehe._apply_once("task_wakeup", ehe._task_wakeup)
ehe._apply_once("task_wakeup", ehe._task_wakeup)
out["guard_left_unchanged"] = scheduler.TaskRunner._sleep is odd
out["guard_warnings"] = [w for w in warnings if "task_wakeup" in w]
scheduler.TaskRunner._sleep = real_sleep
ehe._applied.pop("task_wakeup")

# With Heat's own internals it goes on (loaded as Heat loads it).
session_statements("plugin=%s" % wakeup_plugin)
out["wakeup_on"] = scheduler.TaskRunner._sleep is not real_sleep
hooks = ehe._task_wakeup_hooks


def fake_stack(sid, owner, status):
    st = stack_mod.Stack.__new__(stack_mod.Stack)
    st.id, st.owner_id, st.status, st.name = sid, owner, status, sid
    return st


# A parent stack's task sleeps (wait_time 30 s); its nested stack stores a
# final state: the parent's sleep ends then, not 30 s later.
parent = fake_stack("parent", None, "IN_PROGRESS")
runner = scheduler.TaskRunner(parent.stack_task)
runner._sleep(30)  # the first sleep of a runner only yields (nothing seen)
t0 = eventlet.hubs.get_hub().clock()
sleeper = eventlet.spawn(runner._sleep, 30)
eventlet.sleep(0.2)
out["asleep_before_wake"] = not sleeper.dead
hooks["stored"](fake_stack("child", "parent", "COMPLETE"))
with eventlet.Timeout(10, False):
    sleeper.wait()
out["woken"] = sleeper.dead
out["woken_after_s"] = eventlet.hubs.get_hub().clock() - t0

# A resource of the stack changed state since its last sleep: the next
# sleep only yields.
hooks["changes"]["parent"] = 1
t0 = eventlet.hubs.get_hub().clock()
runner._sleep(30)
out["after_change_s"] = eventlet.hubs.get_hub().clock() - t0

# The previous step took a node off a dependency graph walked in this
# greenthread (an update's cleanup of its backup stack, resources it leaves
# unchanged), without any resource changing state: the next sleep only
# yields. A walk in another greenthread does not end this one's sleep.
from heat.engine import dependencies  # noqa: E402
eventlet.spawn(lambda: dependencies.Dependencies([("x", "y")]).graph().__delitem__("x")).wait()
t0 = eventlet.hubs.get_hub().clock()
runner._sleep(0.5)
out["other_greenthread_graph_s"] = eventlet.hubs.get_hub().clock() - t0
graph = dependencies.Dependencies([("a", "b")]).graph()
del graph["a"]
t0 = eventlet.hubs.get_hub().clock()
runner._sleep(30)
out["after_graph_step_s"] = eventlet.hubs.get_hub().clock() - t0

# Other TaskRunners (not a stack's) keep Heat's sleep.
other = scheduler.TaskRunner(lambda: None)
t0 = eventlet.hubs.get_hub().clock()
other._sleep(0.3)
out["other_runner_s"] = eventlet.hubs.get_hub().clock() - t0

# fake_rpc_wakeup: calls and casts through the fake driver are answered,
# in order, with the listener's poll replaced.
import oslo_messaging as om  # noqa: E402
from oslo_config import cfg  # noqa: E402
from oslo_messaging._drivers import impl_fake  # noqa: E402
stock_poll = impl_fake.FakeListener.poll
session_statements("plugin=%s" % rpc_plugin)
out["rpc_poll_replaced"] = impl_fake.FakeListener.poll is not stock_poll
transport = om.get_rpc_transport(cfg.CONF, url="fake://")
seen_casts = []


class Endpoint(object):
    def ping(self, ctx, x):
        return x + 1

    def note(self, ctx, x):
        seen_casts.append(x)


server = om.get_rpc_server(transport, om.Target(topic="t", server="s"),
                           [Endpoint()], executor="eventlet")
server.start()
client = om.get_rpc_client(transport, om.Target(topic="t", server="s"))
out["rpc_answers"] = [client.call({}, "ping", x=i) for i in range(5)]
for i in range(3):
    client.cast({}, "note", x=i)
with eventlet.Timeout(10, False):
    while len(seen_casts) < 3:
        eventlet.sleep(0.01)
out["rpc_casts"] = seen_casts
server.stop()
server.wait()

# legacy_update_outputs: with Heat's own internals it wraps the legacy
# update's snapshot of a resource's data, and drops a StackResource's
# cached outputs and resolved attributes first; a resource of another kind
# is passed on untouched. When StackResource no longer keeps _outputs it
# stays off with one warning.
from heat.engine import update as heat_update  # noqa: E402
from heat.engine.resources import stack_resource  # noqa: E402

real_update_data = heat_update.StackUpdate._update_resource_data
real_init = stack_resource.StackResource.__init__
stack_resource.StackResource.__init__ = lambda self, *a, **k: None
ehe._apply_once("legacy_update_outputs", ehe._legacy_update_outputs)
out["legacy_guard_left_unchanged"] = \
    heat_update.StackUpdate._update_resource_data is real_update_data
out["legacy_guard_warnings"] = [w for w in warnings
                                if "legacy_update_outputs" in w]
stack_resource.StackResource.__init__ = real_init
ehe._applied.pop("legacy_update_outputs")
session_statements("plugin=%s" % legacy_plugin)
out["legacy_on"] = \
    heat_update.StackUpdate._update_resource_data is not real_update_data
seen = []
calls = []


class Attrs(object):
    def reset_resolved_values(self):
        calls.append("reset")


class Nested(stack_resource.StackResource):
    def __new__(cls):  # Heat's Resource.__new__ picks a class from a stack
        return object.__new__(cls)

    def __init__(self):
        pass


nested = Nested()
nested._outputs = {"out": {"output_value": "old"}}
nested.attributes = Attrs()
plain = object()
wrapped = heat_update.StackUpdate._update_resource_data
# Call the wrapper with Heat's original (in its closure) replaced by a
# recorder.
for cell in wrapped.__closure__ or ():
    if cell.cell_contents is real_update_data:
        cell.cell_contents = lambda self, r: seen.append(r)
wrapped(None, nested)
wrapped(None, plain)
out["legacy_nested_outputs_after"] = nested._outputs
out["legacy_resets"] = calls
out["legacy_passed_on"] = [r is nested or r is plain for r in seen]

print(json.dumps(out))
