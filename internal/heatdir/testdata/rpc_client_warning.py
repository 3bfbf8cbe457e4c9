"""Builds oslo.messaging RPC clients the way Heat 19 does, before and after
python/ephemeral_heat_engine.py is imported, and prints the warnings
oslo.messaging's RPC client logger let through as JSON, for
TestManualRPCClientWarning (internal/heatdir/python_test.go)."""
import json
import logging

from oslo_config import cfg
import oslo_messaging

got = []


class Collect(logging.Handler):
    def emit(self, record):
        got.append(record.getMessage())


log = logging.getLogger("oslo_messaging.rpc.client")
log.addHandler(Collect())
log.setLevel(logging.INFO)
transport = oslo_messaging.get_rpc_transport(cfg.CONF, url="fake:/")
target = oslo_messaging.Target(topic="engine", version="1.0")


def clients(n):
    del got[:]
    for _ in range(n):
        oslo_messaging.RPCClient(transport, target)  # as Heat 19 builds it
    log.warning("another warning of this logger")
    return list(got)


out = {"before": clients(2)}
import ephemeral_heat_engine  # noqa: E402,F401
out["after"] = clients(3)
import importlib  # noqa: E402
importlib.reload(ephemeral_heat_engine)
out["filters_after_reload"] = sum(
    type(f).__name__ == "DropManualRPCClient" for f in log.filters)
print(json.dumps(out))
