#!/usr/bin/python3
"""Run tripleo-common's own config download and inventory against a Heat.

This does what tripleo-ansible's cli-config-download.yaml does after an
overcloud deploy (its tripleo_config_download and
tripleo_generate_ansible_inventory modules): tripleo_common.utils.config's
get_overcloud_config into DEST (preserve_config), then
tripleo_common.inventory's generate_tripleo_ansible_inventory into DEST.
It talks to a no-auth Heat through a keystoneauth session, as tripleoclient
does with an ephemeral Heat; no Neutron (session=None: the inventory's
Neutron source is skipped, as it is when the undercloud has no Neutron).

--release says which tripleo-common the tree is. stable/wallaby and
stable/zed share get_overcloud_config's signature; zed's
generate_tripleo_ansible_inventory adds cloud_name (default 'undercloud',
which would make it open clouds.yaml's undercloud for Neutron): it gets
cloud_name=None, so zed too builds the inventory from the stack alone.
Neither release needs a stubbed import here.

tripleo-common is imported from --tripleo-common (an extracted tree); its
imports need Debian's python3-heatclient, python3-git, python3-yaml,
python3-jinja2, python3-pbr, python3-eventlet, python3-openstacksdk. Run it
with /usr/bin/python3. It prints one JSON line: the seconds the download and
the inventory took (imports excluded) and the warnings tripleo-common
raised.

With --merge-stacks A,B,... it writes only the inventory of those stacks
(multi-stack, DCN) into --dest: tripleo_common.inventories'
TripleoInventories of one TripleoInventory per stack, built with the
arguments generate_tripleo_ansible_inventory gives it, and its
write_static_inventory (what tripleo-ansible-inventory --stack A,B
--static-yaml-inventory FILE does), into DEST/tripleo-ansible-inventory.yaml.
"""

import argparse
import inspect
import json
import logging
import os
import sys
import time
import warnings


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--tripleo-common', required=True,
                   help='extracted tripleo-common tree (holds tripleo_common/)')
    p.add_argument('--endpoint', required=True,
                   help='no-auth Heat endpoint, http://127.0.0.1:PORT/v1/admin')
    p.add_argument('--stack')
    p.add_argument('--merge-stacks',
                   help='comma-separated stacks: write their merged inventory only')
    p.add_argument('--dest', required=True, help='config-download directory')
    p.add_argument('--ssh-network', default='ctlplane')
    p.add_argument('--ssh-user', default='tripleo-admin')
    p.add_argument('--release', choices=('wallaby', 'zed'), default='wallaby',
                   help="the tree's tripleo-common release")
    args = p.parse_args()

    if not os.path.isdir(os.path.join(args.tripleo_common, 'tripleo_common')):
        sys.exit('%s holds no tripleo_common package' % args.tripleo_common)
    sys.path.insert(0, args.tripleo_common)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    warnings.simplefilter('ignore', DeprecationWarning)

    from heatclient import client as heat_client
    from keystoneauth1 import noauth
    from keystoneauth1 import session as ks_session
    from tripleo_common import inventories
    from tripleo_common import inventory
    from tripleo_common.utils import config as ooo_config

    inventory_kwargs = {}
    has_cloud_name = 'cloud_name' in inspect.signature(
        inventory.generate_tripleo_ansible_inventory).parameters
    if args.release == 'zed':
        if not has_cloud_name:
            sys.exit('%s is not stable/zed: its generate_tripleo_ansible_inventory '
                     'has no cloud_name' % args.tripleo_common)
        inventory_kwargs['cloud_name'] = None
    elif has_cloud_name:
        sys.exit('%s is not stable/wallaby: its generate_tripleo_ansible_inventory '
                 'has cloud_name (use --release zed)' % args.tripleo_common)

    sess = ks_session.Session(auth=noauth.NoAuth(endpoint=args.endpoint))
    heat = heat_client.Client('1', session=sess, endpoint=args.endpoint)

    os.makedirs(args.dest, mode=0o700, exist_ok=True)
    if args.merge_stacks:
        merge(args, heat, inventories, inventory)
        return
    if not args.stack:
        sys.exit('--stack or --merge-stacks is required')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', UserWarning)
        t0 = time.perf_counter()
        ooo_config.get_overcloud_config(
            swift=None, heat=heat, container=args.stack,
            config_dir=args.dest, config_type=None, preserve_config=True)
        t1 = time.perf_counter()
        inventory.generate_tripleo_ansible_inventory(
            heat, auth_url=None, username=None, project_name=None,
            cacert=None, plan=args.stack, work_dir=args.dest,
            ansible_python_interpreter=None, ansible_ssh_user=args.ssh_user,
            undercloud_key_file=None, ssh_network=args.ssh_network,
            session=None, **inventory_kwargs)
        t2 = time.perf_counter()
    json.dump({'download_seconds': t1 - t0, 'inventory_seconds': t2 - t1,
               'warnings': [str(w.message) for w in caught
                            if not issubclass(w.category, DeprecationWarning)]},
              sys.stdout)
    sys.stdout.write('\n')


def merge(args, heat, inventories, inventory):
    """The inventory of several stacks, as tripleo-common merges them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', UserWarning)
        t0 = time.perf_counter()
        objs = {}
        for plan in args.merge_stacks.split(','):
            objs[plan] = inventory.TripleoInventory(
                session=None, hclient=heat, auth_url=None, username=None,
                project_name=None, cacert=None,
                ansible_ssh_user=args.ssh_user, undercloud_key_file=None,
                ansible_python_interpreter=None, plan_name=plan,
                host_network=args.ssh_network, work_dir=args.dest)
        inv = inventories.TripleoInventories(objs)
        inv.write_static_inventory(
            os.path.join(args.dest, 'tripleo-ansible-inventory.yaml'))
        t1 = time.perf_counter()
    json.dump({'download_seconds': 0, 'inventory_seconds': t1 - t0,
               'warnings': [str(w.message) for w in caught
                            if not issubclass(w.category, DeprecationWarning)]},
              sys.stdout)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
