"""ephemeral.heat: levers on Heat's engine, each a SQLAlchemy engine plugin.

The launcher writes this file to <heat_dir>/python (on the PYTHONPATH of
heat-all, heat-engine and heat-manage) and heat.conf names the levers it
wants among the plugins of [database] connection_parameters, e.g.

    [database]
    connection_parameters = plugin=ephemeral_heat_task_wakeup

A SQLAlchemy engine plugin (the documented CreateEnginePlugin hook) is the
one place where heat.conf makes Heat run code of ours without a path:
oslo.db creates Heat's database engine when Heat first uses its database,
in every Heat process, before any stack operation. Each lever changes one
thing, once per process, and only after checking that Heat's internals are
the ones it was written against (Heat 19, wallaby's heat-all): otherwise it
logs one warning and leaves Heat unchanged. What each lever does and costs
is in internal/tuning/tuning.go and bench/results.md. Importing this module
also drops one message from Heat's log (the manual RPC client warning,
below).
"""

import inspect
import marshal
import time
import logging
import sys

from sqlalchemy.engine import CreateEnginePlugin

LOG = logging.getLogger(__name__)

# marshal's format without references: equal bytes mean equal values of
# the same exact types, however the objects are shared (template_store's
# pieces, yaql_cache's keys and kept results).
_EXACT_MARSHAL = 2

_applied = {}


def _apply_once(name, patch):
    """Run patch() once per process; log its outcome once."""
    if name in _applied:
        return _applied[name]
    try:
        why_not = patch()
    except Exception as e:  # Heat differs: leave it unchanged.
        why_not = "%s: %s" % (type(e).__name__, e)
    _applied[name] = why_not is None
    if why_not is None:
        LOG.info("ephemeral.heat: %s is on", name)
    elif why_not:
        LOG.warning("ephemeral.heat: %s is off, Heat is left unchanged: %s",
                    name, why_not)
    return _applied[name]


def _require(obj, attr, params=None):
    """obj.attr must exist (with these leading parameters, if given)."""
    value = getattr(obj, attr)
    if params is not None:
        got = list(inspect.signature(value).parameters)[:len(params)]
        if got != list(params):
            raise TypeError("%s.%s%s is not %s" % (
                getattr(obj, "__name__", obj), attr, tuple(got), tuple(params)))
    return value


# --- plugin lookup ----------------------------------------------------------
#
# SQLAlchemy looks a URL's plugin up by name, and a name it has not loaded
# before costs a scan of the entry points of every installed distribution
# (importlib.metadata: about 37 ms on Debian 12's Heat), once per name:
# heat.conf names 16 of ours, so every Heat process (heat-all, each
# heat-engine, heat-manage) spent about half a second finding them. When
# this module is first imported (for the first of them), it gives SQLAlchemy
# the plugins that the distributions beside it declare, as that scan would
# find them (this directory is first on PYTHONPATH), so the other names need
# no scan. A name SQLAlchemy already knows is left as it is; if anything
# here fails, SQLAlchemy scans as before (one warning).

def _register_neighbours():
    """Registers the sqlalchemy.plugins entry points of the *.dist-info
    directories beside this file."""
    import pathlib
    from importlib import metadata
    from sqlalchemy.dialects import plugins

    here = pathlib.Path(__file__).resolve().parent
    for dist in sorted(here.glob("*.dist-info")):
        for ep in metadata.PathDistribution(dist).entry_points:
            if ep.group != "sqlalchemy.plugins" or ep.name in plugins.impls:
                continue
            if not ep.module or not ep.attr:
                raise ValueError("%s: entry point %s is not module:attr" %
                                 (dist.name, ep.name))
            plugins.register(ep.name, ep.module, ep.attr)


try:
    _register_neighbours()
except Exception as e:  # only slower: SQLAlchemy scans for each name
    LOG.warning("ephemeral.heat: our plugins are found by SQLAlchemy's "
                "entry-point scan, one per plugin: %s: %s",
                type(e).__name__, e)


# --- the manual RPC client warning ------------------------------------------
#
# Heat 19 builds each RPC client with oslo_messaging.RPCClient(...)
# (heat.common.messaging.get_rpc_client), and oslo.messaging logs a WARNING
# for every one ("Using RPCClient manually to instantiate client. Please use
# get_rpc_client to obtain an RPC client instance."): a note to Heat's
# developers, once per resource that talks to the engine. In a Compute 2
# create of THT it was 747 of heat-all's 3,792 log lines; at Compute 500
# about 16,000 in 8 minutes, burying the warnings an operator looks for.
# When this module is imported (in each Heat process our heat.conf names a
# plugin of it in), that one message is dropped from oslo.messaging's RPC
# client logger; every other message of that logger is kept. The clients
# heat-all builds before it first opens its database (about 10) still log
# it: after this, the same create logged it 10 times in 3,055 lines.

MANUAL_RPC_CLIENT = "Using RPCClient manually to instantiate client."


class DropManualRPCClient(logging.Filter):
    """Drops oslo.messaging's warning about a manually built RPC client."""

    def filter(self, record):
        msg = record.msg
        return not (isinstance(msg, str) and
                    msg.startswith(MANUAL_RPC_CLIENT))


def _drop_manual_rpc_client():
    logger = logging.getLogger("oslo_messaging.rpc.client")
    if not any(type(f).__name__ == "DropManualRPCClient"
               for f in logger.filters):
        logger.addFilter(DropManualRPCClient())


_drop_manual_rpc_client()


# --- task_wakeup ----------------------------------------------------------
#
# The legacy engine runs each stack operation as a TaskRunner that steps the
# stack's resources and then sleeps one second (scheduler.TaskRunner._sleep).
# A resource that finishes in one step still costs a step, so a chain of
# resources costs a second per link, and a parent stack notices that a
# nested stack has finished only at its next step (the parent's resource
# polls the nested stack's status in the database). With this lever a
# stack's step sleep ends early:
#  - at once (a plain eventlet yield), when the previous step changed the
#    state of one of the stack's resources (something started or finished:
#    the next step has work to do);
#  - as soon as one of its nested stacks has stored a final state (COMPLETE
#    or FAILED) and released its stack lock (what the parent's poll reads:
#    StackResource._check_status_complete);
#  - at once, when the previous step took nodes off a dependency graph
#    being walked in this greenthread without changing any resource's
#    state: an update first walks the backup stack's resources layer by
#    layer (StackUpdate's cleanup of the previous stack), and resources an
#    update leaves unchanged, or a backup stack's never-created ones, are
#    done with in one step: without this each such layer cost a second, at
#    every updated stack (about 10 s before the top stack's first resource);
#  - otherwise after Heat's own wait_time, as before.
# Everything else (timeouts, cancellation, the order of steps, what a step
# does) is Heat's own code.

_task_wakeup_hooks = {}


# The attribute of a greenthread counting the dependency-graph nodes its
# walks have taken off (task_wakeup).
_GRAPH_PROGRESS = "_ephemeral_heat_graph_progress"


