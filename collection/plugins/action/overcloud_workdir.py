# -*- coding: utf-8 -*-
# Copyright: ephemeral.heat engineers
# Apache License 2.0 (see LICENSE)
"""The action of overcloud_workdir: where Heat is, as plugins/plugin_utils/heat_location.py says."""

from __future__ import annotations

from ansible_collections.ephemeral.heat.plugins.plugin_utils.heat_location import HeatLocationAction


class ActionModule(HeatLocationAction):
    """overcloud_workdir talks to Heat with action=save and action=migrate only (migrate: an installed Heat,
    a cloud or an endpoint): other actions get no module_defaults location."""

    def accepted(self, args):
        if args.get('action') == 'save':
            return self.ACCEPTED
        if args.get('action') == 'migrate':
            return tuple(k for k in self.ACCEPTED if k != 'heat_dir')
        return ()
