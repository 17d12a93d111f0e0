"""What vulture cannot see used: names reached by a string, by a framework or by a test.

tests/test_dead_code.py runs ``python -m vulture git_continuity tests/vulture_whitelist.py
--min-confidence 60``; a name listed here counts as used. Each line says who uses it. A name
that is truly dead is removed from the package, not added here.
"""

import argparse
import sys
from typing import Any

from git_continuity import constants
from git_continuity.cli import main
from git_continuity.commands import (
    blocker,
    claim,
    conflict,
    demo,
    doctor,
    init,
    objective,
    place,
    quarantine,
    repo,
    thread,
    trust,
    verify,
)
from git_continuity.commands.demo import doctor as demo_doctor
from git_continuity.commands.demo import forge as demo_forge
from git_continuity.commands.demo import story as demo_story
from git_continuity.helper import server as helper_server
from git_continuity.hooks import guards
from git_continuity.mcp import server as mcp_server
from git_continuity.plugins import forge, hookspecs

# Command functions: the command table (cli/table.py) names each as "module:function", and
# cli/main.py imports it when its command is chosen.
blocker.list_blockers  # git continuity blocker list
claim.retract  # git continuity claim retract
claim.list_claims  # git continuity claim list
conflict.list_conflicts  # git continuity conflict list
conflict.dismiss  # git continuity conflict dismiss
demo.demo  # git continuity demo
doctor.doctor  # git continuity doctor
init.init  # git continuity init
objective.objective_log  # git continuity objective log
place.set_place  # git continuity place set
place.clear_place  # git continuity place clear
place.list_places  # git continuity place list
quarantine.list_kept  # git continuity quarantine list
quarantine.restore  # git continuity quarantine restore
repo.set_path  # git continuity repo set-path
repo.list_siblings  # git continuity repo list
thread.set_status  # git continuity thread set
thread.list_threads  # git continuity thread list
trust.allow  # git continuity trust allow
trust.revoke  # git continuity trust revoke
trust.list_trusted  # git continuity trust list
trust.signer_add  # git continuity trust signer add
trust.signer_remove  # git continuity trust signer remove
trust.signer_list  # git continuity trust signer list
trust.team_list  # git continuity trust team
trust.team_join  # git continuity trust team join
trust.team_accept  # git continuity trust team accept
verify.verify_claims  # git continuity verify
main.show_help  # git continuity help
guards.hook_impl  # git continuity hook-impl (what the installed git hooks run)
mcp_server.serve  # git continuity mcp

# The demo's chapters: commands/demo/__init__.py's CHAPTERS names each as "module:function".
demo_doctor.doctor  # git continuity demo doctor
demo_forge.forges  # git continuity demo ci
demo_story.story  # git continuity demo story

# Called from the Python source the helper's client starts (helper/door.py: "helper_server.serve(...)").
helper_server.serve

# pluggy calls hook implementations by the hookspec's name: every verifier in verifiers/ defines both.
hookspecs.continuity_resolve
hookspecs.continuity_verify

# Overrides and settings that the standard library or a dependency reads.
main.Formatter._split_lines  # argparse.HelpFormatter calls it to fold an option's help
argparse.ArgumentParser.formatter_class  # format_help() builds its formatter from it (cli/manpage.py)
# The helper's child sets these with sys.stdin and sys.stderr (helper/forked.py), as Python
# does at start-up: code that asks for the process's own streams (pdb, faulthandler) reads them.
sys.__stdin__
sys.__stderr__

# Attributes the type checker cannot name through their class (vulture matches a name only).
_: Any = None
_._name_parser_map  # argparse finds a chosen subcommand's parser in it (cli/main.py _lazy sets it)
_.preserve_quotes  # ruamel.yaml's round trip keeps a packet's quoting (store/packetfile.py)
_.max_depth  # ruamel.yaml refuses a packet nested deeper (store/packetfile.py)
_.daemon_threads  # socketserver: the demo forge's request threads end with the demo
_.log_message  # http.server calls it to log a request; the demo forge keeps quiet
_.do_GET  # http.server calls it for a GET to the demo forge
_.position  # probe.HookCheck: which entry of the settings file (tests/test_agents_status.py reads it)

# Read outside the package, or kept for plugins.
constants.ID_RE  # tests/test_model.py: every new id matches it, and the schemas' id pattern is it
forge.Service.requests  # Service is in the plugin interface (api.py): removing a field is a MAJOR version