def _task_wakeup():
    if "heat.engine.scheduler" not in sys.modules:
        return ""  # not a Heat engine process (heat-manage): nothing to do
    import eventlet
    from eventlet import event as eventlet_event
    from heat.engine import dependencies, resource, scheduler
    from heat.engine import stack as stack_mod
    from heat.engine import stack_lock

    TaskRunner = scheduler.TaskRunner
    Stack = stack_mod.Stack
    orig_sleep = _require(TaskRunner, "_sleep", ("self", "wait_time"))
    orig_res_state_set = _require(resource.Resource, "state_set",
                                  ("self", "action", "status"))
    orig_store = _require(Stack, "store", ("self",))
    orig_persist_state = _require(Stack, "_persist_state", ("self",))
    orig_persist_release = _require(Stack, "persist_state_and_release_lock",
                                    ("self", "engine_id"))
    orig_release = _require(stack_lock.StackLock, "release", ("self",))
    orig_graph_del = _require(dependencies.Graph, "__delitem__", ("self", "key"))
    _require(scheduler, "ENABLE_SLEEP")
    _require(scheduler.DependencyTaskGroup, "__call__")
    _require(Stack, "IN_PROGRESS")

    changes = {}  # stack id -> resource state changes so far
    wakers = {}  # stack id -> _Waker
    owners = {}  # stack id -> its parent's id, from its final state to its lock release

    class _Waker(object):
        __slots__ = ("pending", "waiters")

        def __init__(self):
            self.pending = False
            self.waiters = []

        def wait(self, timeout):
            if self.pending:
                self.pending = False
                return
            ev = eventlet_event.Event()
            self.waiters.append(ev)
            try:
                ev.wait(timeout)
            finally:
                self.waiters.remove(ev)
                self.pending = False

        def wake(self):
            if not self.waiters:
                self.pending = True
            for ev in self.waiters:
                if not ev.ready():
                    ev.send(True)

    def owner_stack(runner):
        task = getattr(runner, "_task", None)
        owner = getattr(task, "__self__", None)
        if isinstance(owner, Stack):
            return owner
        if isinstance(task, scheduler.DependencyTaskGroup):
            # Stack.delete runs a DependencyTaskGroup of its resources.
            for key in getattr(task, "_keys", ())[:1]:
                st = getattr(key, "stack", None)
                if isinstance(st, Stack):
                    return st
        # A resource's own wait for its nested stack (StackResource's
        # update_with_template runs a TaskRunner of a closure over the
        # resource): it waits for the same wake-ups as the resource's stack.
        for cell in getattr(task, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, resource.Resource):
                st = getattr(value, "stack", None)
                if isinstance(st, Stack):
                    return st
        return None

    def _sleep(self, wait_time):
        st = owner_stack(self) if wait_time else None
        sid = getattr(st, "id", None)
        if sid is None or not scheduler.ENABLE_SLEEP:
            return orig_sleep(self, wait_time)
        # Progress: a resource of the stack changed state, or (a stack's
        # delete, which runs a DependencyTaskGroup directly) some of its
        # resources were done with, even without a state change (a
        # resource never created, in a backup stack).
        seen = (changes.get(sid, 0), len(getattr(self._task, "_graph", ())),
                getattr(eventlet.getcurrent(), _GRAPH_PROGRESS, 0))
        if getattr(self, "_ephemeral_heat_seen", None) != seen:
            self._ephemeral_heat_seen = seen
            eventlet.sleep(0)
            return
        waker = wakers.get(sid)
        if waker is None:
            waker = wakers[sid] = _Waker()
        waker.wait(wait_time)

    def res_state_set(self, action, status, *args, **kwargs):
        try:
            return orig_res_state_set(self, action, status, *args, **kwargs)
        finally:
            sid = getattr(getattr(self, "stack", None), "id", None)
            if sid is not None:
                changes[sid] = changes.get(sid, 0) + 1

    def graph_del(self, key):
        result = orig_graph_del(self, key)
        # Counted on the greenthread walking the graph: the TaskRunner that
        # steps the walk sleeps in the same greenthread.
        g = eventlet.getcurrent()
        setattr(g, _GRAPH_PROGRESS, getattr(g, _GRAPH_PROGRESS, 0) + 1)
        return result

    def wake(sid):
        waker = wakers.get(sid)
        if waker is None:
            waker = wakers[sid] = _Waker()
        waker.wake()

    def stored(st):
        if st.status == st.IN_PROGRESS:
            return
        if st.owner_id is not None:
            # The parent's poll also waits for the lock to go (release).
            owners[st.id] = st.owner_id
            wake(st.owner_id)
        waker = wakers.get(st.id)
        if waker is not None and not waker.waiters:
            del wakers[st.id]
        changes.pop(st.id, None)

    def store(self, *args, **kwargs):
        result = orig_store(self, *args, **kwargs)
        stored(self)
        return result

    def persist_state(self, *args, **kwargs):
        result = orig_persist_state(self, *args, **kwargs)
        stored(self)
        return result

    def persist_state_and_release_lock(self, *args, **kwargs):
        result = orig_persist_release(self, *args, **kwargs)
        stored(self)
        owners.pop(self.id, None)  # released with the state
        return result

    def release(self, *args, **kwargs):
        result = orig_release(self, *args, **kwargs)
        owner = owners.pop(getattr(self, "stack_id", None), None)
        if owner is not None:
            wake(owner)
        return result

    # For tests (internal/heatdir): what a stored final state does.
    _task_wakeup_hooks.update(stored=stored, changes=changes, wakers=wakers)
    dependencies.Graph.__delitem__ = graph_del
    TaskRunner._sleep = _sleep
    stack_lock.StackLock.release = release
    resource.Resource.state_set = res_state_set
    Stack.store = store
    Stack._persist_state = persist_state
    Stack.persist_state_and_release_lock = persist_state_and_release_lock
    return None


class TaskWakeup(CreateEnginePlugin):
    """ephemeral_heat_task_wakeup: see _task_wakeup."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("task_wakeup", _task_wakeup)


# --- legacy_update_outputs ------------------------------------------------
#
# A correctness fix, not a speed lever: it goes with the legacy engine
# (convergence_engine = false, package tuning) and is on wherever that is.
# In Heat 19's legacy engine, a stack update that changes only the content
# of a nested stack (an edited provider template, a file a nested template
# reads with get_file) updates the nested stack, but the parent's
# StackResource keeps the nested stack's outputs it read before the update
# (StackResource._outputs, and the resolved values its Attributes cache), and
# StackUpdate._update_resource_data then stores that stale snapshot as the
# resource's node data: every resource of the parent that reads the nested
# stack's outputs through get_attr (e.g. THT's OS::Heat::Value chains up to
# the overcloud's RoleData output) keeps the old value, and the update is
# UPDATE_COMPLETE with the edit missing from the outputs. The convergence
# engine reloads the resource and is not affected. This lever drops the
# StackResource's cached outputs and resolved attributes just before
# _update_resource_data takes its snapshot, so the snapshot is read from the
# updated nested stack, as a fresh load of the stack would read it.

# The attribute of legacy_update_outputs' wrapper holding Heat's own
# _update_resource_data (provider_unchanged calls that one).
_HEAT_RESOURCE_DATA = "_ephemeral_heat_orig"


def _legacy_update_outputs():
    if "heat.engine.scheduler" not in sys.modules:
        return ""  # not a Heat engine process (heat-manage): nothing to do
    from heat.engine import attributes
    from heat.engine import update
    from heat.engine.resources import stack_resource

    StackUpdate = update.StackUpdate
    StackResource = stack_resource.StackResource
    orig = _require(StackUpdate, "_update_resource_data", ("self", "resource"))
    _require(attributes.Attributes, "reset_resolved_values", ("self",))
    if "self._outputs = None" not in inspect.getsource(StackResource.__init__):
        raise TypeError("StackResource.__init__ does not set self._outputs")

    def _update_resource_data(self, resource):
        if isinstance(resource, StackResource):
            resource._outputs = None
            resource.attributes.reset_resolved_values()
        return orig(self, resource)

    setattr(_update_resource_data, _HEAT_RESOURCE_DATA, orig)
    StackUpdate._update_resource_data = _update_resource_data
    return None


class LegacyUpdateOutputs(CreateEnginePlugin):
    """ephemeral_heat_legacy_update_outputs: see _legacy_update_outputs."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("legacy_update_outputs", _legacy_update_outputs)


# --- nested_unchanged -----------------------------------------------------
#
# The legacy engine updates every nested stack of a stack it updates, even a
# nested stack whose inputs are the ones it already has:
# StackResource._needs_update always says yes ("let the individual resources
# in it decide"), so the nested stack is loaded, its template stored again,
# its resources walked one by one, and so is every stack below it.
# ResourceGroup's batch_create (tripleo-heat-templates' role groups:
# update_policy batch_create, NodeCreateBatchSize 30) creates a group's
# members a batch at a time, each batch an update of the group's nested
# stack, so each batch updates every member created before it, subtree and
# all: a create of N nodes does about N²/60 such member updates, each
# costing more as N grows (the per-node maps of THT's environment are in
# every nested stack's environment).
#
# This lever ends a nested stack's update before it starts when the nested
# stack already has exactly these inputs, decided from what Heat stored, not
# from memory of this process: the nested stack is CREATE or UPDATE
# COMPLETE, unlocked, with the same timeout; its stored raw template has the
# template and environment the update would store, and its files have the
# same content (heat_stack and heatclient also send the environment files
# there: a changed parameter reaches every nested stack this way, so only
# updates that leave the files alone skip anything); and no resource of the
# whole stack tree (root_stack_id) is FAILED (a failed or marked-unhealthy
# resource anywhere below must be reached by the update, as Heat would).
# The resource itself still goes UPDATE_IN_PROGRESS to UPDATE_COMPLETE (a
# provider-template resource is left alone by provider_unchanged, below);
# its nested stack keeps its state and updated time. Convergence stacks, a
# "converge" update and a rollback are Heat's own code, unchanged.

_UNCHANGED = "ephemeral_heat_unchanged"
_HELD_DEFN = "_ephemeral_heat_child_defn"


def _nested_inputs_guards():
    """Heat's internals that _nested_has_inputs reads, checked."""
    from heat.db.sqlalchemy import api as db_api
    from heat.db.sqlalchemy import models
    from heat.engine import resource
    from heat.engine import template_files
    from heat.engine.resources import stack_resource
    from heat.objects import stack_lock

    _require(stack_resource.StackResource, "child_definition",
             ("self", "child_template", "user_params", "nested_identifier"))
    _require(db_api, "stack_get", ("context", "stack_id", "show_deleted",
                                   "eager_load"))
    _require(db_api, "raw_template_get", ("context", "template_id"))
    _require(template_files, "TemplateFiles")
    _require(stack_lock.StackLock, "get_engine_id", ("context", "stack_id"))
    for col in ("root_stack_id", "status"):
        getattr(models.Resource, col)
    if resource.Resource.FAILED != "FAILED":  # _failed_in_tree's literal
        raise TypeError("Heat's FAILED status is %r" % resource.Resource.FAILED)


def _failed_in_tree(session, root):
    """The id of a FAILED resource of the stack tree root (its
    root_stack_id), else None. The status is a literal in the statement, so
    that sqlite answers from the partial index of FAILED resources
    (FAILED_INDEX) instead of reading every resource of the tree."""
    import sqlalchemy as sa
    from heat.db.sqlalchemy import models

    row = session.query(models.Resource.id).filter(
        models.Resource.root_stack_id == root,
        models.Resource.status == sa.literal_column("'FAILED'")).first()
    return None if row is None else row[0]


