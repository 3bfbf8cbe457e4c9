# -*- coding: utf-8 -*-
# Copyright: ephemeral.heat engineers
# Apache License 2.0 (see LICENSE)
"""Where Heat is: the options the modules of the action group ephemeral.heat.heat share."""

from __future__ import annotations


class ModuleDocFragment(object):
    # heat_dir: every module of the action group group/ephemeral.heat.heat takes it,
    # so module_defaults may set it once for all of them.
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
    M(ephemeral.heat.heat_stack), M(ephemeral.heat.heat_db_dump), M(ephemeral.heat.config_download) and
    M(ephemeral.heat.overcloud_workdir). Their action plugins let a task's own location (C(heat_dir), C(endpoint)
    or a cloud) replace a C(module_defaults) one of another kind, and leave out of the C(module_defaults) of a module
    the locations it does not take (M(ephemeral.heat.ephemeral_heat_launch) and M(ephemeral.heat.heat_db_dump) take
    C(heat_dir) only).
'''

    # The other locations: the modules that talk to any Heat's API.
    API = r'''
options:
  endpoint:
    description:
      - A no-auth Heat endpoint, such as C(http://127.0.0.1:8006/v1/admin); C(https://) with C(ca_cert) or
        C(validate_certs).
    type: str
  cloud:
    description:
      - A cloud of a C(clouds.yaml), which gophercloud's C(openstack/config/clouds) reads as openstackclient does -
        C($OS_CLIENT_CONFIG_FILE) alone when set, else C(./clouds.yaml), C(~/.config/openstack/clouds.yaml),
        C(/etc/openstack/clouds.yaml); a C(secure.yaml) beside it supplies values and wins over it, a C(profile)
        comes from a C(clouds-public.yaml) there. Its C(auth_type), C(auth), C(region_name), C(interface),
        C(cacert), C(verify), C(cert), C(key) and C(orchestration_endpoint_override) are used, as are
        C($OS_REGION_NAME), C($OS_INTERFACE), C($OS_CACERT), C($OS_CERT) and C($OS_KEY).
      - With a Keystone auth type, the module authenticates and talks to the catalog's orchestration endpoint
        of the region and interface (or C(orchestration_endpoint_override)); password and application-credential
        clients authenticate again when their token expires. With C(auth_type) C(none), the Heat is
        C(orchestration_endpoint_override), else C(auth.endpoint).
      - With none of C(heat_dir), C(endpoint), C(cloud), C(auth), C(auth_type), C(region_name) and C(interface)
        given, C($OS_CLOUD) names the cloud (as in openstack.cloud); C(auth), C(auth_type), C(region_name) or
        C(interface) without C(cloud) apply to C($OS_CLOUD)'s cloud, or make one of C(auth) alone.
      - Where Heat is - exactly one of a heat_dir (C(heat_dir)), an endpoint (C(endpoint)) and a cloud (C(cloud),
        C(auth), C(auth_type), C(region_name), C(interface)). A task's own choice replaces a C(module_defaults) one of
        another kind (README, "Where Heat is").
    type: str
  auth:
    description:
      - The cloud's C(auth) section, as in openstack.cloud - merged over the cloud's, key by key (C(auth) wins, over
        C(secure.yaml) too), or the whole of it without a cloud. C(auth_url), C(username) or C(user_id),
        C(password), C(project_name) or C(project_id), C(user_domain_name), C(project_domain_name),
        C(domain_name); C(application_credential_id) (or C(application_credential_name) with the user) and
        C(application_credential_secret); C(token); C(endpoint) with C(auth_type) C(none).
      - The values of C(password), C(application_credential_secret), C(token) and C(passcode) are masked in the
        results, as a C(no_log) option's are.
    type: dict
  auth_type:
    description:
      - The cloud's C(auth_type) - C(password) (the default of a cloud with none), C(v3applicationcredential)
        (an application credential, no scope sent), C(token), or C(none) (a Heat without Keystone).
    type: str
    choices: [none, noauth, password, v3password, v2password, v3applicationcredential, token, v3token, v2token]
  region_name:
    description:
      - The region of the catalog's orchestration endpoint; wins over C($OS_REGION_NAME) and the cloud's.
    type: str
  interface:
    description:
      - The catalog interface of the orchestration endpoint; wins over C($OS_INTERFACE) and the cloud's (default
        C(public)).
    type: str
    choices: [public, internal, admin]
  validate_certs:
    description:
      - Whether to check the TLS certificate of an C(https) C(endpoint) or cloud. Not given, the cloud's C(verify)
        decides, else C(true).
      - A certificate that is not trusted fails the task naming the CA file it was checked against, and C(ca_cert).
    type: bool
  ca_cert:
    description:
      - A PEM file of the CA certificate(s) that signed the TLS certificate of an C(https) C(endpoint) or cloud
        (Keystone and Heat); wins over C($OS_CACERT) and the cloud's C(cacert). Not given, those, else the system's
        CA certificates.
      - C(validate_certs) and C(ca_cert) go with an endpoint or a cloud, not with C(heat_dir) (an ephemeral Heat
        answers plain HTTP).
    type: path
'''
