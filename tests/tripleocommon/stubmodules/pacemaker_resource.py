#!/usr/bin/python3
# Stand-in for the pacemaker_resource module of openstack/ansible-pacemaker
# (a dependency of tripleo-ansible that Debian does not package), so that
# ansible-playbook --syntax-check and --list-tasks resolve THT's update
# tasks. The differential test never runs it; running it fails.
from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={}, bypass_checks=True)
    module.fail_json(msg='pacemaker_resource is a stub of the differential test (tests/tripleocommon)')


if __name__ == '__main__':
    main()