def _nested_has_inputs(res, child_template, user_params, timeout_mins,
                       child_definition):
    """The child definition of res (a StackResource) for these inputs, and
    whether its nested stack, as Heat stored it, already has exactly them.

    Decided from the database, not from memory of this process: the nested
    stack is CREATE or UPDATE COMPLETE, unlocked, with the same timeout; its
    stored raw template has the template and environment an update would
    store, and its files the same content; and no resource of the whole
    stack tree (root_stack_id) is FAILED. (None, False) when an update must
    go to Heat (convergence, a converge update, a rollback, no nested stack).
    """
    from heat.common import exception
    from heat.db.sqlalchemy import api as db_api
    from heat.engine import template_files
    from heat.objects import stack_lock

    st = res.stack
    if (st.convergence or res.converge or res.resource_id is None or
            st.action == st.ROLLBACK):
        return None, False
    ctx = res.context
    try:
        row = db_api.stack_get(ctx, res.resource_id, show_deleted=False,
                               eager_load=False)
    except exception.NotFound:
        return None, False
    if timeout_mins is None:
        timeout_mins = st.timeout_mins
    if (row is None or row.convergence or row.status != st.COMPLETE or
            row.action not in (st.CREATE, st.UPDATE) or
            row.timeout != timeout_mins or
            stack_lock.StackLock.get_engine_id(ctx, row.id) is not None):
        return None, False
    root = res.root_stack_id or st.root_stack_id()
    if _failed_in_tree(ctx.session, root) is not None:
        return None, False
    defn = child_definition(res, child_template, user_params, None)
    t = defn.t
    files_id = t.files.files_id
    rt = db_api.raw_template_get(ctx, row.raw_template_id)
    same = (rt.files is None and rt.template == t.t and
            rt.environment == t.env.env_as_dict() and
            ((files_id is not None and rt.files_id == files_id) or
             # stored again by a later update: the same content?
             dict(template_files.TemplateFiles(rt.files_id)) ==
             dict(t.files)))
    return defn, same


def _nested_unchanged():
    if "heat.engine.scheduler" not in sys.modules:
        return ""  # not a Heat engine process (heat-manage): nothing to do
    from heat.engine.resources import stack_resource

    StackResource = stack_resource.StackResource
    orig_update = _require(StackResource, "update_with_template",
                           ("self", "child_template", "user_params",
                            "timeout_mins"))
    orig_defn = _require(StackResource, "child_definition",
                         ("self", "child_template", "user_params",
                          "nested_identifier"))
    orig_check = _require(StackResource, "check_update_complete",
                          ("self", "cookie"))
    _nested_inputs_guards()
    if "self.child_definition(" not in inspect.getsource(
            StackResource._stack_kwargs):
        raise TypeError("StackResource._stack_kwargs does not call "
                        "child_definition")

    failures = [0]  # comparisons that raised (the first is logged)

    def unchanged(self, child_template, user_params, timeout_mins):
        """The child definition, and whether the nested stack has it."""
        if type(self).check_update_complete is not check_update_complete:
            return None, False
        return _nested_has_inputs(self, child_template, user_params,
                                  timeout_mins, orig_defn)

    def update_with_template(self, child_template, user_params=None,
                             timeout_mins=None):
        try:
            defn, same = unchanged(self, child_template, user_params,
                                   timeout_mins)
        except Exception as e:  # leave the update to Heat, as before
            if not failures[0]:
                LOG.warning("ephemeral.heat: nested_unchanged could not "
                            "compare %s's nested stack, Heat updates it as "
                            "before: %s: %s", self.name, type(e).__name__, e)
            failures[0] += 1
            defn, same = None, False
        if same:
            LOG.debug("ephemeral.heat: %s: nested stack %s has these inputs "
                      "already, not updated", self.name, self.resource_id)
            return {_UNCHANGED: True}
        if defn is not None:
            # Heat's update asks for the same definition: hand it this one.
            self.__dict__[_HELD_DEFN] = (child_template, user_params, defn)
        try:
            return orig_update(self, child_template, user_params,
                               timeout_mins)
        finally:
            self.__dict__.pop(_HELD_DEFN, None)

    def child_definition(self, child_template=None, user_params=None,
                         nested_identifier=None):
        held = self.__dict__.pop(_HELD_DEFN, None)
        if (held is not None and nested_identifier is None and
                held[0] is child_template and held[1] is user_params):
            return held[2]
        return orig_defn(self, child_template, user_params, nested_identifier)

    def check_update_complete(self, cookie=None):
        if isinstance(cookie, dict) and cookie.get(_UNCHANGED):
            return True
        return orig_check(self, cookie)

    StackResource.check_update_complete = check_update_complete
    StackResource.child_definition = child_definition
    StackResource.update_with_template = update_with_template
    return None


class _SQLiteIndexes(CreateEnginePlugin):
    """Creates indexes in a sqlite file database when Heat opens it, once a
    process: statements(conn) gives the CREATE INDEX statements the
    database lacks, or None when its tables are not there yet (heat-manage
    db_sync on an empty database: nothing done, no warning); applied_as
    names the lever in _applied."""

    applied_as = None
    statements = None

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        self._db = _sqlite_file(url)

    def engine_created(self, engine):
        if self._db is None or self.applied_as in _applied:
            return
        db, statements_of, name = self._db, self.statements, self.applied_as

        def patch():
            import sqlite3
            # A connection of its own, outside the engine's pool: oslo.db
            # has not set up its per-connection settings yet.
            conn = sqlite3.connect(db, timeout=30, isolation_level=None)
            try:
                statements = statements_of(conn)
                for stmt in statements or ():
                    conn.execute(stmt)
            finally:
                conn.close()
            if statements is None:
                return ""
            if statements:
                LOG.info("ephemeral.heat: %s: %d indexes created", name,
                         len(statements))
            return None

        _apply_once(name, patch)


# Before it leaves a nested stack alone, _nested_has_inputs asks whether a
# resource of the stack tree is FAILED. Heat's schema indexes
# resource.root_stack_id only, so that question reads every resource of the
# tree (all of them: the tree is the deploy), and a group's batch_create
# asks it for every earlier member at every batch (4,080 times, 10 s of
# sqlite at Compute 500). On a sqlite file database both levers below give
# the resource table a partial index of its FAILED rows (CREATE INDEX IF
# NOT EXISTS ephemeral_heat_failed_resource ... WHERE status = 'FAILED'):
# it holds only failed resources, so it costs nothing to keep up and the
# question reads nothing when none failed. A stock Heat ignores it; a
# database without the table yet (heat-manage db_sync) is left alone.

FAILED_INDEX = "ephemeral_heat_failed_resource"


def failed_index_statements(conn):
    """The statement that creates FAILED_INDEX in the sqlite connection
    conn's database, in a list (empty when it is there already), or None
    when its resource table lacks the columns."""
    cols = {r[1] for r in conn.execute("PRAGMA table_info(resource)")}
    if not {"root_stack_id", "status"} <= cols:
        return None
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' "
                    "AND name = ?", (FAILED_INDEX,)).fetchone():
        return []
    return ["CREATE INDEX IF NOT EXISTS %s ON resource (root_stack_id) "
            "WHERE status = 'FAILED'" % _quote(FAILED_INDEX)]


class _FailedIndex(_SQLiteIndexes):
    """Creates FAILED_INDEX in a sqlite file database, once a process."""

    applied_as = "failed_resource_index"
    statements = staticmethod(failed_index_statements)


