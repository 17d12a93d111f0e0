"""Every command of the command line, declared once: its words, its options and the function
it calls. cli/main.py builds parsers from this table and dispatches generically; a test checks
that every option's dest is a keyword of the function the command names. The commands on a
stream's state are in cli_state; the ones on the repository, sessions and the world around
it are here, and COMMANDS puts them all in the order the help lists them.

To add a command: write its function in commands/ (the repository first, then keywords), add
a row naming it here, and add its words to ORDER; tests/test_cli.py checks the rest."""

from __future__ import annotations

import argparse

from git_continuity.cli.spec import JSON, ONLINE, REMOTE, AfterDashes, Command, opt
from git_continuity.cli.table_places import PLACES
from git_continuity.cli.table_state import STATE

AROUND: tuple[Command, ...] = (
    Command(
        "ci",
        "run a command on the committed tree and record the result on the commit's note",
        "  git continuity ci run -- pytest -q\n"
        "  git continuity ci run --name lint -- ruff check .\n"
        '  git continuity claim add "tests pass" --check ci:HEAD',
        subcommands=(
            Command(
                "run",
                "run COMMAND (no shell) in the work tree's top folder; record success or failure on HEAD",
                "  git continuity ci run -- pytest -q\n  git continuity ci run -- sh -c 'make && make test'",
                "git_continuity.commands.ci:run",
                (
                    opt(
                        "--name", help="what the result is called (default: the command); ci:HEAD#NAME checks it alone"
                    ),
                    opt(
                        "command",
                        nargs=argparse.REMAINDER,
                        action=AfterDashes,
                        metavar="-- COMMAND",
                        help="the command and its arguments",
                    ),
                ),
                stream=False,
            ),
        ),
    ),
    Command(
        "show",
        "what the continuity notes say about a commit: why it exists, what was verified on it",
        "  git continuity show HEAD\n  git log --notes=continuity   # the same notes in git's own log",
        "git_continuity.commands.show:show",
        (opt("rev", nargs="?", default="HEAD", help="the commit (default: HEAD)"), JSON),
        stream=False,
        served=True,
    ),
    Command(
        "hooks",
        "install or remove plain git hooks (closure guard, provenance notes, push guard, rewrites)",
        "  git continuity hooks install\n  git continuity hooks uninstall",
        subcommands=(
            Command(
                "install",
                "install the hooks (respects core.hooksPath; chains to existing hooks)",
                "  git continuity hooks install",
                "git_continuity.commands.hooks:install",
                (opt("--force", action="store_true", help="install even into a hooks folder inside the work tree"),),
                stream=False,
            ),
            Command(
                "uninstall",
                "remove the hooks and restore what they chained to",
                "  git continuity hooks uninstall",
                "git_continuity.commands.hooks:uninstall",
                stream=False,
            ),
        ),
    ),
    Command(
        "trust",
        "approve exact commands that cmd: checks may run, and the keys and team whose state is trusted (at a terminal)",
        "  git continuity trust allow 'python -m pytest -q'\n  git continuity trust list",
        subcommands=(
            Command(
                "allow",
                "approve one exact command here (never synced)",
                "  git continuity trust allow 'python -m pytest -q'",
                "git_continuity.commands.trust:allow",
                (opt("command", metavar="COMMAND", help="the command exactly as the cmd: handle names it"),),
                stream=False,
            ),
            Command(
                "revoke",
                "withdraw an approval",
                "  git continuity trust revoke 'python -m pytest -q'",
                "git_continuity.commands.trust:revoke",
                (opt("command", metavar="COMMAND", help="the command exactly as it was approved (trust list)"),),
                stream=False,
            ),
            Command(
                "list",
                "the commands approved here",
                "  git continuity trust list --json",
                "git_continuity.commands.trust:list_trusted",
                (JSON,),
                stream=False,
            ),
            Command(
                "signer",
                "the keys whose signatures on state commits are trusted here (kept in your config folder)",
                "  git continuity trust signer list\n"
                "  git continuity trust signer add bea@example.com 'ssh-ed25519 AAAA…'",
                subcommands=(
                    Command(
                        "add",
                        "trust a teammate's SSH signing key for state commits read here",
                        "  git continuity trust signer add bea@example.com 'ssh-ed25519 AAAA…'\n"
                        "  git continuity trust signer add bea@example.com ~/bea.pub",
                        "git_continuity.commands.trust:signer_add",
                        (
                            opt("principal", metavar="EMAIL", help="who signs with it (as git names a signer)"),
                            opt("key", metavar="KEY", help="the public key ('ssh-ed25519 AAAA…') or its .pub file"),
                        ),
                        stream=False,
                    ),
                    Command(
                        "list",
                        "the trusted keys, yours marked",
                        "  git continuity trust signer list --json",
                        "git_continuity.commands.trust:signer_list",
                        (JSON,),
                        stream=False,
                    ),
                    Command(
                        "remove",
                        "stop trusting a key, or every key trusted for an e-mail address",
                        "  git continuity trust signer remove 'ssh-ed25519 AAAA…'\n"
                        "  git continuity trust signer remove bea@example.com",
                        "git_continuity.commands.trust:signer_remove",
                        (
                            opt(
                                "key",
                                metavar="KEY|EMAIL",
                                help="the public key as trust signer list shows it, or an e-mail",
                            ),
                        ),
                        stream=False,
                    ),
                ),
            ),
            Command(
                "team",
                "the team's signing keys, committed in .continuity.yaml (signers:): each key, trusted here or not",
                "  git continuity trust team\n  git continuity trust team join\n  git continuity trust team accept",
                "git_continuity.commands.trust:team_list",
                (JSON,),
                stream=False,
                subcommands=(
                    Command(
                        "join",
                        "put your signing key on the team's list in .continuity.yaml, for you to commit and push",
                        "  git continuity trust team join && git commit -m 'Join the signers' .continuity.yaml",
                        "git_continuity.commands.trust:team_join",
                        stream=False,
                    ),
                    Command(
                        "accept",
                        "trust every key on the team's list at HEAD (at a terminal), recording the version accepted",
                        "  git continuity trust team accept",
                        "git_continuity.commands.trust:team_accept",
                        stream=False,
                    ),
                ),
            ),
        ),
    ),
    Command(
        "orient",
        "start a session: every load-bearing claim dereferenced, then a brief with what is true now on top",
        "  git continuity orient                      # the first call of a session\n"
        "  git continuity orient --max-tokens 2000    # cut by priority: truth first, history last\n"
        "  git continuity orient --json",
        "git_continuity.commands.orient:orient",
        (
            opt("--max-tokens", type=int, metavar="N", help="keep the brief under N tokens, by priority"),
            ONLINE,
            JSON,
        ),
        epilog="The brief puts first what must not be acted on (contradicted or stale claims, with what was\n"
        "observed), then the objective, next action, blockers, open threads, verified and unconfirmed\n"
        "claims, the work tree, what changed since the last handoff, and the journal. Tokens are\n"
        "estimated as UTF-8 bytes / 3, rounded up. It starts this work tree's session (or continues\n"
        "the open one); GIT_CONTINUITY_SESSION and GIT_CONTINUITY_AGENT override it. First it fetches\n"
        "every remote and asks the forge again, within a second (continuity.freshLook, in seconds;\n"
        "0 turns it off), and says what it could not reach.\n"
        "Exit 1 when this clone has no state for the stream (the brief says how to fetch it), 2 when\n"
        "the state is malformed (the brief names each problem).",
        served=True,
    ),
    Command(
        "handoff",
        "end the session: record a handoff packet and a session entry in the journal",
        "  git continuity handoff\n"
        '  git continuity handoff --note "the flaky test is test_login_redirect; do not retry it"',
        "git_continuity.commands.handoff:handoff",
        (opt("--note", metavar="TEXT", help="words for the next session, kept in the journal entry"), JSON),
        epilog="The packet: the objective (and its latest change, with why), what this session did (commits\n"
        "on each branch it touched, claims added, threads moved), the work tree (branch, HEAD,\n"
        "uncommitted changes, stashes), open threads, blockers and the next action. It needs an\n"
        "objective (exit 2 otherwise). The next session reads it with git continuity orient.",
        served=True,
    ),
    Command(
        "agent",
        "wire orient, handoff and the closure gate into a coding agent's hooks",
        "  git continuity agent install claude     # .claude/settings.json\n"
        "  git continuity agent install codex      # .codex/hooks.json and an AGENTS.md block\n"
        "  git continuity agent install gemini     # .gemini/settings.json\n"
        "  git continuity agent uninstall claude",
        subcommands=(
            Command(
                "install",
                "merge the hooks into the agent's project configuration (idempotent; the rest is kept as it is)",
                "  git continuity agent install claude\n  git continuity agent install codex --mcp",
                "git_continuity.commands.agent:install",
                (
                    opt("agent", choices=["claude", "codex", "gemini"], help="which coding agent"),
                    opt(
                        "--mcp",
                        action="store_true",
                        help="register git continuity mcp too (.mcp.json, .codex/config.toml, .gemini/settings.json)",
                    ),
                ),
                stream=False,
            ),
            Command(
                "uninstall",
                "remove exactly what install added",
                "  git continuity agent uninstall codex",
                "git_continuity.commands.agent:uninstall",
                (opt("agent", choices=["claude", "codex", "gemini"], help="which coding agent"),),
                stream=False,
            ),
            Command(
                "status",
                "which agents have the hooks here, whether each would run (and is trusted), when each last ran",
                "  git continuity agent status\n  git continuity agent status --json",
                "git_continuity.commands.agent:status",
                (JSON,),
                stream=False,
            ),
        ),
    ),
    Command(
        "uninstall",
        "take out of this clone what git-continuity put there; the state itself only with --state",
        "  git continuity uninstall\n  git continuity uninstall --state --json",
        "git_continuity.commands.uninstall:uninstall",
        (
            opt(
                "--state",
                action="store_true",
                help="remove the state too (refs/continuity/*, the commit notes); a remote's copy is never touched",
            ),
            JSON,
        ),
        stream=False,
        epilog="Removed: git's hooks (husky's lines too), what agent install wrote, the fetch refspecs and\n"
        "continuity.* settings of this clone's config, the fetched copies of remotes' state, .git/continuity/.\n"
        "Kept, and said: the state (unless --state), your keys, the program itself (pip uninstall).",
    ),
    Command(
        "mcp",
        "serve the commands as MCP tools on stdin and stdout, for agents that speak MCP",
        "  git continuity mcp                 # the repository the client's roots lie in\n"
        "  git continuity mcp --repo ~/src/app",
        "git_continuity.mcp.server:serve",
        (opt("--repo", metavar="PATH", help="the repository (default: the one the client's MCP roots lie in)"),),
        repo=False,
        epilog="Needs the MCP SDK (the mcp extra; agent install --mcp says how to add it to this copy).\n"
        "Register it with git continuity agent install claude|codex|gemini --mcp.",
    ),
    Command(
        "pull",
        "fetch every stream's state and the commit notes from a remote and merge them in",
        "  git continuity pull\n  git continuity pull upstream",
        "git_continuity.commands.sync:pull",
        (REMOTE, JSON),
        stream=False,
        served=True,
    ),
    Command(
        "push",
        "publish every stream's state and the commit notes (merging first if the remote moved)",
        "  git continuity push",
        "git_continuity.commands.sync:push",
        (REMOTE, JSON),
        stream=False,
        served=True,
    ),
    Command(
        "sync",
        "pull, then push: both sides end with the same state",
        "  git continuity sync",
        "git_continuity.commands.sync:sync",
        (REMOTE, JSON),
        stream=False,
        served=True,
    ),
    Command(
        "doctor",
        "read everything the state depends on; say what is wrong and how to repair it (exit 1 if anything)",
        "  git continuity doctor\n  git continuity doctor --fix   # then git continuity push, for a remote's state",
        "git_continuity.commands.doctor:doctor",
        (
            opt("--fix", action="store_true", help="repair what is safe: nothing is deleted, nothing forced"),
            opt(
                "--accept",
                metavar="COMMIT",
                help="take a refused state as it is at COMMIT, after a look (re-anchors the witness; journaled)",
            ),
            JSON,
        ),
        stream=False,
        epilog="Reads the state refs of every stream, the notes ref, the remote-tracking refs, lock files, the\n"
        "remotes' refspecs, the installed git hooks and the Python they run, the coding agents' hooks,\n"
        "the trust store and the policy file. --fix removes a lock whose writer is gone, puts a broken\n"
        "ref back on the last commit its reflog names, adds the state's fetch refspec, and moves\n"
        "malformed files into .continuity/quarantine/ by a new state commit (a remote's state too:\n"
        "git continuity push then repairs the remote as a fast-forward).",
    ),
    Command(
        "quarantine",
        "what doctor --fix moved aside: list it, read it, put it back once well-formed, or drop it",
        "  git continuity quarantine list\n  git continuity quarantine show claims/c-k7m2qx.json\n"
        "  git continuity quarantine drop --all",
        subcommands=(
            Command(
                "list",
                "the files in the quarantine, and where each was",
                "  git continuity quarantine list --json",
                "git_continuity.commands.quarantine:list_kept",
                (JSON,),
            ),
            Command(
                "show",
                "one file as it was moved aside",
                "  git continuity quarantine show claims/c-k7m2qx.json",
                "git_continuity.commands.quarantine:show",
                (opt("name", metavar="NAME", help="its name under quarantine/ (quarantine list names them)"),),
            ),
            Command(
                "restore",
                "put files back where they were, when they are well-formed entries again",
                "  git continuity quarantine restore claims/c-k7m2qx.json",
                "git_continuity.commands.quarantine:restore",
                (
                    opt(
                        "names", nargs="*", metavar="NAME", help="files under quarantine/ (quarantine list names them)"
                    ),
                    opt("--all", dest="every", action="store_true", help="every file in the quarantine"),
                ),
            ),
            Command(
                "drop",
                "remove files from the quarantine for good (the journal records what was dropped)",
                "  git continuity quarantine drop claims/c-k7m2qx.json\n  git continuity quarantine drop --all",
                "git_continuity.commands.quarantine:drop",
                (
                    opt(
                        "names", nargs="*", metavar="NAME", help="files under quarantine/ (quarantine list names them)"
                    ),
                    opt("--all", dest="every", action="store_true", help="every file in the quarantine"),
                ),
            ),
        ),
    ),
    Command(
        "plugins",
        "list verifier plugins, their versions and handle schemes",
        "  git continuity plugins --json",
        "git_continuity.commands.plugins:plugins",
        (JSON,),
        repo=False,
        stream=False,
    ),
    Command(
        "demo",
        "a guided tour in a throwaway repository with a real bare remote",
        "  git continuity demo                     # the short story\n"
        "  git continuity demo --full              # every chapter, in order\n"
        "  git continuity demo --chapter progress  # one chapter\n"
        "  git continuity demo --keep              # leave the folder to explore",
        "git_continuity.commands.demo:demo",
        (
            opt("--keep", action="store_true", help="keep the demo folder and print where it is"),
            (
                opt("--full", action="store_true", help="tell every chapter, in order"),
                opt("--chapter", metavar="NAME", help="tell one chapter (listed below)"),
            ),
        ),
        repo=False,
        stream=False,
        # The names are the tour's (commands/demo/__init__.py CHAPTERS); tests/test_demo.py checks they agree.
        epilog="chapters (--full tells them all, in this order):\n"
        "  story     the short story: a rejected push, a false close refused, a second clone\n"
        "  sync      two clones change the state at once; sync merges it field by field\n"
        "  agents    Claude Code's hooks: the brief at session start, the closure gate at Stop\n"
        "  ci        a CI result on the commit's note; a thread waiting on a PR's review, then merged\n"
        "  handoff   a session hands off; the next, on a fresh clone, orients on what is true\n"
        "  progress  the same failure in three sessions: no progress, the budget spent, the stop-loss\n"
        "  planning  --after, priorities and the ready queue; two agents claiming work on two clones\n"
        "  places    a donor worktree: orient names the home, and a commit there is refused\n"
        "  siblings  one thread with checks in three repositories, each dereferenced in its own\n"
        "  doctor    a malformed state pushed with plain git: pull refuses it, doctor repairs it",
    ),
    Command(
        "help",
        "print a command's help, as git continuity COMMAND -h does",
        "  git continuity help\n  git continuity help thread close",
        "git_continuity.cli.main:show_help",
        (opt("words", nargs="*", metavar="COMMAND", help="the command (and its action), e.g. thread close"),),
        repo=False,
        stream=False,
    ),
    Command(
        # What hooks/* and git-continuity-hook run: the same parser, error handler and exit
        # codes as every other command. The hooks read GIT_CONTINUITY_STREAM themselves.
        "hook-impl",
        "run one git hook or coding agent hook (what the installed hooks call)",
        "  git continuity hook-impl commit-msg .git/COMMIT_EDITMSG\n"
        "  git continuity hook-impl agent claude session-start",
        "git_continuity.hooks.guards:hook_impl",
        (
            opt("hook", metavar="HOOK"),
            opt("args", nargs=argparse.REMAINDER, metavar="ARGS"),
        ),
        repo=False,
        stream=False,
        hidden=True,
    ),
)

# The order the help lists them in (one string reads better here than 29).
ORDER = (  # noqa: SIM905
    "init status objective next blocker claim thread ready check verify progress ci journal show hooks trust orient"
    " handoff place repo agent mcp log edit pull push sync doctor conflict quarantine plugins demo uninstall help"
    " hook-impl"
).split()
COMMANDS: tuple[Command, ...] = tuple(sorted((*STATE, *PLACES, *AROUND), key=lambda c: ORDER.index(c.name)))
