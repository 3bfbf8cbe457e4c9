"""heatprof: heat-all under a sampling profiler and a state log.

A measuring tool of ephemeral.heat's benchmark (internal/bench/profile.go;
the method is written down in docs/profile-real-tht.md). It runs heat-all
in this process and, in a real OS thread started before eventlet patches
anything, samples heat-all's main thread every HEATPROF_INTERVAL seconds
(default 0.005):

- whether the main thread runs Python code or sits in eventlet's hub
  waiting (epoll): all greenthreads share that one OS thread, so "in the hub"
  means nothing in heat-all can run; its CPU time (per thread CPU clock)
  is read at every sample, so busy wall time splits into CPU and off-CPU
  (blocked in a system call: fsync, a lock);
- for a busy sample, the library the innermost frame is in (sqlite +
  SQLAlchemy + oslo.db, YAML, JSON, RPC, logging, Heat itself, ...), every
  function on the stack (inclusive) and the innermost one (self CPU). Only
  code objects are read from this thread: reading a running frame's locals
  from another thread can crash the interpreter.

Every wait of eventlet's hub is also accounted, in heat-all's main thread
(hub.wait wrapped), to what the hub waits for: its earliest timer (the
fake RPC driver's 50 ms queue polls left out: they fire whatever happens)
and, when that timer wakes a stack task sleeping in the legacy engine's
TaskRunner._sleep, the depth of the stack and the resources its step polls.

It also logs every Stack.state_set and Resource.state_set (time, stack,
depth, action, status) and every TaskRunner._sleep, so that the report
can say how long each nested stack took and how long a parent took to
notice that a nested stack had completed.

Control, through files in HEATPROF_DIR: `start` opens a measuring window
(everything before is discarded), `stop` closes it and writes
`profile.json`, then both control files are removed.
"""

import _thread
import collections
import heapq
import json
import os
import sys
import time

# Captured before heat.cmd.all monkey-patches them.
_real_sleep = time.sleep
_start_thread = _thread.start_new_thread
_main_ident = _thread.get_ident()
_main_clock = time.pthread_getcpuclockid(_main_ident)

DIR = os.environ["HEATPROF_DIR"]
# HEATPROF_CPROFILE=1 also runs cProfile over the window (exact call counts,
# at about twice the CPU cost) and writes profile.pstats.
CPROFILE = os.environ.get("HEATPROF_CPROFILE") == "1"
INTERVAL = float(os.environ.get("HEATPROF_INTERVAL", "0.005"))
# Idle time of stacks up to this depth is broken down by the resources
# their sleeping task steps.
DETAIL_DEPTH = int(os.environ.get("HEATPROF_DETAIL_DEPTH", "1"))

state = {"on": False}
hub_ref = {}


def _reset():
    state.update(
        t0=time.monotonic(), cpu0=time.clock_gettime(_main_clock),
        ptimes0=os.times(), samples=0, wall=collections.Counter(),
        cpu=collections.Counter(), idle=collections.Counter(),
        incl=collections.Counter(), self_cpu=collections.Counter(), log=[],
        sql_s=collections.Counter(), sql_n=collections.Counter(), sleeps=collections.Counter(),
        sleep_s=collections.Counter(), last_t=time.monotonic(),
        last_cpu=time.clock_gettime(_main_clock))


CATEGORIES = [
    ("logging", ("/logging/", "/oslo_log/")),
    ("yaml", ("/yaml/",)),
    ("json", ("/json/", "/oslo_serialization/")),
    ("db", ("/sqlalchemy/", "/oslo_db/", "/sqlite3/", "/heat/db/",
            "/heat/objects/")),
    ("rpc", ("/oslo_messaging/", "/kombu/", "/heat/rpc/")),
    ("api", ("/webob/", "/routes/", "/paste/", "/eventlet/wsgi.py",
             "/heat/api/", "/heat/common/wsgi.py")),
    ("eventlet", ("/eventlet/", "/greenlet/")),
    ("heat", ("/heat/",)),
]


