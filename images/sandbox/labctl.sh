# labctl shell integration, installed at /etc/profile.d/labctl.sh and sourced
# from /etc/bash.bashrc. It marks every prompt (OSC 133) so that `labctl
# shell` can check the learner's work after each command, and defines the
# `lab` function, which asks labctl for checks, hints and the step's text
# in-band over the terminal. The protocol is documented in labctl's session
# package. bash only; sourcing it twice is harmless.

# shellcheck shell=bash
[ -n "${BASH_VERSION:-}" ] || return 0 2>/dev/null || exit 0
case $- in *i*) ;; *) return 0 ;; esac
[ -z "${_labctl_loaded:-}" ] || return 0
_labctl_loaded=1

# After each command: OSC 133 D with its status, then OSC 133 A before the
# prompt. The first prompt of a shell ran no command and gets only A.
_labctl_prompt() {
	local rc=$?
	if [ -n "${_labctl_started:-}" ]; then
		printf '\033]133;D;%s\007' "$rc"
	fi
	_labctl_started=1
	printf '\033]133;A\007'
	return "$rc"
}

# Run first, so it sees the status of the learner's command; keep whatever
# PROMPT_COMMAND was set before (a string or, from bash 5.1, an array whose
# first element this extends).
case ";${PROMPT_COMMAND:-};" in
*";_labctl_prompt;"*) ;;
*) PROMPT_COMMAND="_labctl_prompt${PROMPT_COMMAND:+;$PROMPT_COMMAND}" ;;
esac
# OSC 133 C when a command starts.
PS0="${PS0:-}"$'\033]133;C\007'

# labctl writes a banner at the prompt, then sends this key so readline
# redraws the prompt and the unfinished line.
_labctl_redraw() { :; }
for _labctl_map in emacs vi-insert vi-command; do
	bind -m "$_labctl_map" -x '"\e[9999~": _labctl_redraw' 2>/dev/null
done
unset _labctl_map

# _labctl_text KEY prints the lab function's words in the learner's
# language: Japanese when LABCTL_LANG (which labctl shell sets to the
# language of its own messages), else the locale, names it; else English.
_labctl_text() {
	local ja=
	case ${LABCTL_LANG:-${LC_ALL:-${LC_MESSAGES:-${LANG:-}}}} in ja*) ja=1 ;; esac
	case $1 in
	usage)
		if [ -n "$ja" ]; then
			printf '使い方: lab check|hint|step|why|next|status\n'
			printf '  check   今のステップのチェックをすぐに実行する\n'
			printf '  hint    今のステップの次のヒントを表示する\n'
			printf '  step    今のステップをもう一度表示する\n'
			printf '  why     今のステップが大切な理由を表示する\n'
			printf '  next    今のステップが終わっていれば次のステップへ進む\n'
			printf '  status  ラボの進み具合を表示する\n'
		else
			printf 'usage: lab check|hint|step|why|next|status\n'
			printf '  check   run the checks of the current step now\n'
			printf '  hint    show the next hint of the current step\n'
			printf '  step    show the current step again\n'
			printf '  why     say why the current step matters\n'
			printf '  next    move on when the current step is done\n'
			printf '  status  show your progress in the lab\n'
		fi
		;;
	unknown)
		if [ -n "$ja" ]; then
			printf 'lab: %q というコマンドはありません。lab check|hint|step|why|next|status のどれかを使ってください\n' "$2"
		else
			printf 'lab: unknown command %q; try: lab check|hint|step|why|next|status\n' "$2"
		fi
		;;
	outside)
		if [ -n "$ja" ]; then
			printf 'lab: `labctl shell` の中でだけ使えます。自分のマシンで `labctl shell` を実行してください\n'
		else
			printf 'lab: works only inside `labctl shell`; run `labctl shell` on your machine\n'
		fi
		;;
	no-tty)
		if [ -n "$ja" ]; then
			printf 'lab: `labctl shell` の端末が必要です\n'
		else
			printf 'lab: needs the terminal of `labctl shell`\n'
		fi
		;;
	timeout)
		if [ -n "$ja" ]; then
			printf 'lab: 15 秒待っても labctl から応答がありません。もう一度試してください\n'
		else
			printf 'lab: no answer from labctl within 15 s; try again\n'
		fi
		;;
	no-answer)
		if [ -n "$ja" ]; then
			printf 'lab: labctl から応答がありません\n'
		else
			printf 'lab: no answer from labctl\n'
		fi
		;;
	esac
}

# lab check|hint|step|why|next|status: ask labctl, which answers on the
# terminal and then acknowledges in-band; wait for that (at most 15 s) with
# echo off so the acknowledgement never shows.
lab() {
	local verb=${1:-status}
	case $verb in
	check | hint | step | why | next | status) ;;
	-h | --help | help)
		_labctl_text usage
		return 0
		;;
	*)
		_labctl_text unknown "$verb" >&2
		return 2
		;;
	esac
	if [ "${LABCTL_SHELL:-}" != 1 ]; then
		_labctl_text outside >&2
		return 2
	fi
	if ! { : </dev/tty; } 2>/dev/null; then
		_labctl_text no-tty >&2
		return 2
	fi
	local nonce="lab$RANDOM$RANDOM" reply= saved rc=0 oldtrap
	saved=$(stty -g </dev/tty 2>/dev/null)
	oldtrap=$(trap -p INT)
	trap 'stty "$saved" </dev/tty 2>/dev/null; trap - INT; [ -n "$oldtrap" ] && eval "$oldtrap"; return 130' INT
	stty -echo </dev/tty 2>/dev/null
	printf '\033]7707;labctl;%s;%s\007' "$verb" "$nonce" >/dev/tty
	IFS= read -r -s -t 15 -d $'\a' reply </dev/tty || rc=$?
	stty "$saved" </dev/tty 2>/dev/null
	trap - INT
	[ -n "$oldtrap" ] && eval "$oldtrap"
	case $reply in
	*"$nonce") return 0 ;;
	esac
	if [ "$rc" -gt 128 ]; then
		_labctl_text timeout >&2
	else
		_labctl_text no-answer >&2
	fi
	return 1
}
