package bench

// Findings is the profile-backed part of results.md: how the tuning was
// chosen and what limits an ephemeral Heat's speed. It is text, kept by
// hand beside internal/launch/tuning.go.
const Findings = `## How the tuning was found, and what limits it

Method: heat-all was run under cProfile (a wrapper that imports heat.cmd.all,
enables the profiler and dumps the stats on a signal after the create), and
single settings were tried on test (b) in interleaved exploration runs
before the measured rows above. Exploration numbers below are single runs on
the shared machine (the disk is shared too: the same configuration varied
from 17 s to 35 s between runs when it fsyncs), so only large effects were
trusted and every chosen setting is measured again above.

**Stock (convergence engine), 57 s profiled.** 18.4 s (32 %) of the wall
time heat-all sits idle in epoll: in convergence every resource is a
check_resource message, and the 50 members of the group complete into the
same sync points, whose writers conflict and retry with random exponential
back-off (tenacity wait_random_exponential in heat/engine/sync_point.py,
10 ms of jitter per outstanding predecessor). The rest: SQLAlchemy 14.7 s, sqlite commit
4.4 s and execute 4.3 s, 6332 sqlite connects and closes 1.7 s. Removing the
fsyncs under convergence changed nothing (sqlite_synchronous=false 55.5 s,
and with the database also on tmpfs 56.3 s, against 56 s stock): the engine's
waits bound it, not the disk.

**Legacy engine, 32 s profiled** (27.7 s and 35.5 s unprofiled): idle falls to
3.1 s; the database is now most of the time: sqlite commit 3.75 s, execute
3.0 s, connects and closes 1.5 s, SQLAlchemy 10.6 s.

**Legacy + sqlite_synchronous=false** (exploration 17.5 s, 15.2 s; tmpfs
instead gave 17.6 s, 15.5 s): commits no longer wait for the disk. The
profile (27 s under load average 3.4) is then: SQLAlchemy 10.5 s (38 %),
Heat's own code 2.0 s, per-connection sqlite cost 3.2 s (4772 connects,
closes and the first statement on each connection, which re-reads the
schema: oslo.db opens sqlite file databases with SQLAlchemy's NullPool, a
new connection per session), sqlite statements 1.1 s, idle 2.6 s (the
legacy engine's 1 s polling of nested stacks, hard-coded in
heat/engine/scheduler.py), eventlet 0.9 s, logging 0.3 s.

**The two settings work together.** With only two settings affecting
create time, "stock + one setting" is also "ours minus the other": the legacy
engine alone takes test (b) from about 56 s to about 21 s; adding
sqlite_synchronous=false takes it to about 13 s, although that setting alone
changes nothing under the convergence engine. Once both are on, the disk no
longer matters: in an interleaved exploration of our defaults (12.2, 14.4,
12.2 s) against the same plus the live sqlite on tmpfs (12.4, 14.3, 11.1 s)
and plus journal_mode=WAL (14.2, 13.3, 13.3 s), neither helped.

**What limits it.** Heat issues about 11,800 SQL statements for test (b)'s
~200 resources and 51 stacks (about 60 per resource: resource and event
rows, properties data, stack reloads, locks), each through the SQLAlchemy
ORM on a fresh sqlite connection. No heat.conf or oslo option changes the
number of statements or the connection pooling for sqlite files, so with
safe settings the remaining create time is Python CPU in SQLAlchemy and
Heat on a 2-core machine shared with other jobs (SQLAlchemy 1.4.46's
pysqlite dialect picks NullPool for any file database, and oslo.db only
replaces SingletonThreadPool, for :memory:). 0.2x of stock would need about
11 s for test (b); our defaults reach about 0.23x (about 0.14x on test (a),
where convergence is slowest). The rest would need changes to Heat itself
(one pooled sqlite connection, fewer ORM round trips per resource), not
configuration.

**Safety of the legacy engine, checked with our defaults** (besides the
internal/launch, internal/stack and internal/dumps suites): a failed create
is repaired by an update (CREATE_FAILED, then PUT: UPDATE_COMPLETE); an
UPDATE_FAILED stack is repaired by a PATCH update (Heat falls back on the
stored previous template); an update while a create runs is refused with
409 ActionInProgress; after kill -9 of heat-all in the middle of a create and
a relaunch on the same database, Heat resets the stack to CREATE_FAILED
("Engine went down during stack CREATE") about 4 s after start, and an update
then completes; deletes complete. The convergence engine never resets an
interrupted stack (reset_stack_status only handles legacy stacks), so a
stack interrupted under stock settings stays IN_PROGRESS, which heat_stack
refuses to update. Restoring a dump goes through the same start-up reset.

**Tried and not taken** (exploration, test (b), on top of the legacy engine
unless said):

- [cache] enabled=true, backend=dogpile.cache.memory: 28.6 s and 17.4 s vs
  27.7 s and 35.5 s without: no effect. Heat caches constraint validation,
  resource finders and service extensions only; test (b) (and TripleO's
  deployed-server templates) use none of them.
- default_log_levels with heat=WARN: 24.3 s and 41.4 s: within the noise
  (logging is 0.3 s in the profile) and it hides the INFO lines operators
  read in heat-all.log.
- The live sqlite on tmpfs: 17.6 s and 15.5 s, the same as
  sqlite_synchronous=false (with both: 16.4 s and 13.3 s), but the database
  of a running deployment would not survive a reboot.
- journal_mode=WAL (set by the launcher after db_sync; would keep
  durability): 17.6 s and 18.5 s; with sqlite_synchronous=false 24.6 s and
  15.4 s. No clear gain over sqlite_synchronous=false alone in this noise,
  for a launcher change; not taken.
- max_resources_per_stack=-1 and max_events_per_stack=0 (no resource
  counting over the stack tree, no event purge checks): three interleaved
  runs each in the measured run of 2026-11-22 08:20, alone on top of stock:
  55.8 s and 55.8 s against 55.9 s stock (1.000x, 0.999x); with both on top
  of our defaults, single exploration runs of 13.1-15.5 s against 14.2-16.4 s,
  within the noise. No measured gain, so not taken (TripleO's undercloud sets
  max_resources_per_stack=-1; it is harmless but buys nothing here). The
  scale_group_50 row of that run was measured with both still in our
  defaults; they were removed after it.
- Convergence with the fsync cost removed: see above (55.5 s).
- Worker counts: not changed. heat-all on the fake:// transport is one
  process (num_engine_workers 1, heat_api workers 1, as stock); more engine
  workers need a message bus (the pod launcher, whose rows are to come).
`
