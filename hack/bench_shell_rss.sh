#!/usr/bin/env bash
# bench_shell_rss.sh LABCTL prints labctl's peak resident set size in KiB
# (VmHWM) during `labctl shell`, driven in a pseudo-terminal by script(1):
# a few commands are typed, each checked by the shell, then exit.
set -uo pipefail
labctl=$1
fifo=$(mktemp -u /tmp/labctl-rss.XXXXXX)
mkfifo "$fifo"
trap 'rm -f "$fifo"' EXIT
script -qfc "$labctl shell" /dev/null <"$fifo" >/dev/null 2>&1 &
spid=$!
exec 3>"$fifo"
pid=""
for _ in $(seq 100); do
	pid=$(pgrep -n -f "^$labctl shell$")
	[ -n "$pid" ] && break
	sleep 0.1
done
[ -n "$pid" ] || { echo "labctl shell did not start" >&2; exit 1; }
peak=0
sample() {
	local v
	v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	[ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
}
for cmd in "ls" "mkdir -p /root/gitops/repo" "cd /root/gitops/repo && git init -q" "lab check" "exit"; do
	sleep 2
	sample
	printf '%s\r' "$cmd" >&3
done
for _ in $(seq 50); do
	kill -0 "$pid" 2>/dev/null || break
	sample
	sleep 0.1
done
exec 3>&-
wait "$spid" 2>/dev/null
echo "$peak"
