"""Exercises the partial index of FAILED resources that nested_unchanged and
provider_unchanged give a sqlite database (python/ephemeral_heat_engine.py,
FAILED_INDEX), and _failed_in_tree, the question it answers, with Heat's own
database models on a sqlite file; prints what it saw as JSON, for
TestFailedIndex (internal/heatdir/python_test.go).

argv: a scratch directory, the plugin name, then the mode: "schema" (Heat's
tables exist when Heat opens the database, as for heat-all) or "empty" (no
tables yet, as for heat-manage db_sync).
"""
import json
import sys

from heat.engine import scheduler  # noqa: F401 (a Heat engine process)
import sqlalchemy as sa
from sqlalchemy import event

from heat.db.sqlalchemy import api as db_api
from heat.db.sqlalchemy import models

import ephemeral_heat_engine as ehe
import plugin_db
import plugin_warnings

work, plugin, mode = sys.argv[1:4]
db = plugin_db.configure(work, plugin)
warnings = plugin_warnings.collect()

if mode == "schema":  # Heat's tables, made before Heat opens the file
    plain = sa.create_engine("sqlite:///" + db)
    models.BASE.metadata.create_all(plain)
    plain.dispose()

engine = db_api.get_engine()  # loads the plugin, as Heat's engine does
with engine.connect() as c:
    out = {"indexes": [r[0] for r in c.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'index' "
        "AND tbl_name = 'resource' AND name = ?", (ehe.FAILED_INDEX,))]}
out["applied"] = ehe._applied.get("failed_resource_index")
if mode == "empty":
    out["warnings"] = warnings
    print(json.dumps(out))
    sys.exit(0)

session = sa.orm.Session(bind=engine)
n = [0]


def add(root, status, action="CREATE"):
    n[0] += 1
    r = models.Resource(uuid="r%d" % n[0], name="r%d" % n[0],
                        stack_id=root, root_stack_id=root,
                        action=action, status=status)
    session.add(r)
    session.flush()
    return r.id


for _ in range(200):
    add("tree-a", "COMPLETE")
    add("tree-b", "COMPLETE")
b_failed = add("tree-b", "FAILED")
session.commit()

statements = []


def seen(conn, cursor, statement, params, context, executemany):
    statements.append((statement, params))


event.listen(engine, "before_cursor_execute", seen)
out["a_none_failed"] = ehe._failed_in_tree(session, "tree-a")
out["b_failed"] = ehe._failed_in_tree(session, "tree-b") == b_failed
out["missing_tree"] = ehe._failed_in_tree(session, "tree-c")
event.remove(engine, "before_cursor_execute", seen)
stmt, params = statements[-1]
with engine.connect() as c:
    out["plan"] = " | ".join(str(r[-1]) for r in c.exec_driver_sql(
        "EXPLAIN QUERY PLAN " + stmt, params))

# A resource marked unhealthy (CHECK FAILED) in tree a is found too.
a_unhealthy = add("tree-a", "FAILED", action="CHECK")
session.commit()
out["a_unhealthy"] = ehe._failed_in_tree(session, "tree-a") == a_unhealthy
out["warnings"] = warnings
print(json.dumps(out))
