"""Exercises root_id_cache (python/ephemeral_heat_engine.py) with Heat's own
database API on a sqlite file, and prints what it saw as JSON, for
TestRootIDCache (internal/heatdir/python_test.go).

argv: a scratch directory, the plugin name, then the mode: "on" (Heat as
installed) or "guard" (Stack.get_root_id replaced by one that does not ask
the database's stack_get_root_id).
"""
import json
import sys

from heat.engine import scheduler  # noqa: F401 (a Heat engine process)
from sqlalchemy import event

from heat.common import context
from heat.db.sqlalchemy import api as db_api
from heat.db.sqlalchemy import models
from heat.objects import stack as stack_object

import ephemeral_heat_engine as ehe
import plugin_db
import plugin_warnings

work, plugin, mode = sys.argv[1:4]
plugin_db.configure(work, plugin)

warnings = plugin_warnings.collect()
out = {}
Stack = stack_object.Stack
heat_get_root_id = Stack.__dict__["get_root_id"]
if mode == "guard":
    def get_root_id(cls, context, stack_id):
        return stack_id

    Stack.get_root_id = classmethod(get_root_id)
    guarded = Stack.__dict__["get_root_id"]

engine = db_api.get_engine()  # loads the plugin, as Heat's engine does
out["on"] = ehe._applied.get("root_id_cache")
out["warnings"] = warnings
if mode == "guard":
    out["left_unchanged"] = Stack.__dict__["get_root_id"] is guarded
    print(json.dumps(out))
    sys.exit(0)
out["replaced"] = Stack.__dict__["get_root_id"] is not heat_get_root_id
models.BASE.metadata.create_all(engine)
selects = [0]


def count(conn, cur, stmt, params, ctx, many):
    if stmt.lstrip().upper().startswith("SELECT") and "FROM stack" in stmt:
        selects[0] += 1


event.listen(engine, "before_cursor_execute", count)
admin = context.RequestContext(is_admin=True, project_id="p1")


def stack(name, owner=None, tenant="p1"):
    tid = db_api.raw_template_create(admin, {"template": {}}).id
    return db_api.stack_create(admin, {
        "name": name, "raw_template_id": tid, "owner_id": owner,
        "tenant": tenant, "username": "u", "action": "CREATE",
        "status": "IN_PROGRESS", "disable_rollback": True}).id


# A chain root <- a <- b <- c, and a second tree r2 <- x.
root = stack("root")
a = stack("a", root)
b = stack("b", a)
c = stack("c", b)
r2 = stack("r2")
x = stack("x", r2)
chain = [root, a, b, c, x]


def ask(ctx, ids):
    """The answers, and the stack SELECTs it took."""
    selects[0] = 0
    got = [Stack.get_root_id(ctx, i) for i in ids]
    return got, selects[0]


# Heat's own answers, from its code on the same database.
heat = [heat_get_root_id.__func__(Stack, admin, i) for i in chain]
out["heat"] = heat == [root, root, root, root, r2]
first, out["first_selects"] = ask(admin, chain)
second, out["second_selects"] = ask(admin, chain)
out["equal_heat"] = first == heat and second == heat

# Another project, not admin: Heat does not let it see p1's stacks (None),
# and None is not kept, so it asks again.
other = context.RequestContext(is_admin=False, project_id="p2")
got1, n1 = ask(other, [c])
got2, n2 = ask(other, [c])
out["other_project"] = [got1[0], got2[0], n1 > 0, n2 > 0]
# A stack that does not exist: None, asked again.
got1, n1 = ask(admin, ["no-such-stack"])
got2, n2 = ask(admin, ["no-such-stack"])
out["missing"] = [got1[0], got2[0], n1 > 0, n2 > 0]

# The bound: a full cache starts again. y is new (2 SELECTs: y, root) and
# finds the cache full, which it empties; c then is asked again (4), y not.
ehe._ROOT_ID_MAX = 2
y = stack("y", root)
_, out["bounded_selects"] = ask(admin, [y, c, y])
print(json.dumps(out))
