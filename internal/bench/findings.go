package bench

// Findings is the profile-backed part of results.md: how the tuning was
// chosen and what limits an ephemeral Heat's speed. It is text, kept by
// hand beside internal/tuning/tuning.go.
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

**Legacy + sqlite_synchronous=false work together.** The legacy engine
alone takes test (b) from about 56 s to about 21 s; adding
sqlite_synchronous=false takes it to about 13 s, although that setting alone
changes nothing under the convergence engine. Once both are on, the disk no
longer matters: in an interleaved exploration of these two (12.2, 14.4,
12.2 s) against the same plus the live sqlite on tmpfs (12.4, 14.3, 11.1 s)
and plus journal_mode=WAL (14.2, 13.3, 13.3 s), neither helped.

**The per-connection cost, and the pool plugin.** With the two settings
above, heat-all used 9.6-10.6 s of CPU for a 13.1-14.5 s create (CPU time of
the heat-all process, from /proc, over the create): one core busy three
quarters of the time. The profile put a large part in sqlite connections:
Heat's sessions run in autocommit mode, and SQLAlchemy 1.4's pysqlite
dialect gives any file database a NullPool, so every statement outside a
transaction opens a sqlite connection (oslo.db's PRAGMAs and its SELECT 1
ping, then a parse of the schema on the first statement) and closes it:
about 4,700 connections for test (b). No heat.conf or oslo.db option picks
the pool class (oslo.db only replaces SingletonThreadPool, for :memory:),
but [database] connection_parameters reaches the SQLAlchemy URL, and a URL
may name a SQLAlchemy engine plugin (the CreateEnginePlugin hook, found
through a Python entry point). Our plugin (internal/heatdir/python/, 40
lines, written into the heat_dir by the launcher) sets a QueuePool with no
overflow limit, as SQLAlchemy 2.0 does by default for sqlite files, and
leaves every other database alone. Exploration, three interleaved pairs:
with the plugin 11.1, 10.2, 10.4 s (heat-all CPU 7.6, 6.6, 6.6 s) against
without 14.5, 13.1, 13.3 s (CPU 10.4, 9.6, 10.0 s). Heat itself is
unchanged: same statements, same transactions, same locking (each session
still has its own connection, as with NullPool; a connection goes back to
the pool only after its transaction ended, and the pool rolls back
whatever it gets back). A test (internal/heatdir) checks the pool the
plugin gives under oslo.db, and internal/launch that heat-all keeps its
database open between requests.

**What limits it now.** heat-all uses about 6.5 s of CPU for test (b) and
idles the rest of the create: the legacy engine's task runner sleeps 1 s
between steps of every stack's create (hard-coded in
heat/engine/scheduler.py), and the root stack, the group's nested stack and
each member's nested stack wait on each other in those steps. Heat issues
about 11,700 SQL statements for test (b)'s ~200 resources and 52 stacks
(about 60 per resource: resource and event rows, properties data, stack
reloads, locks), each through the SQLAlchemy ORM; no option changes their
number. The client's polling is not a factor: polling every 3 s instead of
every 200 ms changed heat-all's CPU time by less than the noise.

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
- Worker counts: not changed for native. heat-all on the fake:// transport
  is one process (num_engine_workers 1, heat_api workers 1, as stock); more
  engine workers need a message bus and MySQL (several processes writing one
  sqlite file would contend for its lock): that is the pod, whose rows
  compare 1 and 2 engine workers.
`