def _category(frame):
    f = frame
    while f is not None:
        fn = f.f_code.co_filename
        for name, parts in CATEGORIES:
            for p in parts:
                if p in fn:
                    return name
        f = f.f_back
    return "other"


def _short(code):
    fn = code.co_filename
    i = fn.find("dist-packages/")
    if i >= 0:
        fn = fn[i + len("dist-packages/"):]
    return "%s:%s" % (fn, code.co_name)


def _running_resources(runner):
    """The resources a sleeping stack task steps: those started and not done
    in the DependencyTaskGroup its (suspended) generator delegates to."""
    try:
        gen = getattr(runner, "_runner", None)
        for _ in range(20):
            if gen is None:
                return ""
            frame = getattr(gen, "gi_frame", None)
            group = frame.f_locals.get("self") if frame is not None else None
            inner = getattr(group, "_runner", None)
            if inner is not None and getattr(gen, "gi_yieldfrom", None) is None:
                # TaskRunner.as_task of a nested TaskRunner: follow it.
                gen = inner
                continue
            runners = getattr(group, "_runners", None)
            if isinstance(runners, dict):
                names = sorted("%s(%s)" % (getattr(k, "name", k), k.type())
                               for k, r in runners.items()
                               if r.started() and not r.done())
                if len(names) > 3:
                    names = names[:3] + ["+%d" % (len(names) - 3)]
                return ", ".join(names)
            gen = getattr(gen, "gi_yieldfrom", None)
    except Exception as e:
        return "?" + type(e).__name__
    return ""


def _sleeping_depth(frame):
    """Depth of the stack whose TaskRunner sleeps in frame's greenthread."""
    f = frame
    in_sleep = False
    while f is not None:
        code = f.f_code
        if code.co_name == "_sleep" and (
                code.co_filename.endswith("heat/engine/scheduler.py") or
                code.co_filename.endswith("ephemeral_heat_engine.py")):
            in_sleep = True
        elif (in_sleep and code.co_filename.endswith("heat/engine/scheduler.py")
              and code.co_name in ("__call__", "run_to_completion")):
            try:
                runner = f.f_locals.get("self")
                owner = getattr(runner._task, "__self__", None)
            except Exception:
                runner = owner = None
            d = getattr(owner, "nested_depth", None)
            if isinstance(d, int):
                if d <= DETAIL_DEPTH:
                    return "scheduler sleep, stack depth %d, stepping %s" % (
                        d, _running_resources(runner))
                return "scheduler sleep, stack depth %d" % d
            name = str(getattr(runner, "name", "?"))
            return "scheduler sleep, %s" % name.split("(")[0][:60]
        f = f.f_back
    return None


# Greenthreads that wake up periodically whatever happens (the fake RPC
# driver's listeners poll their queues every 50 ms, also with our
# fake_rpc_wakeup lever): an idle hub is not waiting *for* them, so the
# reason is the next timer after them.
POLLERS = (("oslo_messaging/_drivers/impl_fake.py", "poll"),
           ("ephemeral_heat_engine.py", "poll"))


def _timer_reason(timer):
    cb, args = timer.tpl[0], timer.tpl[1]
    g = getattr(cb, "__self__", None)
    if getattr(cb, "__name__", "") == "_do_send":
        # An eventlet Event's wait(timeout): the waiting greenthread is the
        # timer's last argument.
        g = args[-1] if args else None
    frame = getattr(g, "gr_frame", None)
    if frame is not None:
        r = _sleeping_depth(frame)
        if r:
            return r
        f = frame
        while f is not None:
            fn = f.f_code.co_filename
            for p in POLLERS:
                if fn.endswith(p[0]) and f.f_code.co_name == p[1]:
                    return None
            f = f.f_back
        f = frame
        while f is not None:
            fn = f.f_code.co_filename
            if ("/eventlet/" not in fn and "/greenlet/" not in fn and
                    not fn.endswith("threading.py")):
                return "other sleep in " + _short(f.f_code)
            f = f.f_back
    return "timer " + getattr(cb, "__qualname__", repr(cb))[:80]


