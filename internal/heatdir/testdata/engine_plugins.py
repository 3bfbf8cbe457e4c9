"""Exercises python/ephemeral_heat_engine.py the way Heat loads it (oslo.db's
create_engine with [database] connection_parameters) and prints what it
saw as JSON, for TestEnginePlugins (internal/heatdir/python_test.go).

argv: a scratch directory, then the plugin names (ping, indexes, cache,
wakeup) in that order.
"""
import json
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
import plugin_warnings

work, ping_plugin, index_plugin, cache_plugin, wakeup_plugin, rpc_plugin, \
    legacy_plugin, env_copy_plugin, show_cache_plugin, provider_plugin = \
    sys.argv[1:11]
out = {}

warnings = plugin_warnings.collect()

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

# env_copy: RawTemplate.from_db_object still copies the environment
# (a copy equal to it, sharing nothing mutable with the database row's);
# a value pickle cannot copy goes to copy.deepcopy. When from_db_object no
# longer copies with copy.deepcopy it stays off with one warning.
from heat.objects import raw_template as heat_raw_template  # noqa: E402
import copy as copy_module  # noqa: E402

real_from_db = heat_raw_template.RawTemplate.from_db_object
heat_raw_template.RawTemplate.from_db_object = staticmethod(
    lambda context, tpl, db_tpl: tpl)
ehe._apply_once("env_copy", ehe._env_copy)
out["env_copy_guard_left_unchanged"] = heat_raw_template.copy is copy_module
out["env_copy_guard_warnings"] = [w for w in warnings if "env_copy" in w]
heat_raw_template.RawTemplate.from_db_object = real_from_db
ehe._applied.pop("env_copy")
session_statements("plugin=%s" % env_copy_plugin)
out["env_copy_on"] = heat_raw_template.copy is not copy_module


class Row(dict):
    pass


shared = {"fixed_ips": [{"ip_address": "192.168.24.10"}]}
env = {"parameters": {}, "encrypted_param_names": [],
       "parameter_defaults": {"HostnameMap": {"a": "b"},
                              "PortA": shared, "PortB": shared,
                              "Odd": (1, 2), "Float": 1.5, "Null": None},
       "resource_registry": {"OS::X": "x.yaml"}}
row = Row(id=1, files=None, files_id=None, template={"heat_template_version":
                                                   "wallaby"},
          environment=env)
tpl = heat_raw_template.RawTemplate.from_db_object(
    None, heat_raw_template.RawTemplate(), row)
pd = tpl.environment["parameter_defaults"]
out["env_copy_equal"] = tpl.environment == env
out["env_copy_independent"] = (tpl.environment is not env and
                               pd is not env["parameter_defaults"] and
                               pd["PortA"] is not shared)
out["env_copy_sharing_kept"] = pd["PortA"] is pd["PortB"]
out["env_copy_tuple_kept"] = type(pd["Odd"]) is tuple


class Unpicklable(object):
    def __reduce__(self):
        raise TypeError("no pickling")

    def __deepcopy__(self, memo):
        return "deep-copied"


row["environment"] = {"parameter_defaults": {"x": Unpicklable()}}
tpl = heat_raw_template.RawTemplate.from_db_object(
    None, heat_raw_template.RawTemplate(), row)
out["env_copy_fallback"] = tpl.environment["parameter_defaults"]["x"]

# show_cache: with a sqlite database, EngineService.show_stack answers a
# repeated question from its last answer (a fresh copy) until a statement
# other than SELECT runs on the database; a stack IN_PROGRESS, or an answer
# computed while something was written, is not kept; another database
# (MySQL: several processes) leaves it off.
from heat.engine import service as heat_service  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

shown = []
in_progress = [False]


def fake_show(self, cnxt, stack_identity, resolve_outputs=True):
    shown.append(stack_identity["stack_id"])
    if stack_identity["stack_id"] == "writes":
        with cache_engine.begin() as conn:
            conn.execute(text("INSERT INTO parent (id) VALUES (%d)"
                              % (100 + len(shown))))
    status = "CREATE_IN_PROGRESS" if in_progress[0] else "CREATE_COMPLETE"
    return [{"stack_status": status,
             "outputs": [{"output_key": "k", "output_value": [1, 2]}]}]


