#!/usr/bin/python3
"""Process a Heat template and environments with python-heatclient.

Usage: heatclient_process.py TEMPLATE [ENVIRONMENT ...]

Does what "openstack stack create -t TEMPLATE -e ENV ..." does before it
sends the request (heatclient.osc.v1.stack.CreateStack.take_action) and
prints, as JSON on stdout:
  template           the processed top template
  files              url -> content (bytes decoded as UTF-8, as sent)
  environment        the client-side merge of the environments
  environment_files  the environments' URLs, in order
Exits 3 with a message on stderr when heatclient is not installed.
"""
import json
import sys

try:
    from heatclient.common import template_utils
except ImportError as e:
    sys.stderr.write("python3-heatclient is missing (%s): "
                     "apt-get install -y python3-heatclient\n" % e)
    sys.exit(3)


def text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return value


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    tpl_files, template = template_utils.get_template_contents(
        template_file=argv[1])
    env_list = []
    env_files, env = template_utils.process_multiple_environments_and_files(
        env_paths=argv[2:], env_list_tracker=env_list)
    files = dict(list(tpl_files.items()) + list(env_files.items()))
    json.dump({
        "template": template,
        "files": {url: text(content) for url, content in files.items()},
        "environment": env,
        "environment_files": env_list,
    }, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
