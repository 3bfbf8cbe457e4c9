"""Reads the container-image and password inputs of a deploy from a
tripleo-common source tree, the way tripleo-common computes them, and prints
them as JSON. Run by the Go package tests/tht (it embeds this file) with
Debian's python3-jinja2 and python3-yaml; it imports nothing from
tripleo-common itself (that needs packages Debian does not have).

Usage: python3 tripleo_inputs.py <tripleo-common dir>

Facts followed (paths in tripleo-common stable/wallaby):
- tripleo_common/constants.py: PASSWORD_PARAMETER_NAMES, a literal tuple
  (read with ast, not imported).
- tripleo_common/image/kolla_builder.py init_prepare_defaults: the defaults
  are the `set` of the first ContainerImagePrepare entry of
  container-images/container_image_prepare_defaults.yaml;
  container_images_template_inputs: a non-empty name_prefix gets a trailing
  '-', a non-empty name_suffix a leading '-';
  container_images_from_template: tripleo_containers.yaml.j2 is rendered with
  a FileSystemLoader on its directory (it includes ceph.j2), then loaded as
  YAML; its entries are under container_images_template.
- tripleo_common/utils/plan.py default_image_params: every name in an entry's
  `params` maps to the entry's imagename.
- The ContainerImagePrepare value itself (what python-tripleoclient's
  `openstack tripleo container image prepare default` writes,
  v1/container_image.py TripleOImagePrepareDefault).
"""
import ast
import importlib.util
import json
import os
import sys

import jinja2
import yaml


def constants_path(src):
    p = os.path.join(src, 'tripleo_common', 'constants.py')
    if os.path.isfile(p):
        return p
    # An undercloud's /usr/share/tripleo-common holds the data files only;
    # the Python package is installed in site-packages.
    spec = importlib.util.find_spec('tripleo_common')
    if spec is not None and spec.submodule_search_locations:
        for d in spec.submodule_search_locations:
            p = os.path.join(d, 'constants.py')
            if os.path.isfile(p):
                return p
    sys.exit('tripleo-common: neither %s/tripleo_common/constants.py nor an '
             'installed tripleo_common package was found: give a '
             'tripleo-common source tree or tarball' % src)


def password_names(path):
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id == 'PASSWORD_PARAMETER_NAMES':
                    return list(ast.literal_eval(node.value))
    sys.exit('%s: PASSWORD_PARAMETER_NAMES not found' % path)


def image_params(src):
    d = os.path.join(src, 'container-images')
    defaults_file = os.path.join(d, 'container_image_prepare_defaults.yaml')
    with open(defaults_file) as f:
        defaults = yaml.safe_load(f)
    mapping = dict(
        defaults['parameter_defaults']['ContainerImagePrepare'][0]['set'])
    np = mapping.get('name_prefix')
    if np and not np.endswith('-'):
        mapping['name_prefix'] = np + '-'
    ns = mapping.get('name_suffix')
    if ns and not ns.startswith('-'):
        mapping['name_suffix'] = '-' + ns
    tpl_file = os.path.join(d, 'tripleo_containers.yaml.j2')
    with open(tpl_file) as f:
        tpl = jinja2.Environment(
            loader=jinja2.FileSystemLoader(d)).from_string(f.read())
    rendered = yaml.safe_load(tpl.render(mapping))
    params = {}
    for entry in rendered['container_images_template']:
        for p in entry.get('params', []):
            params[p] = entry.get('imagename', '')
    return params, mapping, defaults['parameter_defaults']['ContainerImagePrepare']


def main():
    src = os.path.abspath(sys.argv[1])
    cpath = constants_path(src)
    params, mapping, cip = image_params(src)
    json.dump({
        'container_image_prepare': cip,
        'password_names': password_names(cpath),
        'image_mapping': mapping,
        'image_params': params,
    }, sys.stdout, sort_keys=True)


main()