heat_service.EngineService.show_stack = fake_show
out["show_cache_mysql"] = ehe.show_cache_applies(
    make_url("mysql+pymysql://u:p@127.0.0.1/heat"))
cache_engine = engines.create_engine(
    "sqlite:///" + db, connection_parameters="plugin=%s" % show_cache_plugin,
    max_retries=0)
out["show_cache_on"] = heat_service.EngineService.show_stack is not fake_show


class Ctx(object):
    tenant_id, user_id, is_admin, show_deleted = "t", "u", False, False


svc = heat_service.EngineService.__new__(heat_service.EngineService)
ident = {"stack_name": "s", "stack_id": "one", "tenant": "t", "path": ""}
first = svc.show_stack(Ctx(), ident)
first[0]["outputs"][0]["output_value"].append("mutated by a caller")
second = svc.show_stack(Ctx(), dict(ident))
out["show_cache_calls_after_repeat"] = len(shown)
out["show_cache_copy_intact"] = second[0]["outputs"][0]["output_value"]
svc.show_stack(Ctx(), ident, resolve_outputs=False)
other = Ctx()
other.tenant_id = "other"
svc.show_stack(other, ident)
out["show_cache_calls_other_questions"] = len(shown)
with cache_engine.connect() as conn:
    conn.execute(text("SELECT count(*) FROM parent"))
svc.show_stack(Ctx(), ident)
out["show_cache_calls_after_select"] = len(shown)
with cache_engine.begin() as conn:
    conn.execute(text("INSERT INTO parent (id) VALUES (1)"))
svc.show_stack(Ctx(), ident)
out["show_cache_calls_after_write"] = len(shown)
w = dict(ident, stack_id="writes")
svc.show_stack(Ctx(), w)
svc.show_stack(Ctx(), w)
in_progress[0] = True
p = dict(ident, stack_id="busy")
svc.show_stack(Ctx(), p)
svc.show_stack(Ctx(), p)
out["show_cache_calls_end"] = len(shown)
cache_engine.dispose()

# provider_unchanged: when StackUpdate's per-resource update is not the
# generator it was written against, it stays off with one warning; with
# Heat's own internals it goes on. A resource its check cannot place (not
# in the existing stack) and one whose check raises (logged once) go to
# Heat's own update, unchanged.
real_process = heat_update.StackUpdate._process_new_resource_update
heat_update.StackUpdate._process_new_resource_update = \
    lambda self, new_res: None
ehe._apply_once("provider_unchanged", ehe._provider_unchanged)
out["provider_guard_left_unchanged"] = \
    heat_update.StackUpdate._process_new_resource_update is not real_process
out["provider_guard_warnings"] = [w for w in warnings
                                  if "provider_unchanged" in w]
heat_update.StackUpdate._process_new_resource_update = real_process
ehe._applied.pop("provider_unchanged")
session_statements("plugin=%s" % provider_plugin)
process = heat_update.StackUpdate._process_new_resource_update
out["provider_on"] = process is not real_process
to_heat = []


def recorded(self, new_res):
    to_heat.append(new_res.name)
    yield


for cell in process.__closure__ or ():
    if cell.cell_contents is real_process:
        cell.cell_contents = recorded


class Upd(object):
    rollback = False

    def __init__(self, existing):
        self.existing_stack = existing
        self.new_stack = type("S", (), {"converge": False})()
        self.existing_snippets = {"raises": None}


class NewRes(object):
    def __init__(self, name):
        self.name = name


class Existing(dict):
    convergence = False


class Raises(Existing):
    def __getitem__(self, name):
        raise RuntimeError("cannot load " + name)


before = len(warnings)
list(process(Upd(Existing()), NewRes("absent")))
list(process(Upd(Raises(raises=1)), NewRes("raises")))
list(process(Upd(Raises(raises=1)), NewRes("raises")))
out["provider_to_heat"] = to_heat
out["provider_check_warnings"] = [w for w in warnings[before:]
                                  if "provider_unchanged" in w]

print(json.dumps(out))