def _idle_reason():
    hub = hub_ref.get("hub")
    if hub is None:
        return "unknown"
    try:
        timers = heapq.nsmallest(12, list(hub.timers), key=lambda t: t[0])
        for when, timer in timers:
            if timer.called:
                continue
            r = _timer_reason(timer)
            if r:
                return r
        return "no timer but the RPC listeners' polls (waiting for I/O)"
    except Exception as e:  # the hub changes under us: skip
        return "unknown (%s)" % type(e).__name__


def _is_idle(frame):
    code = frame.f_code
    return (code.co_name in ("do_poll", "wait") and
            "/eventlet/hubs/" in code.co_filename)


def _sample():
    frame = sys._current_frames().get(_main_ident)
    now = time.monotonic()
    cpu = time.clock_gettime(_main_clock)
    dw, dc = now - state["last_t"], cpu - state["last_cpu"]
    state["last_t"], state["last_cpu"] = now, cpu
    if frame is None:
        return
    state["samples"] += 1
    # Only code objects are read here: the main thread's frames are live
    # (reading their locals from this thread is not safe).
    if _is_idle(frame):
        key = "idle"
    else:
        key = _category(frame)
        state["self_cpu"][_short(frame.f_code)] += dc
        seen = set()
        f = frame
        while f is not None:
            s = _short(f.f_code)
            if s not in seen:
                seen.add(s)
                state["incl"][s] += dw
            f = f.f_back
    state["wall"][key] += dw
    state["cpu"][key] += dc


def _wrap_hub_wait(hub):
    """Account every wait of eventlet's hub (in heat-all's main thread, where
    the suspended greenthreads can be inspected safely) to what it waits for
    (_idle_reason, decided before the wait)."""
    orig = hub.wait

    def wait(seconds=None):
        if not state["on"]:
            return orig(seconds)
        try:
            reason = _idle_reason()
        except Exception as e:
            reason = "unknown (%s)" % type(e).__name__
        t0 = time.monotonic()
        try:
            return orig(seconds)
        finally:
            state["idle"][reason] += time.monotonic() - t0

    hub.wait = wait


def _control(name):
    p = os.path.join(DIR, name)
    if os.path.exists(p):
        os.unlink(p)
        return True
    return False


def _cprofile(on):
    """cProfile follows one OS thread: enable it in heat-all's main thread
    from a greenthread the sampler schedules there."""
    import cProfile
    hub = hub_ref.get("hub")
    if hub is None:
        return

    def run():
        if on:
            state["cprof"] = cProfile.Profile()
            state["cprof"].enable()
        elif state.get("cprof"):
            state["cprof"].disable()
            state["cprof"].dump_stats(os.path.join(DIR, "profile.pstats"))
            state["cprof"] = None
    hub.schedule_call_global(0, run)


def _write():
    t = time.monotonic() - state["t0"]
    pt = os.times()
    p0 = state["ptimes0"]
    out = {
        "window_s": t,
        "process_cpu_s": (pt.user - p0.user) + (pt.system - p0.system),
        "main_thread_cpu_s": time.clock_gettime(_main_clock) - state["cpu0"],
        "samples": state["samples"],
        "interval_s": INTERVAL,
        "wall_by_category": dict(state["wall"]),
        "cpu_by_category": dict(state["cpu"]),
        "idle_by_reason": dict(state["idle"]),
        "inclusive_top": state["incl"].most_common(120),
        "self_cpu_top": state["self_cpu"].most_common(80),
        "sql_top": [[k, v, state["sql_n"][k]] for k, v in state["sql_s"].most_common(40)],
        "sql_statements": sum(state["sql_n"].values()),
        "sql_cpu_s": sum(state["sql_s"].values()),
        "sleep_calls_by_depth": {str(k): v for k, v in state["sleeps"].items()},
        "sleep_requested_s_by_depth": {str(k): v for k, v in state["sleep_s"].items()},
        "log": state["log"],
    }
    tmp = os.path.join(DIR, "profile.json.tmp")
    with open(tmp, "w") as f:
        json.dump(out, f)
    os.rename(tmp, os.path.join(DIR, "profile.json"))


