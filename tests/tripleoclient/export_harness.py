#!/usr/bin/python3
"""Run python-tripleoclient's own export_overcloud on a working dir.

tripleoclient stable/wallaby's tripleoclient/export.py export_overcloud
(working_dir, stack, excludes, should_filter, config_download_dir), the
function `openstack overcloud export` (excludes = not
--no-password-excludes, should_filter False) and the deploy's export
(excludes True; should_filter True for <stack>-cell-export.yaml) call, is
imported from --tripleoclient (an extracted tree) with tripleo-common from
--tripleo-common, and run on --working-dir. It prints one JSON object:
data (what export_overcloud returned), missing_passwords (the password
parameters the passwords file's parameter_defaults lacks: tripleo-common's
generate_passwords makes up new values for them), parameters_passwords
(the password parameters the file sets under parameters:, which Heat
uses and export_passwords does not read) and stubs (the modules stood in
for, of STUBS, because they cannot be imported here).

Run it with /usr/bin/python3 (Debian's python3-heatclient, -osc-lib,
-oslo.concurrency, -yaml, -six, -paramiko, -netaddr, -simplejson,
-prettytable, -tenacity, -openstacksdk, -ansible are imported for real).
"""

import argparse
import importlib
import json
import logging
import secrets
import string
import sys
import types

# STUBS: the only modules that stand in for real ones, each only when it
# cannot be imported, and why it cannot change the result:
#   passlib, passlib.pwd - tripleo_common/utils/passwords.py imports
#     passlib.pwd (not packaged here); its genword only makes up a value
#     for a password the passwords file lacks (missing_passwords, which the
#     comparison reports on its own); the stand-in draws from the same
#     ascii_62 alphabet.
#   ansible_runner - tripleoclient/utils.py imports it at module level
#     (not packaged here); export_overcloud runs no playbook.
STUBS = ('passlib', 'passlib.pwd', 'ansible_runner')


def genword(length=None, **_):
    alphabet = string.digits + string.ascii_uppercase + string.ascii_lowercase
    return ''.join(secrets.choice(alphabet) for _ in range(length or 9))


def stub(name):
    m = types.ModuleType(name)
    m.__path__ = []
    m.__doc__ = 'stand-in of export_harness.py (see STUBS)'
    if name == 'passlib.pwd':
        m.genword = genword
        sys.modules['passlib'].pwd = m
    sys.modules[name] = m


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--tripleoclient', required=True,
                   help='extracted python-tripleoclient tree (holds tripleoclient/)')
    p.add_argument('--tripleo-common', required=True,
                   help='extracted tripleo-common tree (holds tripleo_common/)')
    p.add_argument('--working-dir', required=True)
    p.add_argument('--stack', required=True)
    p.add_argument('--config-download-dir', required=True,
                   help="the directory holding <stack>/ (the deploy's <working dir>/config-download)")
    p.add_argument('--no-password-excludes', action='store_true')
    p.add_argument('--should-filter', action='store_true')
    p.add_argument('--ceph-cephx', default=None,
                   help="run export_ceph(stack, CEPHX, config_download_dir) instead, "
                        "as `overcloud export ceph` does (HOME must make "
                        "~/overcloud-deploy/<stack> the working dir: it reads "
                        "ceph_client.yml there)")
    args = p.parse_args()

    sys.path.insert(0, args.tripleoclient)
    sys.path.insert(0, args.tripleo_common)
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    stubbed = []
    for name in STUBS:
        try:
            importlib.import_module(name)
        except ImportError:
            stub(name)
            stubbed.append(name)

    import yaml
    from tripleo_common import constants as tc_constants
    from tripleoclient import constants
    from tripleoclient import export

    for mod, tree in ((export, args.tripleoclient), (tc_constants, args.tripleo_common)):
        if not mod.__file__.startswith(tree):
            sys.exit('%s was imported from %s, not from %s' % (mod.__name__, mod.__file__, tree))

    if args.ceph_cephx is not None:
        from tripleoclient import utils as oooutils
        if oooutils.get_default_working_dir(args.stack) != args.working_dir:
            sys.exit('HOME does not make %s the default working dir of %s'
                     % (args.working_dir, args.stack))
        cephs = [export.export_ceph(args.stack, args.ceph_cephx,
                                    args.config_download_dir)]
        data = {'parameter_defaults': {'CephExternalMultiConfig': cephs}}
        json.dump({'data': data, 'missing_passwords': [],
                   'parameters_passwords': [], 'stubs': stubbed},
                  sys.stdout, default=str)
        sys.stdout.write('\n')
        return

    data = export.export_overcloud(
        args.working_dir, args.stack,
        excludes=not args.no_password_excludes,
        should_filter=args.should_filter,
        config_download_dir=args.config_download_dir)

    with open('%s/%s' % (args.working_dir,
                         constants.PASSWORDS_ENV_FORMAT.format(args.stack))) as f:
        env = yaml.safe_load(f) or {}
    have = env.get('parameter_defaults') or {}
    missing = [n for n in tc_constants.PASSWORD_PARAMETER_NAMES if n not in have]
    params = env.get('parameters') or {}
    in_params = [n for n in tc_constants.PASSWORD_PARAMETER_NAMES
                 if params.get(n) is not None]

    json.dump({'data': data, 'missing_passwords': missing,
               'parameters_passwords': in_params, 'stubs': stubbed},
              sys.stdout, default=str)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
