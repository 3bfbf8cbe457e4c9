"""ephemeral.heat: a connection pool for Heat's sqlite database.

A SQLAlchemy engine plugin (the documented CreateEnginePlugin hook). The
launcher writes this file to <heat_dir>/python, puts that directory on the
PYTHONPATH of heat-all and heat-manage, and names the plugin in heat.conf:

    [database]
    connection_parameters = plugin=ephemeral_heat_sqlite_pool

SQLAlchemy 1.4 gives a sqlite file database a NullPool: every database
session opens a new sqlite connection (open, oslo.db's PRAGMAs and ping, a
parse of the schema) and closes it again, thousands of times per deploy.
This plugin gives the engine a QueuePool instead, as SQLAlchemy 2.0 does by
default for sqlite files. There is no limit on overflow connections, so a
session never waits for one (as with NullPool); idle connections hold no
locks (oslo.db runs sqlite in autocommit mode and the pool rolls back what
it gets back). Any other database, an in-memory one, or an engine whose
pool was chosen by the caller is left alone.
"""

from sqlalchemy import pool
from sqlalchemy.engine import CreateEnginePlugin

# Connections kept open between sessions.
POOL_SIZE = 5


class SQLitePool(CreateEnginePlugin):
    """Pool the connections of a sqlite file database."""

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        if url.get_backend_name() != "sqlite" or kwargs.get("poolclass"):
            return
        if url.database in (None, "", ":memory:") or url.query.get("mode") == "memory":
            return
        kwargs["poolclass"] = pool.QueuePool
        kwargs["pool_size"] = POOL_SIZE
        kwargs["max_overflow"] = -1
        # Green threads share one OS thread; a pooled connection is used by
        # one session at a time.
        connect_args = kwargs.setdefault("connect_args", {})
        connect_args.setdefault("check_same_thread", False)
