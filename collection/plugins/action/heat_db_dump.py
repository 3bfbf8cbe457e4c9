# -*- coding: utf-8 -*-
# Copyright: ephemeral.heat engineers
# Apache License 2.0 (see LICENSE)
"""The action of heat_db_dump: where Heat is, as plugins/plugin_utils/heat_location.py says."""

from __future__ import annotations

from ansible_collections.ephemeral.heat.plugins.plugin_utils.heat_location import HeatLocationAction


class ActionModule(HeatLocationAction):
    """heat_db_dump takes heat_dir only: a module_defaults endpoint or cloud is not given to it."""

    ACCEPTED = ('heat_dir',)
