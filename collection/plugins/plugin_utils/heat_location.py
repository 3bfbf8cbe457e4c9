# -*- coding: utf-8 -*-
# Copyright: ephemeral.heat engineers
# Apache License 2.0 (see LICENSE)
"""Where Heat is: a task's own choice before a module_defaults one of another kind.

The modules that talk to Heat take exactly one location: heat_dir, endpoint, or a
cloud (cloud, auth, auth_type, region_name, interface), with validate_certs and
ca_cert for an endpoint or a cloud. Ansible merges module_defaults into a task's
arguments before the action plugin runs and tells the module nothing of where each
came from, so a play's ``group/ephemeral.heat.heat: {heat_dir: X}`` and a task's
``cloud: Y`` would reach the module together and be refused.

The modules' action plugins (plugins/action/MODULE.py) run the module as the normal
action does, after this: the arguments are split by source again - the task's own,
module_defaults for the module, module_defaults for its group, in Ansible's order of
precedence - with Ansible's own get_action_args_with_defaults; the highest source
that names a location kind decides it, and the location options of the lower sources
that belong to another kind are left out (validate_certs and ca_cert go with the kind
their own source names). A source naming two kinds is passed on as it is: the module
refuses it. A module_defaults location option the module cannot take (heat_dir is
the only one ephemeral_heat_launch and heat_db_dump take; overcloud_workdir takes
them with action=save only) is left out too. An option whose value equals the
module_defaults one counts as that default's.
"""

from __future__ import annotations

from ansible.executor.module_common import get_action_args_with_defaults
from ansible.plugins.action.normal import ActionModule as NormalAction

# The option group (internal/heatloc owns it; its test holds this copy equal).
KINDS = (
    ('heat_dir', ('heat_dir',)),
    ('endpoint', ('endpoint',)),
    ('cloud', ('cloud', 'auth', 'auth_type', 'region_name', 'interface')),
)
TLS_OPTIONS = ('validate_certs', 'ca_cert')
# The kinds the TLS options go with.
TLS_KINDS = ('endpoint', 'cloud')
ALL_KINDS = tuple(kind for kind, _ in KINDS)


def kind_of(option):
    """The kind a location option names (None for the TLS options and others)."""
    for kind, options in KINDS:
        if option in options:
            return kind
    return None


def is_location(option):
    """Whether option belongs to the group."""
    return kind_of(option) is not None or option in TLS_OPTIONS


def choose(args, sources, accepted=ALL_KINDS):
    """The module's arguments with the location options it must not get left out.

    args are the merged arguments; sources the options (dicts or sets of names) of
    the task, of module_defaults for the module and for its group, highest first; an
    option of args in none of them is the task's. accepted are the kinds the module
    takes. Returns the arguments and the sorted names left out.
    """
    def source(option):
        for level, options in enumerate(sources):
            if option in options:
                return level
        return 0

    def kinds(options):
        return set(kind_of(o) for o in options if kind_of(o))

    out = dict(args)
    left_out = []
    for option in sorted(o for o in args if is_location(o) and source(o) > 0):
        kind = kind_of(option)
        takes = kind in accepted if kind else any(k in accepted for k in TLS_KINDS)
        if not takes:
            del out[option]
            left_out.append(option)
    level, named = 0, set()
    for level, options in enumerate(sources):
        named = kinds(o for o in out if source(o) == level)
        if named:
            break
    if len(named) != 1:
        return out, left_out
    winner = named.pop()
    for option in sorted(o for o in out if is_location(o)):
        own = source(option)
        kind = kind_of(option)
        if own <= level or kind == winner:
            continue
        if kind is None and winner in TLS_KINDS and kinds(sources[own]) <= set([winner]):
            continue
        del out[option]
        left_out.append(option)
    return out, sorted(left_out)


class HeatLocationAction(NormalAction):
    """The normal action, after choose() on the task's arguments."""

    # The kinds of location the module takes.
    ACCEPTED = ALL_KINDS

    def accepted(self, args):
        """The kinds the module takes with these arguments."""
        return self.ACCEPTED

    def sources(self, args, task_vars):
        """The task's own options, module_defaults' for the module, for its group."""
        defaults = self._task.module_defaults or []
        action = self._task.resolved_action or self._task.action
        groups = self._task._parent._play._action_groups
        omit = (task_vars or {}).get('omit')

        def merged(chosen):
            got = get_action_args_with_defaults(action, {}, chosen, self._templar, action_groups=groups)
            return dict((k, v) for k, v in got.items() if k in args and v != omit)

        group = merged([dict((k, v) for k, v in d.items() if k.startswith('group/')) for d in defaults])
        both = merged(defaults)
        specific = dict((k, v) for k, v in both.items() if k not in group or group[k] != v)
        task = dict((k, v) for k, v in args.items() if k not in both or both[k] != v)
        return task, specific, group

    def run(self, tmp=None, task_vars=None):
        args = self._task.args
        if any(is_location(o) for o in args):
            new, left_out = choose(args, self.sources(args, task_vars), self.accepted(args))
            if left_out:
                self._display.vvv('%s: left out of module_defaults, the task names another location: %s'
                                  % (self._task.action, ', '.join(left_out)))
                self._task.args = new
        return super(HeatLocationAction, self).run(tmp, task_vars)
