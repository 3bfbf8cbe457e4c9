"""The warnings python/ephemeral_heat_engine.py logs, collected for the test
scripts beside this file (each imports it from its own directory)."""
import logging


def collect():
    """A list that receives each warning the engine plugins log from now on."""
    got = []

    class Collect(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                got.append(record.getMessage())

    logging.getLogger("ephemeral_heat_engine").addHandler(Collect())
    return got
