# -*- coding: utf-8 -*-
# Copyright: ephemeral.heat engineers
# Apache License 2.0 (see LICENSE)
"""The action of heat_stack: where Heat is, as plugins/plugin_utils/heat_location.py says."""

from __future__ import annotations

from ansible_collections.ephemeral.heat.plugins.plugin_utils.heat_location import HeatLocationAction


class ActionModule(HeatLocationAction):
    """heat_stack, with a task's own location before a module_defaults one of another kind."""
