"""Exercises template_store (python/ephemeral_heat_engine.py) with Heat's own
database API on a sqlite file, and prints what it saw as JSON, for
TestTemplateStore (internal/heatdir/python_test.go).

argv: a scratch directory, the plugin name, then the mode: "on" (Heat as
installed) or "guard" (Template.store replaced by one of another shape).
"""
import json
import sys

from heat.engine import scheduler  # noqa: F401 (a Heat engine process)
from sqlalchemy import event
from sqlalchemy.engine import url as sa_url

from heat.common import context
from heat.db.sqlalchemy import api as db_api
from heat.db.sqlalchemy import models
from heat.db.sqlalchemy import types as db_types
from heat.engine import environment
from heat.engine import template
from heat.objects import raw_template

import ephemeral_heat_engine as ehe
import plugin_db
import plugin_warnings

work, plugin, mode = sys.argv[1:4]
plugin_db.configure(work, plugin)

warnings = plugin_warnings.collect()
out = {"applies_mysql": ehe.template_store_applies(
    sa_url.make_url("mysql+pymysql://heat:pw@127.0.0.1/heat"))}
heat_store = template.Template.store
if mode == "guard":
    def store(self, context, extra=None):
        return heat_store(self, context)
    template.Template.store = store

engine = db_api.get_engine()  # loads the plugin, as Heat's engine does
out["on"] = ehe._applied.get("template_store")
out["warnings"] = warnings
if mode == "guard":
    out["left_unchanged"] = template.Template.store is store
    print(json.dumps(out))
    sys.exit(0)
out["replaced"] = template.Template.store is not heat_store
models.BASE.metadata.create_all(engine)
statements = []
event.listen(engine, "before_cursor_execute",
             lambda conn, cur, stmt, params, ctx, many:
             statements.append(stmt.split()[0].upper() + " " +
                               ("raw_template" if "raw_template" in stmt
                                else "other")))
ctx = context.RequestContext(is_admin=True)


def tmpl(n, param="a"):
    t = {"heat_template_version": "2016-10-14",
         "resources": {"r%d" % i: {"type": "OS::Heat::None"}
                       for i in range(n)}}
    return template.Template(t, env=environment.Environment(
        {"parameter_defaults": {"p": param}}))


def row(tid):
    with engine.connect() as c:
        r = c.exec_driver_sql(
            "SELECT template, environment, files, files_id, updated_at "
            "FROM raw_template WHERE id = ?", (tid,)).fetchone()
    return {"resources": sorted(json.loads(r[0])["resources"]),
            "p": json.loads(r[1])["parameter_defaults"]["p"],
            "files": r[2], "files_id": r[3], "updated_at": str(r[4])}


def step(name, t):
    del statements[:]
    t.store(ctx)
    out[name] = {"statements": list(statements), "row": row(t.id)}


t = tmpl(1)
step("create", t)
t.t["resources"]["r1"] = {"type": "OS::Heat::None"}
step("first_update", t)  # not known yet: Heat's read, then known
t.t["resources"]["r2"] = {"type": "OS::Heat::None"}
step("known_update", t)  # no read: only the template column is written
step("unchanged", t)  # nothing to write
t.env.param_defaults["p"] = "b"
step("env_changed", t)

# A row written by another path is forgotten: the next store is Heat's.
raw_template.RawTemplate.update_by_id(ctx, t.id, {"template": {
    "heat_template_version": "2016-10-14", "resources": {}}})
step("after_other_writer", t)

# The session keeps a loaded row object (expire_on_commit is off); after a
# store that skips the read, Heat's next read of it sees the new row.
held = db_api.raw_template_get(ctx, t.id)
t.t["resources"]["r3"] = {"type": "OS::Heat::None"}
step("with_row_held", t)
out["held_row_after"] = sorted(db_api.raw_template_get(ctx, t.id)
                               .template["resources"])
del held

# Inside an open transaction: Heat's own store.
t.t["resources"]["r4"] = {"type": "OS::Heat::None"}
del statements[:]
with ctx.session.begin(subtransactions=True):
    t.store(ctx)
out["in_transaction"] = {"statements": list(statements), "row": row(t.id)}

# The cap: the row stored longest ago is forgotten first, and its next
# store is Heat's (a read); the rows stored since stay known.
def held(t):
    # What the lever keeps for t's row: its two columns' texts and pieces.
    return sum(ehe._kept_bytes(*ehe._encode_pieces(doc, db_types.dumps, None))
               for doc in (t.t, t.env.env_as_dict()))


def reads_of(t):
    del statements[:]
    t.store(ctx)
    return statements.count("SELECT raw_template")


a, b, c = (tmpl(2, x) for x in "abc")
for t in (a, b, c):
    t.store(ctx)  # created
    t.t["resources"]["x"] = {"type": "OS::Heat::None"}
    t.store(ctx)  # first update: Heat's, then known (a, b, c in that order)
ehe._TEMPLATE_STORE_MAX_BYTES = held(a) + held(b) + held(c) - 1
out["cap_reads"] = {
    "C": reads_of(c),  # known; keeping it again forgets a
    "B": reads_of(b),  # known
    "A": reads_of(a),  # forgotten: Heat's read; keeping it forgets c
    "BAgain": reads_of(b),
    "CAgain": reads_of(c),  # forgotten: Heat's read
}
ehe._TEMPLATE_STORE_MAX_BYTES = held(a) - 1
out["cap_reads"]["TooLarge"] = reads_of(a)  # never kept
out["cap_reads"]["TooLargeAgain"] = reads_of(a)

# A deleted row is forgotten: storing to it fails as in Heat.
raw_template.RawTemplate.delete(ctx, t.id)
try:
    t.store(ctx)
    out["store_after_delete"] = "stored"
except Exception as e:
    out["store_after_delete"] = type(e).__name__
out["warnings"] = warnings
print(json.dumps(out))
