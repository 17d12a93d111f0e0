# git-continuity's hook launcher: `git continuity agent install` copies it into the agent's
# folder, where the agent's settings run it (sh <this file> agent AGENT ACTION). It names no
# path of one machine, so a team commits it with the settings.
#
# It runs git-continuity-hook: the one `agent install` recorded in this clone
# (.git/continuity/agents/hook-program), else the one on PATH. When that does not start (not
# there, its Python gone, exit not 0), it says so where the agent shows it, with nothing but sh:
# the brief and the model's stop say that the hooks are off, instead of a silent exit 127.
# With GIT_CONTINUITY_HOOK_PROBE=1 (agent status, doctor) it runs the hook on a no-op event.
# With mcp as its first word it starts the MCP server (agent install --mcp registers that).

[ "$1" = agent ] && shift
agent=$1 action=$2
self=$0
case $self in /*) ;; *) self=$PWD/$self ;; esac
top=${self%/*/*/*}

# The git directory shared by every worktree of this clone (.git is a file in a linked one).
g=$top/.git
if [ -f "$g" ]; then
	IFS= read -r g <"$g"
	g=${g#gitdir: }
	case $g in /*) ;; *) g=$top/$g ;; esac
	if [ -f "$g/commondir" ]; then
		IFS= read -r c <"$g/commondir"
		case $c in /*) g=$c ;; *) g=$g/$c ;; esac
	fi
fi
gone() { # whether the interpreter on $1's #! line is not there (a removed venv, an upgraded Python)
	first=
	IFS= read -r first <"$1" 2>/dev/null
	case $first in "#!"*)
		py=${first#??}
		py=${py%% *}
		[ -x "$py" ] || return 0
		;;
	esac
	return 1
}
h= recorded=
[ -f "$g/continuity/agents/hook-program" ] && IFS= read -r recorded <"$g/continuity/agents/hook-program"
if [ -n "$recorded" ] && [ -f "$recorded" ] && ! gone "$recorded"; then
	h=$recorded
else
	h=$(command -v git-continuity-hook) || h=
fi

# sh <this file> mcp ARGS: the MCP server, git-continuity beside that git-continuity-hook.
if [ "$1" = mcp ]; then
	[ -n "$h" ] && [ -x "${h%/*}/git-continuity" ] && exec "${h%/*}/git-continuity" "$@"
	where="not on PATH"
	[ -n "$recorded" ] && where="neither at ${recorded%/*}/git-continuity nor on PATH"
	printf 'git-continuity: the MCP server cannot start: git-continuity is %s; install git-continuity where this agent finds it\n' "$where" >&2
	exit 1
fi

# The Stop fallback reads stop_hook_active, so the input is kept for it.
input=
[ "$action" = stop ] && input=$(cat)
if [ -n "$h" ]; then
	if [ "$action" = stop ]; then
		out=$(printf '%s\n' "$input" | "$h" agent "$agent" "$action")
	else
		out=$("$h" agent "$agent" "$action")
	fi
	rc=$?
	if [ $rc -eq 0 ]; then
		[ -n "$out" ] && printf '%s\n' "$out"
		exit 0
	fi
	why="$h did not start (exit $rc)"
	gone "$h" && why="$h did not start: its interpreter $py is gone"
elif [ -n "$recorded" ] && [ -f "$recorded" ]; then
	why="$recorded cannot start (its interpreter $py is gone) and git-continuity-hook is not on PATH"
elif [ -n "$recorded" ]; then
	why="git-continuity-hook is neither at $recorded nor on PATH"
else
	why="git-continuity-hook is not on PATH"
fi

case $action in
session-start) lost="this session gets no continuity brief, no closure gate and no handoff" ;;
stop) lost="the closure gate did not run" ;;
pre-compact) lost="no handoff was recorded before this compaction" ;;
session-end) lost="no handoff was recorded at the end of this session" ;;
*) lost="nothing notices a failing command retried in a loop" ;;
esac
said="git-continuity: $why, so $lost; install git-continuity where this agent finds it (or run: git continuity agent install $agent)"
if [ -n "$GIT_CONTINUITY_HOOK_PROBE" ]; then
	printf '%s\n' "$said"
	exit 1
fi

json() { # $1 as a JSON string
	s=$1 r=
	while :; do
		case $s in
		*[\\\"]*)
			pre=${s%%[\\\"]*}
			s=${s#"$pre"}
			r=$r$pre\\${s%"${s#?}"}
			s=${s#?}
			;;
		*) break ;;
		esac
	done
	printf '"%s"' "$r$s"
}
message() { printf '{"systemMessage": %s}\n' "$(json "$said")"; }

case $action in
session-start)
	printf '{"systemMessage": %s, "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": %s}}\n' \
		"$(json "$said")" "$(json "$said. Tell the user before anything else.")"
	;;
stop)
	# Gemini CLI takes a block as a new prompt every time: it is told once, by the brief.
	# Claude Code and Codex are held once, so that the model tells the person; then let go.
	case $agent:$input in
	gemini:*) printf '{"decision": "allow", "systemMessage": %s}\n' "$(json "$said")" ;;
	*'"stop_hook_active":true'* | *'"stop_hook_active": true'*) message ;;
	*) printf '{"decision": "block", "reason": %s}\n' "$(json "$said. Tell the user, then stop.")" ;;
	esac
	;;
pre-compact)
	# Claude Code reads PreCompact's output as plain text: instructions for the summary.
	if [ "$agent" = claude ]; then printf 'Keep in the summary: %s.\n' "$said"; else message; fi
	;;
session-end)
	# Gemini CLI shows a message; the others show a failed hook's stderr.
	if [ "$agent" = gemini ]; then
		message
	else
		printf '%s\n' "$said" >&2
		exit 1
	fi
	;;
esac
exit 0
