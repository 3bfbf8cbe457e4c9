# -*- coding: utf-8 -*-
# Copyright: ephemeral.heat engineers
# Apache License 2.0 (see LICENSE)
"""Where Heat is: the options the modules of the action group ephemeral.heat.heat share."""

from __future__ import annotations


class ModuleDocFragment(object):
    # heat_dir: every module of the action group group/ephemeral.heat.heat
    # (ephemeral_heat_launch, heat_stack, heat_db_dump, config_download)
    # takes it, so module_defaults may set it once for all of them.
    DOCUMENTATION = r'''
options:
  heat_dir:
    description:
      - The heat_dir of an ephemeral Heat, for example C(~/overcloud-deploy/overcloud/heat-launcher), where
        M(ephemeral.heat.ephemeral_heat_launch) writes C(heat.conf), C(clouds.yaml), the launch record
        C(launch.json), logs and, with sqlite, the database.
      - It must belong to the user running the module, and neither it nor its parent may be a symlink or writable by
        other users (a sticky C(/tmp) is fine); a launch creates it, and missing parents, with mode 0700. Launches,
        stops, dumps and restores on one heat_dir take turns (a lock in it).
      - Set it once for a play with C(module_defaults) and the action group C(group/ephemeral.heat.heat).
    type: path
notes:
  - The action group C(group/ephemeral.heat.heat) holds M(ephemeral.heat.ephemeral_heat_launch),
    M(ephemeral.heat.heat_stack), M(ephemeral.heat.heat_db_dump) and M(ephemeral.heat.config_download); each takes
    O(heat_dir).
'''

    # endpoint and cloud: the modules that talk to any Heat's API.
    API = r'''
options:
  endpoint:
    description:
      - A no-auth Heat endpoint, such as C(http://127.0.0.1:8006/v1/admin).
      - Exactly one of O(heat_dir), O(endpoint) and O(cloud) is required.
    type: str
  cloud:
    description:
      - A cloud of a C(clouds.yaml) (C($OS_CLIENT_CONFIG_FILE), C(./clouds.yaml),
        C(~/.config/openstack/clouds.yaml) or C(/etc/openstack/clouds.yaml); a C(secure.yaml) beside
        it may hold the password) for an existing Heat behind Keystone. Supports C(auth_type)
        C(password) (the default; C(auth_url), C(username)/C(user_id), C(password),
        C(project_name)/C(project_id), C(user_domain_name), C(project_domain_name), C(region_name),
        C(interface), C(orchestration_endpoint_override)) and C(none) (C(auth.endpoint)).
      - Exactly one of O(heat_dir), O(endpoint) and O(cloud) is required.
    type: str
'''
