"""Heat's database configuration for the test scripts beside this file that
run an engine plugin on Heat's own database API (each imports it from its
own directory): a sqlite file in a scratch directory, with the plugin named
in [database] connection_parameters as our heat.conf names it."""
import logging
import os

from oslo_config import cfg


def configure(work, plugin):
    """Points Heat's [database] at WORK/heat.sqlite with PLUGIN loaded when
    Heat opens it, quiets Heat's INFO logging, and returns the file's path."""
    db = os.path.join(work, "heat.sqlite")
    cfg.CONF([], project="heat", default_config_files=[])
    cfg.CONF.set_override("connection", "sqlite:///" + db, group="database")
    cfg.CONF.set_override("connection_parameters", "plugin=" + plugin,
                          group="database")
    logging.disable(logging.INFO)
    return db
