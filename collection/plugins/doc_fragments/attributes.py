# -*- coding: utf-8 -*-
# Copyright: ephemeral.heat engineers
# Apache License 2.0 (see LICENSE)
"""The attributes every module documents: check mode, diff mode, platform."""

from __future__ import annotations


class ModuleDocFragment(object):
    # Every module extends it: the descriptions of check_mode and diff_mode
    # (each module gives its own support level and details) and the platform,
    # the same for all. ansible-doc 2.14 prints attributes as YAML, without
    # rendering markup: plain text here.
    DOCUMENTATION = r'''
attributes:
  check_mode:
    description: Can run in check mode (ansible-playbook --check) and report whether it would change anything, without changing it.
  diff_mode:
    description: With ansible-playbook --diff, returns what it changed (or would change, in check mode) as before and after.
  platform:
    description: Target operating systems the module runs on.
    support: full
    platforms: posix
    details:
      - A static Linux binary (amd64; arm64 too with make build-all); it needs no Python on the target.
'''

    # Modules that only read: check mode runs the same, there is nothing to diff.
    READ_ONLY = r'''
attributes:
  check_mode:
    support: full
    details:
      - It only reads, and runs the same in check mode.
  diff_mode:
    support: N/A
    details:
      - It changes nothing.
'''