class NestedUnchanged(_FailedIndex):
    """ephemeral_heat_nested_unchanged: see _nested_unchanged."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("nested_unchanged", _nested_unchanged)


# --- provider_unchanged ---------------------------------------------------
#
# nested_unchanged spares an unchanged nested stack, but the legacy update
# still takes the provider-template resource that owns it (a
# TemplateResource: each member of tripleo-heat-templates' role groups,
# each OS::TripleO::* resource) through an update: StackResource's
# _needs_update always says yes, so the resource goes UPDATE_IN_PROGRESS
# and UPDATE_COMPLETE (two stores, two events), and StackUpdate then stores
# the whole stack's template twice (the stack's and its backup's, each with
# the environment and its per-node maps: a read, a decode and a copy that
# grow with the node count). A group's batch_create does that for every
# earlier member at every batch: about N²/60 resource updates, each costing
# more as N grows, the term left after nested_unchanged.
#
# This lever decides before Heat's update starts, with Heat's own checks,
# that such a resource needs no update: it is CREATE or UPDATE COMPLETE
# with a nested stack, not external, has no hook or restricted action in
# the environment; Heat's base Resource._needs_update finds its resolved
# definition and properties unchanged (and raises nothing: a replacement
# or a failed resource goes to Heat); and its nested stack already has
# exactly the inputs the update would give it (nested_unchanged's check,
# from the database: stored template, environment and files, state, lock,
# timeout, no FAILED resource in the whole tree). Then it does what Heat
# does after an update that changed nothing: the resource keeps its state
# (no state change, no event), its data goes into the stack definitions
# (Heat's _update_resource_data: its stored attribute values are still the
# nested stack's outputs), and the stack's and the backup's templates get
# its snippet; each template is stored at the first such resource of an
# update and again only when the snippet differs from the one it had (what
# Heat would store is then the same rows again). Any other resource, a
# convergence stack, a converge update, a rollback, or a check that
# raises: Heat's own code, unchanged.

_STORED_TEMPLATES = "_ephemeral_heat_stored_templates"


def _provider_unchanged():
    if "heat.engine.scheduler" not in sys.modules:
        return ""  # not a Heat engine process (heat-manage): nothing to do
    from oslo_config import cfg
    from heat.engine import environment
    from heat.engine import resource
    from heat.engine import update
    from heat.engine.resources import stack_resource
    from heat.engine.resources import template_resource

    StackUpdate = update.StackUpdate
    StackResource = stack_resource.StackResource
    TemplateResource = template_resource.TemplateResource
    Resource = resource.Resource
    orig_process = _require(StackUpdate, "_process_new_resource_update",
                            ("self", "new_res"))
    _require(StackUpdate, "_update_resource_data", ("self", "resource"))
    needs_update = _require(Resource, "_needs_update",
                            ("self", "after", "before", "after_props",
                             "before_props", "prev_resource"))
    _require(Resource, "_prepare_update_props", ("self", "after", "before"))
    stack_needs_update = _require(StackResource, "_needs_update")
    template_handle_update = _require(TemplateResource, "handle_update",
                                      ("self", "json_snippet", "tmpl_diff",
                                       "prop_diff"))
    _require(TemplateResource, "child_template", ("self",))
    _require(TemplateResource, "child_params", ("self",))
    _require(environment.ResourceRegistry, "matches_hook",
             ("self", "resource_name", "hook"))
    _require(environment.ResourceRegistry, "get_rsrc_restricted_actions",
             ("self", "resource_name"))
    _nested_inputs_guards()
    if not inspect.isgeneratorfunction(orig_process):
        raise TypeError("StackUpdate._process_new_resource_update is not a "
                        "generator")
    src = inspect.getsource(orig_process)
    for part in ("self._update_in_place(", "self.previous_stack.t.store(",
                 "self.existing_stack.t.store(",
                 "self._update_resource_data(existing_res)"):
        if part not in src:
            raise TypeError("StackUpdate._process_new_resource_update does "
                            "not call %s" % part)
    if "self.existing_snippets" not in inspect.getsource(StackUpdate.__init__):
        raise TypeError("StackUpdate has no existing_snippets")
    if "self.update_with_template(" not in inspect.getsource(
            template_handle_update):
        raise TypeError("TemplateResource.handle_update does not call "
                        "update_with_template")

    failures = [0]  # checks that raised (the first is logged)

    def unchanged(upd, new_res):
        """The existing resource when it needs no update, else None."""
        name = new_res.name
        es = upd.existing_stack
        if (upd.rollback or upd.new_stack.converge or es.convergence or
                cfg.CONF.observe_on_update or name not in es or
                name not in upd.existing_snippets):
            return None
        res = es[name]
        cls = type(res)
        if (cls is not type(new_res) or
                not isinstance(res, TemplateResource) or
                cls.handle_update is not template_handle_update or
                cls._needs_update is not stack_needs_update or
                res.resource_id is None or res.external_id is not None or
                res.status != res.COMPLETE or
                res.action not in (res.CREATE, res.UPDATE)):
            return None
        registry = es.env.registry
        if (registry.get_rsrc_restricted_actions(name) or
                registry.matches_hook(name, environment.HOOK_PRE_UPDATE) or
                registry.matches_hook(name, environment.HOOK_POST_UPDATE)):
            return None
        before = upd.existing_snippets[name]
        after = new_res.t.reparse(es.defn, upd.new_stack.t)
        if after.external_id() is not None:
            return None
        try:
            after_props, before_props = res._prepare_update_props(after,
                                                                  before)
            if needs_update(res, after, before, after_props, before_props,
                            upd.previous_stack.get(name)):
                return None
        except resource.UpdateReplace:
            return None  # Heat replaces it: its own code
        # What TemplateResource.handle_update would give the nested stack.
        _, same = _nested_has_inputs(res, res.child_template(),
                                     res.child_params(), None,
                                     StackResource.child_definition)
        return res if same else None

    def _process_new_resource_update(self, new_res):
        try:
            res = unchanged(self, new_res)
        except Exception as e:  # leave the update to Heat, as before
            if not failures[0]:
                LOG.warning("ephemeral.heat: provider_unchanged could not "
                            "compare %s, Heat updates it as before: %s: %s",
                            new_res.name, type(e).__name__, e)
            failures[0] += 1
            res = None
        if res is None:
            yield from orig_process(self, new_res)
            return
        LOG.debug("ephemeral.heat: %s of stack %s needs no update, "
                  "left alone", new_res.name, self.existing_stack.name)
        stored = self.__dict__.setdefault(_STORED_TEMPLATES, set())
        for st in (self.previous_stack, self.existing_stack):
            tmpl = st.t
            had = (tmpl.t.get(tmpl.RESOURCES) or {}).get(new_res.name)
            tmpl.add_resource(new_res.t)
            now = (tmpl.t.get(tmpl.RESOURCES) or {}).get(new_res.name)
            if now != had or id(tmpl) not in stored:
                tmpl.store(st.context)
                stored.add(id(tmpl))
        # Heat's own, not legacy_update_outputs' (its stored outputs hold).
        data = StackUpdate._update_resource_data
        getattr(data, _HEAT_RESOURCE_DATA, data)(self, res)

    StackUpdate._process_new_resource_update = _process_new_resource_update
    return None


class ProviderUnchanged(_FailedIndex):
    """ephemeral_heat_provider_unchanged: see _provider_unchanged."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("provider_unchanged", _provider_unchanged)


# --- static_dep_attrs -----------------------------------------------------
#
# The legacy engine keeps one StackDefinition for a whole create or update
# and, as each resource completes, stores the resource's data there
# (stk_defn.update_resource_data). That also drops the memo of "which
# attributes of which resource this definition references" of every
# resource and output definition that names the resource, in case a
# get_attr's resource name or attribute path is itself computed from
# resource data. A ResourceGroup's outputs name every member: after each
# member, every output of the group is walked again in full, so a group
# costs the square of its size (188 s of a Compute 500 create: the member
# creates and, at each batch_create batch, the earlier members).
# This lever keeps the memo of a definition whose referenced attributes
# cannot depend on resource data: each function in it is one of Heat's
# get_attr functions with a plain resource name, attribute and path, or a
# function that takes its referenced attributes from its arguments only
# (Heat's Function and Macro defaults), all the way down. Any other
# definition's memo is dropped, as Heat does.

_STATIC_DEPS = "_ephemeral_heat_static_deps"


def _static_dep_attrs():
    if "heat.engine.scheduler" not in sys.modules:
        return ""  # not a Heat engine process (heat-manage): nothing to do
    import collections.abc
    import itertools
    from heat.engine import function
    from heat.engine import output
    from heat.engine import rsrc_defn
    from heat.engine import stk_defn
    from heat.engine.cfn import functions as cfn_functions
    from heat.engine.hot import functions as hot_functions

    orig = _require(stk_defn, "update_resource_data",
                    ("stack_definition", "resource_name", "resource_data"))
    src = inspect.getsource(orig)
    for part in ("_all_dep_attrs = None", "required_resource_names()",
                 "_resource_defns", "_output_defns"):
        if part not in src:
            raise TypeError("stk_defn.update_resource_data has no %s" % part)
    Function = function.Function
    Macro = _require(function, "Macro")
    default = {(Function.dep_attrs, Function.all_dep_attrs): "args",
               (Macro.dep_attrs, Macro.all_dep_attrs): "parsed"}
    then_select = _require(hot_functions, "GetAttThenSelect")
    # Heat's get_attr classes: their referenced attributes come from their
    # resource name, attribute and path arguments, resolved.
    get_attrs = {then_select, _require(hot_functions, "GetAtt"),
                 _require(hot_functions, "GetAttAllAttributes"),
                 _require(cfn_functions, "GetAtt")}
    for cls in get_attrs:
        if (cls.dep_attrs is not then_select.dep_attrs or
                cls.all_dep_attrs is not then_select.all_dep_attrs or
                not issubclass(cls, then_select)):
            raise TypeError("%s computes its attributes its own way" %
                            cls.__name__)
    for part in ("_resource_name", "_attribute", "_path_components"):
        if part not in inspect.getsource(then_select.__init__):
            raise TypeError("GetAttThenSelect keeps no %s" % part)
    for cls, fields in ((rsrc_defn.ResourceDefinition,
                         ("_properties", "_metadata", "_all_dep_attrs")),
                        (output.OutputDefinition,
                         ("_value", "_all_dep_attrs"))):
        init = inspect.getsource(cls.__init__)
        for f in fields:
            if "self.%s" % f not in init:
                raise TypeError("%s keeps no %s" % (cls.__name__, f))
    snippets = {rsrc_defn.ResourceDefinition: ("_properties", "_metadata"),
                output.OutputDefinition: ("_value",)}

    def walk(x, plain):
        """Each value in x: no function (plain), or only static ones."""
        stack = [x]
        while stack:
            x = stack.pop()
            if isinstance(x, Function):
                if plain:
                    return False
                cls = type(x)
                if cls in get_attrs:
                    if not (walk(x._resource_name, True) and
                            walk(x._attribute, True) and
                            walk(x._path_components, True)):
                        return False
                    stack.append(x.args)
                    continue
                via = default.get((cls.dep_attrs, cls.all_dep_attrs))
                if via is None:
                    return False
                stack.append(getattr(x, via))
            elif isinstance(x, collections.abc.Mapping):
                stack.extend(x.values())
            elif (not isinstance(x, str) and
                    isinstance(x, collections.abc.Iterable)):
                stack.extend(x)
        return True

    def static(defn):
        known = defn.__dict__.get(_STATIC_DEPS)
        if known is None:
            fields = snippets.get(type(defn))
            try:
                known = fields is not None and all(
                    walk(getattr(defn, f), False) for f in fields)
            except Exception:
                known = False
            defn.__dict__[_STATIC_DEPS] = known
        return known

    failures = [0]  # memos that could not be looked at (the first logged)

    def update_resource_data(stack_definition, resource_name, resource_data):
        keep = []
        try:
            defns = itertools.chain(
                (stack_definition._resource_defns or {}).values(),
                (stack_definition._output_defns or {}).values())
            for defn in defns:
                memo = getattr(defn, "_all_dep_attrs", None)
                if memo is not None and static(defn):
                    keep.append((defn, memo))
        except Exception as e:  # keep nothing: Heat drops them, as before
            if not failures[0]:
                LOG.warning("ephemeral.heat: static_dep_attrs could not look "
                            "at the definitions naming %s, Heat drops their "
                            "memos as before: %s: %s",
                            resource_name, type(e).__name__, e)
            failures[0] += 1
            keep = []
        orig(stack_definition, resource_name, resource_data)
        for defn, memo in keep:
            defn._all_dep_attrs = memo

    stk_defn.update_resource_data = update_resource_data
    return None