def _sampler():
    n = 0
    while True:
        _real_sleep(INTERVAL)
        n += 1
        if n % 20 == 0:
            if _control("start"):
                _reset()
                state["on"] = True
                if CPROFILE:
                    _cprofile(True)
            if state["on"] and _control("stop"):
                state["on"] = False
                if CPROFILE:
                    _cprofile(False)
                try:
                    _write()
                except Exception as e:
                    with open(os.path.join(DIR, "error"), "w") as f:
                        f.write(repr(e))
        if state["on"]:
            try:
                _sample()
            except Exception:
                pass


def _patch_sql():
    """Time every SQL statement (cursor execute), by statement text."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    @event.listens_for(Engine, "before_cursor_execute")
    def before(conn, cursor, statement, parameters, context, executemany):
        conn.info["heatprof_t0"] = time.thread_time()

    @event.listens_for(Engine, "after_cursor_execute")
    def after(conn, cursor, statement, parameters, context, executemany):
        t0 = conn.info.pop("heatprof_t0", None)
        if t0 is None or not state["on"]:
            return
        key = " ".join(statement.split())[:160]
        state["sql_s"][key] += time.thread_time() - t0
        state["sql_n"][key] += 1


def _patch():
    from heat.engine import resource, scheduler
    from heat.engine import stack as stack_mod

    orig_stack_set = stack_mod.Stack.state_set
    orig_res_set = resource.Resource.state_set
    orig_sleep = scheduler.TaskRunner._sleep

    last_state = {}

    def stack_state_set(self, action, status, reason):
        r = orig_stack_set(self, action, status, reason)
        if state["on"]:
            last_state[self.id] = (action, status)
            state["log"].append([time.monotonic() - state["t0"], "stack",
                                 self.id, self.nested_depth, self.name,
                                 action, status, None])
        return r

    orig_store = stack_mod.Stack.store

    def stack_store(self, *a, **kw):
        # Stack updates set their state without state_set (update_task
        # stores it): log a change of state seen at store() too.
        r = orig_store(self, *a, **kw)
        if state["on"] and self.id is not None:
            st = (self.action, self.status)
            if last_state.get(self.id) != st:
                last_state[self.id] = st
                state["log"].append([time.monotonic() - state["t0"], "stack",
                                     self.id, self.nested_depth, self.name,
                                     self.action, self.status, None])
        return r

    def res_state_set(self, action, status, *a, **kw):
        r = orig_res_set(self, action, status, *a, **kw)
        if state["on"]:
            nested = self.resource_id if hasattr(self, "nested") else None
            state["log"].append([time.monotonic() - state["t0"], "resource",
                                 self.stack.id, self.stack.nested_depth,
                                 self.name, action, status, nested])
        return r

    def sleep(self, wait_time):
        if state["on"] and wait_time:
            owner = getattr(self._task, "__self__", None)
            d = getattr(owner, "nested_depth", "other")
            state["sleeps"][d] += 1
            state["sleep_s"][d] += wait_time
        return orig_sleep(self, wait_time)

    stack_mod.Stack.state_set = stack_state_set
    stack_mod.Stack.store = stack_store
    resource.Resource.state_set = res_state_set
    scheduler.TaskRunner._sleep = sleep


def main():
    _reset()
    _start_thread(_sampler, ())
    import heat.cmd.all as heat_all  # monkey-patches (eventlet)
    import eventlet.hubs
    hub_ref["hub"] = eventlet.hubs.get_hub()
    _wrap_hub_wait(hub_ref["hub"])
    _patch()
    _patch_sql()
    sys.argv[0] = "heat-all"
    sys.exit(heat_all.main())


if __name__ == "__main__":
    main()