class StaticDepAttrs(CreateEnginePlugin):
    """ephemeral_heat_static_dep_attrs: see _static_dep_attrs."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("static_dep_attrs", _static_dep_attrs)


# --- template_store -------------------------------------------------------
#
# Template.store of a template already in the database goes through
# RawTemplate.update_by_id and raw_template_update: it reads the row back,
# decoding its template and environment, compares each with the new value,
# writes the ones that differ, and builds a RawTemplate object from the row
# (the environment copied and decrypted) that Template.store drops. The
# legacy update stores a stack's template and its backup's after each new
# or updated resource, and a ResourceGroup's template holds every member's
# definition with its resolved properties (3.2 MB at Compute 200): each
# member costs two reads and decodes of a template that grows with the
# group.
# On sqlite, where this process is the only writer, this lever remembers
# for each template row the JSON text (Heat's own encoding) of what Heat
# last stored there through this process, compares the new values' text
# with it and writes only the columns that differ, reading nothing. A row
# it has not seen stored yet, a store inside an open transaction, and one
# that overlaps another store of the same row go to Heat's own code; any
# other update or delete of a row forgets it. The text itself is put
# together from the pieces of the previous store where an entry of a
# section (a resource, an output, a parameter default) has not changed
# (_encode_pieces), so a group's template is not encoded whole after each
# member. What it remembers is capped (128 MB of text and pieces): the rows
# stored longest ago are forgotten first (their next store is Heat's), so
# the rows a deploy keeps storing, a growing group's template and its
# backup's, stay known however many rows were stored before them (at
# Compute 500, the rows of 4,800 nested stacks fill the cap); a row larger
# than the cap is stored by Heat's code.

_TEMPLATE_STORE_MAX_BYTES = 128 << 20



def _encode_pieces(doc, dumps, memo):
    """Returns (text, memo): text is dumps(doc), and memo maps each entry of
    doc's dict sections, (section, name), to its marshal bytes and its
    text. An entry whose marshal bytes equal those in the memo given (the
    previous store's) reuses its text instead of being encoded again: a
    ResourceGroup's template gains one member per store, and encoding all
    of them each time is what grows with the group.

    Bytes equal only for values of the same exact types (1, 1.0 and True
    differ; a str or dict subclass cannot be marshalled), so the text is
    always what dumps(doc) gives. A document of another shape (not a dict,
    a key not a str, a value marshal refuses) is encoded by dumps whole.
    """
    if type(doc) is not dict:
        return dumps(doc), {}
    # First every entry's bytes: a document that falls back to dumps
    # whole has encoded nothing before.
    sections = []
    for key, section in doc.items():
        if type(key) is not str:
            return dumps(doc), {}
        if type(section) is not dict:
            sections.append((key, section, None))
            continue
        entries = []
        for name, value in section.items():
            if type(name) is not str:
                return dumps(doc), {}
            try:
                m = marshal.dumps(value, _EXACT_MARSHAL)
            except (ValueError, RecursionError):
                return dumps(doc), {}
            entries.append((name, value, m))
        sections.append((key, section, entries))
    memo = memo or {}
    new = {}
    parts = []
    for key, section, entries in sections:
        if entries is None:
            parts.append(dumps(key) + ": " + dumps(section))
            continue
        items = []
        for name, value, m in entries:
            hit = memo.get((key, name))
            text = hit[1] if hit is not None and hit[0] == m else dumps(value)
            new[(key, name)] = (m, text)
            items.append(dumps(name) + ": " + text)
        parts.append(dumps(key) + ": {" + ", ".join(items) + "}")
    return "{" + ", ".join(parts) + "}", new


def _kept_bytes(text, memo):
    """What template_store counts against its cap for one column: the text
    and its pieces (_encode_pieces' memo)."""
    return len(text) + sum(len(m) + len(t) for m, t in memo.values())


def _template_store():
    if "heat.engine.scheduler" not in sys.modules:
        return ""  # not a Heat engine process (heat-manage): nothing to do
    import collections
    import sqlalchemy as sa
    import sqlalchemy.orm
    from sqlalchemy.orm import util as orm_util
    from heat.db.sqlalchemy import models
    from heat.db.sqlalchemy import types
    from heat.engine import template
    from heat.objects import raw_template

    Template = template.Template
    RawTemplate = raw_template.RawTemplate
    orig_store = _require(Template, "store", ("self", "context"))
    src = inspect.getsource(orig_store)
    for part in ("'template': self.t", "'files_id': self.files.store(context)",
                 "'environment': self.env.env_as_dict()",
                 "RawTemplate.update_by_id(context, self.id, rt)"):
        if part not in src:
            raise TypeError("Template.store does not say %s" % part)
    orig_update = _require(RawTemplate, "update_by_id",
                           ("context", "template_id", "values"))
    if "values['files'] = None" not in inspect.getsource(orig_update):
        raise TypeError("RawTemplate.update_by_id does not clear files")
    orig_delete = _require(RawTemplate, "delete", ("context", "template_id"))
    table = models.RawTemplate.__table__
    for col in ("id", "template", "files", "files_id", "environment",
                "updated_at"):
        if col not in table.c:
            raise TypeError("raw_template has no column %s" % col)
    dumps = _require(types, "dumps")
    _require(orm_util, "identity_key")
    for attr in ("in_transaction", "expire", "execute", "begin"):
        _require(sa.orm.Session, attr)
    texts = ("template", "environment")  # compared as Heat's JSON text
    # row id -> (what Heat last stored there, the pieces of its texts by
    # column (_encode_pieces), the bytes of both), the row stored longest
    # ago first
    known = collections.OrderedDict()
    gens = {}  # row id -> stores begun, to see two of one row overlap
    size = [0]  # bytes held in known

    def pop(template_id):
        had, memos, n = known.pop(template_id, (None, None, 0))
        size[0] -= n
        return had, memos or {}

    def forget(template_id):
        pop(template_id)
        gens[template_id] = gens.get(template_id, 0) + 1

    def update_by_id(cls, context, template_id, values):
        forget(template_id)  # not through store below: not known any more
        return orig_update(context, template_id, values)

    def delete(cls, context, template_id):
        forget(template_id)
        return orig_delete(context, template_id)

    def store(self, context):
        tid = self.id
        session = context.session
        if tid is None or session.in_transaction():
            return orig_store(self, context)
        files_id = self.files.store(context)
        values = {"template": self.t, "files_id": files_id,
                  "environment": self.env.env_as_dict()}
        if files_id:
            values["files"] = None
        had, memos = pop(tid)
        now, new_memos = {}, {}
        for k in texts:
            now[k], new_memos[k] = _encode_pieces(values[k], dumps,
                                                  memos.get(k))
        now.update((k, v) for k, v in values.items() if k not in texts)
        gens[tid] = gen = gens.get(tid, 0) + 1
        if had is None:
            orig_update(context, tid, values)  # Heat's: reads, compares
        else:
            changed = {k: v for k, v in now.items()
                       if k not in had or had[k] != v}
            if changed:
                stmt = table.update().where(table.c.id == tid).values(
                    {k: (sa.bindparam(k, v, type_=sa.Text) if k in texts
                         else v) for k, v in changed.items()})
                with session.begin(subtransactions=True):
                    rows = session.execute(stmt).rowcount
                obj = session.identity_map.get(
                    orm_util.identity_key(models.RawTemplate, tid))
                if obj is not None:
                    session.expire(obj)  # the row changed under it
                if rows != 1:  # gone: Heat's own store says so
                    return orig_store(self, context)
        n = sum(_kept_bytes(now[k], new_memos[k]) for k in texts)
        if (gens.get(tid) == gen and not session.in_transaction() and
                n <= _TEMPLATE_STORE_MAX_BYTES):
            while known and size[0] + n > _TEMPLATE_STORE_MAX_BYTES:
                size[0] -= known.popitem(last=False)[1][2]
            known[tid] = (now, new_memos, n)
            size[0] += n
        return tid

    Template.store = store
    RawTemplate.update_by_id = classmethod(update_by_id)
    RawTemplate.delete = classmethod(delete)
    return None


def template_store_applies(url):
    """template_store's rule: only a sqlite database (one writing process)."""
    return str(getattr(url, "drivername", "")).startswith("sqlite")


class TemplateStore(CreateEnginePlugin):
    """ephemeral_heat_template_store: see _template_store."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        if template_store_applies(url):
            _apply_once("template_store", _template_store)


# --- env_copy -------------------------------------------------------------
#
# Every load of a stack copies its stored environment
# (RawTemplate.from_db_object: copy.deepcopy), and tripleo-heat-templates'
# environment holds the per-node maps of parameter_defaults (HostnameMap,
# DeployedServerPortMap, ...) in every one of the ~10 nested stacks a node
# adds: the copies grow as the square of the node count (about 6 % of a
# Compute 50 create's CPU, more above). The environment is JSON read from
# the database (dicts, lists, strings, numbers): this lever copies it with
# a pickle round trip, the same values and sharing as copy.deepcopy's, done
# in C (about 4 times faster on THT's environment). Anything pickle cannot
# copy goes to copy.deepcopy, as before.

def _env_copy():
    import copy
    import pickle
    from heat.objects import raw_template

    src = inspect.getsource(raw_template.RawTemplate.from_db_object)
    mod_src = inspect.getsource(raw_template)
    if ("tpl.environment = copy.deepcopy(tpl.environment)" not in src or
            mod_src.count("copy.") != 1 or
            getattr(raw_template, "copy", None) is not copy):
        raise TypeError("RawTemplate.from_db_object does not copy the "
                        "environment with copy.deepcopy, or the module uses "
                        "copy elsewhere")

    def deepcopy(x, memo=None):
        if memo is None and type(x) is dict:
            try:
                return pickle.loads(pickle.dumps(x, pickle.HIGHEST_PROTOCOL))
            except Exception:
                pass
        return copy.deepcopy(x, memo)

    class _Copy(object):
        """What heat.objects.raw_template sees as its copy module."""

    shim = _Copy()
    shim.deepcopy = deepcopy
    raw_template.copy = shim
    return None


class EnvCopy(CreateEnginePlugin):
    """ephemeral_heat_env_copy: see _env_copy."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("env_copy", _env_copy)


# --- yaql_cache ------------------------------------------------------------
#
# Heat's yaql function parses its expression at every validate and every
# result (ply's parser), and evaluates it at every result: the Compute 2
# create of THT evaluates 59 expressions (most once per role's service
# chain) 944 times, over data of up to 0.5 MB, on 193 distinct pairs of
# expression and data (a stack's outputs are resolved, then the show its
# parent asks for resolves them again). The result of
# a yaql expression is a function of its text and its data, except where
# the expression calls yaql's now() or random(), or call(), which can reach
# either by a computed name. This lever keeps the parsed
# expression per text, and the result per expression, class and data; data
# are compared by their marshal bytes (version 2, no references: equal bytes
# mean equal values of the same exact types in the same order, so 1, 1.0
# and true differ, and a str or dict subclass is refused and not cached).
# Each hit returns a fresh copy (marshal.loads of the kept result); an
# expression whose text names now, random or call, data or a result marshal
# refuses, and an evaluation that raises go to Heat's code each time. Cost:
# kept results up to _YAQL_CACHE_MAX_BYTES (least recently used go first),
# parsed expressions up to _YAQL_PARSE_MAX.

_YAQL_CACHE_MAX_BYTES = 64 << 20
_YAQL_RESULT_MAX_BYTES = 8 << 20
_YAQL_PARSE_MAX = 4096
_YAQL_IMPURE = ("now", "random", "call")


def _yaql_cache():
    if "heat.engine.scheduler" not in sys.modules:
        return ""  # not a Heat engine process (heat-manage): nothing to do
    import collections
    import hashlib
    import re
    from heat.engine import function
    from heat.engine.hot import functions as hot_functions

    Yaql = hot_functions.Yaql
    _require(Yaql, "_parse", ("self", "expression"))
    src = inspect.getsource(Yaql.result)
    want = ("statement = self._parse(function.resolve(self._expression))",
            "data = function.resolve(self._data)",
            "context = self._context.create_child_context()",
            "return statement.evaluate({'data': data}, context)")
    if (not all(w in src for w in want) or
            len([ln for ln in src.splitlines() if ln.strip()]) != 5 or
            getattr(hot_functions, "function", None) is not function):
        raise TypeError("Yaql.result is not Heat 19's parse, resolve data, "
                        "evaluate in a child context")
    orig_parse = Yaql._parse
    impure = re.compile(r"\b(?:%s)\b" % "|".join(_YAQL_IMPURE))
    parsed = collections.OrderedDict()
    kept = collections.OrderedDict()
    size = [0]

    def parse(self, expression):
        if type(expression) is not str:
            return orig_parse(self, expression)
        key = (type(self), expression)
        statement = parsed.get(key)
        if statement is None:
            statement = orig_parse(self, expression)
            parsed[key] = statement
            if len(parsed) > _YAQL_PARSE_MAX:
                parsed.popitem(last=False)
        return statement

    def result(self):
        expression = function.resolve(self._expression)
        statement = self._parse(expression)
        data = function.resolve(self._data)
        key = None
        if not impure.search(expression):
            try:
                b = marshal.dumps(data, _EXACT_MARSHAL)
                key = (type(self), expression, len(b),
                       hashlib.blake2b(b, digest_size=32).digest())
            except Exception:  # marshal refuses it: not cached
                key = None
        if key is not None:
            hit = kept.get(key)
            if hit is not None:
                kept.move_to_end(key)
                return marshal.loads(hit)
        context = self._context.create_child_context()
        value = statement.evaluate({"data": data}, context)
        if key is None:
            return value
        try:
            b = marshal.dumps(value, _EXACT_MARSHAL)
        except Exception:  # marshal refuses it: not cached
            return value
        if len(b) > _YAQL_RESULT_MAX_BYTES:
            return value
        old = kept.pop(key, None)
        if old is not None:
            size[0] -= len(old)
        kept[key] = b
        size[0] += len(b)
        while size[0] > _YAQL_CACHE_MAX_BYTES:
            size[0] -= len(kept.popitem(last=False)[1])
        return value

    Yaql._parse = parse
    Yaql.result = result
    return None


class YaqlCache(CreateEnginePlugin):
    """ephemeral_heat_yaql_cache: see _yaql_cache."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("yaql_cache", _yaql_cache)


# --- root_id_cache -----------------------------------------------------------
#
# Before a resource is first stored, Heat asks for its stack's root stack
# (Resource.store: Stack.root_stack_id), and the database answers by reading
# the owner's row, then its owner's, up to the top: one SELECT per level,
# for every resource created in a nested stack. In the Compute 2 create of
# THT that was 555 questions (1,090 of its 21,400 statements, 0.68 s of
# heat-all's 26 s of CPU), and their number grows with the node count.
# A stack's owner is set when the stack is created and never changes, and
# stack ids (UUIDs) are not reused, so the root of a stack is the same
# answer every time it is found. This lever keeps each answer found, by
# stack id and the asker's project and admin flag (a project that may not
# see a stack gets None from Heat, and asks again here each time); None is
# never kept. One difference: a stack deleted after its root was kept still
# answers that root, where Heat answers None (or fails on a deleted owner);
# Heat asks only before storing a new resource, which a deleted stack does
# not get. Valid across processes too (a pod's engines): an owner cannot
# change. Cost: one dict entry per stack asked about, cleared at
# _ROOT_ID_MAX entries.

_ROOT_ID_MAX = 200000


def _root_id_cache():
    if "heat.engine.scheduler" not in sys.modules:
        return ""  # not a Heat engine process (heat-manage): nothing to do
    from heat.objects import stack as stack_object

    Stack = stack_object.Stack
    orig = _require(Stack, "get_root_id", ("context", "stack_id")).__func__
    if "stack_get_root_id" not in orig.__code__.co_names:
        return "Stack.get_root_id does not ask db_api.stack_get_root_id"
    cache = {}

    def get_root_id(cls, context, stack_id):
        try:
            key = (stack_id, context.tenant_id, bool(context.is_admin))
            hit = cache.get(key)
        except Exception:  # an odd context or id: Heat's answer
            return orig(cls, context, stack_id)
        if hit is not None:
            return hit
        root = orig(cls, context, stack_id)
        if root is not None:
            if len(cache) >= _ROOT_ID_MAX:
                cache.clear()
            cache[key] = root
        return root

    Stack.get_root_id = classmethod(get_root_id)
    return None


class RootIDCache(CreateEnginePlugin):
    """ephemeral_heat_root_id_cache: see _root_id_cache."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("root_id_cache", _root_id_cache)


# --- lazy_defn_hash ----------------------------------------------------------
#
# Heat's ResourceDefinition hashes its properties, metadata, dependencies,
# policies, external id and condition when it is built (rsrc_defn._hash_data:
# a walk of each whole snippet, every function in it deep-copied back to its
# JSON form), for __hash__. Heat builds definitions at every parse of a
# template (each load of a stack), at every freeze and reparse, and asks for
# the hash only where it puts definitions in a set or dict: Stack.validate's
# set of distinct definitions. In the Compute 100 and 200 creates of THT
# under cProfile, 8,707 and 17,399 definitions were built and 2,934 and 4,984
# hashes asked for; the hashing took 8.5 s and 24.2 s of 248 s and 530 s,
# growing faster than the node count: a ResourceGroup's nested stack builds a
# definition of every member (with THT's maps: about 16 KB each) at each
# load, and batch_create loads it again at each batch.
# This lever has Heat's __init__ skip those walks, keeps the arguments it
# hashed, and computes the same value, with Heat's own _hash_data on the same
# arguments, when __hash__ is first called; then keeps it. Heat's own
# __init__ still runs (its checks, its attributes); the walks it makes are
# told apart by their caller (the frame of Heat's __init__). One difference:
# a definition Heat cannot hash (a set in it: no JSON or YAML template yields
# one) is built, and each hash of it fails with Heat's error, where Heat
# fails to build it. Cost: a tuple per definition until its first hash.

_DEFERRED_HASH = "_ephemeral_heat_hash_args"


def _lazy_defn_hash():
    if "heat.engine.scheduler" not in sys.modules:
        return ""  # not a Heat engine process (heat-manage): nothing to do
    from heat.engine import rsrc_defn

    RD = rsrc_defn.ResourceDefinition
    params = ("self", "name", "resource_type", "properties", "metadata",
              "depends", "deletion_policy", "update_policy", "description",
              "external_id", "condition")
    heat_init = _require(RD, "__init__", params)
    if len(inspect.signature(heat_init).parameters) != len(params):
        return "ResourceDefinition.__init__ takes other arguments"
    heat_hash_data = _require(rsrc_defn, "_hash_data", ("data",))
    init_code = heat_init.__code__
    if not {"_hash", "_hash_data"} <= set(init_code.co_names):
        return "ResourceDefinition.__init__ does not hash with _hash_data"
    if RD.__hash__.__code__.co_names != ("_hash",):
        return "ResourceDefinition.__hash__ is not its _hash"
    getframe = sys._getframe

    def _hash_data(data):
        if getframe(1).f_code is init_code:
            return 0  # Heat's __init__: __hash__ adds the real value
        return heat_hash_data(data)

    def __init__(self, name, resource_type, properties=None, metadata=None,
                 depends=None, deletion_policy=None, update_policy=None,
                 description=None, external_id=None, condition=None):
        heat_init(self, name, resource_type, properties, metadata, depends,
                  deletion_policy, update_policy, description, external_id,
                  condition)
        # What Heat's __init__ hashed (the deletion policy as given: Heat
        # sets Retain for an external id after hashing it).
        self.__dict__[_DEFERRED_HASH] = (
            properties, metadata, depends, deletion_policy, update_policy,
            external_id, condition)

    def __hash__(self):
        args = self.__dict__.get(_DEFERRED_HASH)
        if args is not None:
            h = self._hash
            for a in args:
                if a is not None:
                    h ^= heat_hash_data(a)  # may raise: asked again next time
            self._hash = h
            del self.__dict__[_DEFERRED_HASH]
        return self._hash

    __init__.__doc__ = heat_init.__doc__
    __hash__.__doc__ = RD.__hash__.__doc__
    rsrc_defn._hash_data = _hash_data
    RD.__init__ = __init__
    RD.__hash__ = __hash__
    return None


class LazyDefnHash(CreateEnginePlugin):
    """ephemeral_heat_lazy_defn_hash: see _lazy_defn_hash."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("lazy_defn_hash", _lazy_defn_hash)


# --- gc_pace ---------------------------------------------------------------
#
# Python runs a full collection of its cyclic garbage collector when the
# objects promoted to its oldest generation since the last one reach a
# quarter of those it holds. Each full collection walks the whole heap, and
# heat-all's heap grows with the deploy (1 GB at Compute 500, where full
# collections took 0.5 s to 1.1 s each and 13.5 % of the create, each
# freeing about 28,000 objects). This lever paces them by time: after a
# full collection that took at least _GC_PACE_MIN_SECONDS, Python's next
# one waits until full collections have had no more than _GC_PACE_SHARE of
# the time since (at most _GC_PACE_MAX_HOLD seconds); then Python's own rule
# decides again; a shorter full collection ends any hold. Young collections
# are left alone, and so is an explicit gc.collect(). The hold is a
# threshold of the oldest generation, set and reset from the collector's
# callbacks (gc.callbacks), so nothing runs between collections. Cost:
# cyclic garbage lives longer, up to the hold.

_GC_PACE_SHARE = 0.05
_GC_PACE_MIN_SECONDS = 0.05
_GC_PACE_MAX_HOLD = 60.0
_GC_PACE_HELD = 1 << 30


class _GCPace(object):
    """A gc callback: after a long full collection, hold the next one."""

    def __init__(self, gc, clock):
        self.gc = gc
        self.clock = clock
        self.started = None  # clock at the start of a full collection
        self.until = None    # clock at which the hold ends
        self.threshold = None  # Python's threshold of the oldest generation
        self.off = False

    def __call__(self, phase, info):
        if self.off:
            return
        try:
            self._step(phase, info.get("generation"))
        except Exception:  # never raise inside the collector: stop pacing
            self.off = True
            LOG.exception("ephemeral.heat: gc_pace failed and is off, "
                          "Python's collector paces itself again")
            try:
                self.release()
            except Exception:
                pass

    def _step(self, phase, generation):
        if generation != 2:  # a young collection: only ends a hold that is due
            if (phase == "stop" and self.until is not None and
                    self.clock() >= self.until):
                self.release()
            return
        now = self.clock()
        if phase == "start":
            self.started = now
            return
        if self.started is None:
            return
        took, self.started = now - self.started, None
        if took < _GC_PACE_MIN_SECONDS:
            self.release()
            return
        self.until = now + min(took * (1.0 / _GC_PACE_SHARE - 1.0),
                               _GC_PACE_MAX_HOLD)
        t0, t1, t2 = self.gc.get_threshold()
        if t2 != _GC_PACE_HELD:
            self.threshold = t2
            self.gc.set_threshold(t0, t1, _GC_PACE_HELD)

    def release(self):
        """End a hold: Python's own rule decides the next full collection."""
        self.until = None
        t0, t1, t2 = self.gc.get_threshold()
        if t2 == _GC_PACE_HELD and self.threshold is not None:
            self.gc.set_threshold(t0, t1, self.threshold)


def _gc_pace():
    import gc

    if not isinstance(getattr(gc, "callbacks", None), list):
        raise TypeError("gc has no callbacks list")
    t0, _, t2 = gc.get_threshold()
    if not gc.isenabled() or t0 == 0 or t2 == 0:
        return "the garbage collector is disabled in this process"
    gc.callbacks.append(_GCPace(gc, time.perf_counter))
    return None


class GCPace(CreateEnginePlugin):
    """ephemeral_heat_gc_pace: see _gc_pace."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("gc_pace", _gc_pace)


# --- show_cache -----------------------------------------------------------
#
# Showing a stack with its outputs (GET /stacks/<name>/<id>, and every
# get_attr of a nested stack's output: StackResource.get_output) loads the
# stack and resolves every output, through every nested stack they name:
# about half a second for tripleo-heat-templates at Compute 2, and it grows
# with the node count. A deploy asks for the same outputs three times
# after the create (heat_stack's result, the working dir's saved outputs,
# config-download), with nothing written in between.
#
# This lever keeps what EngineService.show_stack returned for a stack that
# is not IN_PROGRESS, and answers the same question (the same stack
# identity, outputs or not, the same tenant, user and admin flag) from it
# while nothing has been written to the database since: every statement
# other than a SELECT on the database engine counts as a write and drops
# the whole cache, and a result is kept only if no write happened while it
# was computed. Each answer is a fresh copy. It is on only for a sqlite
# database, which one heat-all process alone writes (a pod's engines share
# MySQL, and a write by another process would not be seen here).

_SHOW_CACHE_MAX_BYTES = 64 << 20

_writes = [0]  # statements other than SELECT executed (show_cache)


def _count_writes(engine):
    from sqlalchemy import event

    def before(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip()[:6].upper() != "SELECT":
            _writes[0] += 1

    event.listen(engine, "before_cursor_execute", before)


def _show_cache():
    if "heat.engine.scheduler" not in sys.modules:
        return ""  # not a Heat engine process (heat-manage): nothing to do
    import pickle
    from heat.engine import service

    EngineService = service.EngineService
    orig = _require(EngineService, "show_stack",
                    ("self", "cnxt", "stack_identity", "resolve_outputs"))
    cache = {}
    state = {"gen": None, "bytes": 0}

    def show_stack(self, cnxt, stack_identity, resolve_outputs=True):
        try:
            key = (tuple(sorted(dict(stack_identity).items())),
                   bool(resolve_outputs), cnxt.tenant_id, cnxt.user_id,
                   bool(cnxt.is_admin), bool(cnxt.show_deleted))
            hash(key)
        except Exception:  # no identity (all stacks) or an odd one
            return orig(self, cnxt, stack_identity, resolve_outputs)
        gen = _writes[0]
        if state["gen"] != gen:
            cache.clear()
            state["gen"], state["bytes"] = gen, 0
        hit = cache.get(key)
        if hit is not None:
            return pickle.loads(hit)
        result = orig(self, cnxt, stack_identity, resolve_outputs)
        if _writes[0] != gen or not result:
            return result  # written meanwhile: not one state of the database
        status = str(result[0].get("stack_status", "IN_PROGRESS"))
        if status.endswith("IN_PROGRESS"):
            return result
        try:
            b = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
        except Exception:
            return result
        if state["bytes"] + len(b) <= _SHOW_CACHE_MAX_BYTES:
            cache[key] = b
            state["bytes"] += len(b)
        return pickle.loads(b)

    EngineService.show_stack = show_stack
    return None


def show_cache_applies(url):
    """show_cache's rule: only a sqlite database (one writing process)."""
    return str(getattr(url, "drivername", "")).startswith("sqlite")


class ShowCache(CreateEnginePlugin):
    """ephemeral_heat_show_cache: see _show_cache."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        self._on = show_cache_applies(url) and \
            _apply_once("show_cache", _show_cache)

    def engine_created(self, engine):
        if self._on:
            _count_writes(engine)


# --- sqlite_no_ping -------------------------------------------------------
#
# oslo.db pings the database ("SELECT 1") every time a session takes a
# connection, to notice a database server that went away. A sqlite file
# has no server: the ping is a statement for nothing, thousands of times
# per deploy. This lever skips it for sqlite only.

def _sqlite_no_ping():
    from oslo_db.sqlalchemy import engines
    orig = _require(engines, "_connect_ping_listener",
                    ("connection", "branch"))

    def _connect_ping_listener(connection, branch):
        if connection.dialect.name == "sqlite":
            return
        return orig(connection, branch)

    engines._connect_ping_listener = _connect_ping_listener
    return None


class SQLiteNoPing(CreateEnginePlugin):
    """ephemeral_heat_sqlite_no_ping: see _sqlite_no_ping."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("sqlite_no_ping", _sqlite_no_ping)


# --- sqlite_fk_indexes ----------------------------------------------------
#
# Heat's schema declares foreign keys (resource.stack_id, event.stack_id,
# resource_data.resource_id, ...) but no index on most of them: MySQL's
# InnoDB creates one for every foreign key by itself, sqlite does not. On
# sqlite every "resources of this stack", "events of this stack" or "data
# of this resource" query therefore reads the whole table, and each one
# costs more as the deploy grows. This lever gives each foreign-key column
# of a sqlite file database that no index starts with the index InnoDB
# would have (CREATE INDEX IF NOT EXISTS ephemeral_heat_fk_<table>_<column>),
# once, when Heat opens the database. The schema is read from the database
# itself (sqlite_master, PRAGMA foreign_key_list), so it follows Heat's
# version; tables that do not exist yet (heat-manage db_sync on an empty
# database) are skipped.

FK_INDEX_PREFIX = "ephemeral_heat_fk_"


def fk_index_statements(conn):
    """The CREATE INDEX statements the sqlite connection conn lacks."""
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    out = []
    for table in tables:
        first_columns = set()
        for idx in conn.execute("PRAGMA index_list(%s)" % _quote(table)):
            cols = list(conn.execute("PRAGMA index_info(%s)" % _quote(idx[1])))
            if cols:
                first_columns.add(min(cols)[2])
        for pk in conn.execute("PRAGMA table_info(%s)" % _quote(table)):
            if pk[5] == 1:  # first column of the primary key
                first_columns.add(pk[1])
        fk_columns = sorted({fk[3] for fk in conn.execute(
            "PRAGMA foreign_key_list(%s)" % _quote(table))})
        for col in fk_columns:
            if col in first_columns:
                continue
            name = "%s%s_%s" % (FK_INDEX_PREFIX, table, col)
            out.append("CREATE INDEX IF NOT EXISTS %s ON %s (%s)" % (
                _quote(name), _quote(table), _quote(col)))
    return out


def _quote(name):
    return '"%s"' % name.replace('"', '""')


def _sqlite_file(url):
    """The file of a sqlite file database URL, else None."""
    if url.get_backend_name() == "sqlite" and url.database not in (
            None, "", ":memory:") and url.query.get("mode") != "memory":
        return url.database
    return None


class SQLiteFKIndexes(_SQLiteIndexes):
    """ephemeral_heat_sqlite_fk_indexes: see fk_index_statements."""

    applied_as = "sqlite_fk_indexes"
    statements = staticmethod(fk_index_statements)


# --- sql_cache_json -------------------------------------------------------
#
# SQLAlchemy 1.4 caches the compiled form of each statement, but only for
# statements whose column types say they may be cached. Heat's Json column
# type (heat/db/sqlalchemy/types.py) inherits from LongText, which says so,
# without saying so itself; SQLAlchemy therefore recompiles every statement
# that touches a Json column (stacks, resources, events, templates: most of
# Heat's statements) and warns "TypeDecorator Json() will not produce a
# cache key". Json has no state of its own that would change the SQL, so
# this lever marks it cacheable (cache_ok = True).

def _sql_cache_json():
    from heat.db.sqlalchemy import types
    json_type = _require(types, "Json")
    if "cache_ok" in json_type.__dict__:
        return ""  # Heat already says it (nothing to do)
    if not issubclass(json_type, types.LongText) or \
            set(json_type.__dict__) - {"__module__", "__doc__", "__qualname__",
                                       "process_bind_param",
                                       "process_result_value"}:
        raise TypeError("Json has state or settings of its own")
    json_type.cache_ok = True
    return None


class SQLCacheJSON(CreateEnginePlugin):
    """ephemeral_heat_sql_cache_json: see _sql_cache_json."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("sql_cache_json", _sql_cache_json)


# --- fake_rpc_wakeup ------------------------------------------------------
#
# heat-all on transport_url fake:// passes RPC messages (the API to the
# engine, a stack to its nested stacks) through oslo.messaging's in-process
# fake driver, whose listeners look at their queues every 50 ms
# (FakeListener.poll sleeps time.sleep(0.05) when they are empty): each
# message waits 25 ms on average before an engine picks it up, and every
# nested stack create or update is one. This lever makes a listener wait
# on an event that delivering a message sets, with the same 50 ms as the
# longest wait; the queues, the messages and their order are the driver's.

def _fake_rpc_wakeup():
    import threading
    import weakref
    from oslo_messaging._drivers import base
    from oslo_messaging._drivers import impl_fake

    listener = impl_fake.FakeListener
    _require(listener, "poll", ("in_self", "timeout"))  # batch_poll_helper's
    orig_deliver = _require(impl_fake.FakeExchange, "deliver_message",
                            ("self", "topic", "ctxt", "message"))
    _require(base, "batch_poll_helper")
    _require(impl_fake, "FakeIncomingMessage")
    names = set(listener.__init__.__code__.co_names)
    for attr in ("_exchange_manager", "_targets", "_pool", "_stopped"):
        if attr not in names:
            raise TypeError("FakeListener has no %s" % attr)
    events = weakref.WeakSet()

    @base.batch_poll_helper
    def poll(self, timeout=None):
        ev = self.__dict__.get("_ephemeral_heat_event")
        if ev is None:
            ev = self._ephemeral_heat_event = threading.Event()
            events.add(ev)
        deadline = None if timeout is None else time.time() + timeout
        while not self._stopped.is_set():
            ev.clear()  # before looking: a message delivered after sets it
            for target in self._targets:
                exchange = self._exchange_manager.get_exchange(target.exchange)
                ctxt, message, reply_q, requeue = exchange.poll(target,
                                                                self._pool)
                if message is not None:
                    return impl_fake.FakeIncomingMessage(ctxt, message,
                                                         reply_q, requeue)
            pause = 0.050
            if deadline is not None:
                pause = deadline - time.time()
                if pause < 0:
                    break
                pause = min(pause, 0.050)
            ev.wait(pause)
        return None

    def deliver_message(self, *args, **kwargs):
        result = orig_deliver(self, *args, **kwargs)
        for ev in list(events):
            ev.set()
        return result

    listener.poll = poll
    impl_fake.FakeExchange.deliver_message = deliver_message
    return None


class FakeRPCWakeup(CreateEnginePlugin):
    """ephemeral_heat_fake_rpc_wakeup: see _fake_rpc_wakeup."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        _apply_once("fake_rpc_wakeup", _fake_rpc_wakeup)
