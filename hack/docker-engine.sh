#!/usr/bin/env bash
# Prepares a Docker engine that can run kind nodes on this machine (Debian,
# as root): installs docker.io when missing, installs the labctl-runc
# runtime (a runc wrapper that drops capabilities the host's bounding set
# lacks, so --privileged containers work inside restricted VMs), registers it
# as the default runtime in /etc/docker/daemon.json, raises the inotify
# limits kind needs, and makes sure dockerd runs with that configuration. Running it again when all is in place
# changes nothing.
#
# Environment: DOCKER_WAIT_SECONDS (default 60) bounds every wait for the
# daemon; DAEMON_JSON overrides /etc/docker/daemon.json.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runtime_name=labctl-runc
runtime_path=/usr/local/lib/labctl/runc-capfilter
daemon_json=${DAEMON_JSON:-/etc/docker/daemon.json}
wait_seconds=${DOCKER_WAIT_SECONDS:-60}

say() { printf 'docker-engine: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[[ $(id -u) == 0 ]] || die "run as root (it installs packages and configures dockerd)"

daemon_answers() { timeout 10 docker info >/dev/null 2>&1; }

runtime_configured() {
	[[ $(timeout 10 docker info --format '{{.DefaultRuntime}}' 2>/dev/null) == "$runtime_name" ]]
}

wait_for_daemon() {
	local want=$1 deadline=$((SECONDS + wait_seconds))
	until "$want"; do
		((SECONDS < deadline)) || die "dockerd did not become ready within ${wait_seconds}s (see /var/log/dockerd.log)"
		sleep 1
	done
}

apt_install() {
	say "installing $* with apt-get"
	DEBIAN_FRONTEND=noninteractive timeout 600 apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -q --no-install-recommends "$@" >/dev/null
}

# 1. Packages.
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v runc >/dev/null || missing+=(runc)
command -v jq >/dev/null || missing+=(jq)
# The offline image build (labctl images build --offline) needs debootstrap.
command -v debootstrap >/dev/null || missing+=(debootstrap)
if ((${#missing[@]})); then
	apt_install "${missing[@]}"
else
	say "docker.io, runc, jq and debootstrap are installed"
fi

# 2. The capability-filtering runtime, rebuilt only when its source changed.
command -v go >/dev/null || die "go is needed to build ${runtime_name} (install Go 1.26 or put it on PATH)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -o "$tmp/runc-capfilter" ./images/runtime/capfilter) ||
	die "building ./images/runtime/capfilter failed"
if [[ -x $runtime_path ]] && cmp -s "$tmp/runc-capfilter" "$runtime_path"; then
	say "${runtime_name} is up to date at ${runtime_path}"
else
	# Replace atomically: dockerd may be starting containers with it now.
	install -D -m 0755 "$tmp/runc-capfilter" "$runtime_path.new"
	mv -f "$runtime_path.new" "$runtime_path"
	say "installed ${runtime_name} at ${runtime_path}"
fi

# 3. daemon.json: register the runtime and make it the default, keeping
# every other setting.
mkdir -p "$(dirname "$daemon_json")"
current='{}'
if [[ -s $daemon_json ]]; then
	current=$(jq . "$daemon_json") || die "$daemon_json is not valid JSON: fix or remove it"
fi
wanted=$(jq --arg n "$runtime_name" --arg p "$runtime_path" \
	'.runtimes[$n] = {path: $p} | ."default-runtime" = $n' <<<"$current")
if [[ $(jq -S . <<<"$current") == $(jq -S . <<<"$wanted") ]]; then
	say "$daemon_json already registers ${runtime_name} as the default runtime"
else
	[[ -s $daemon_json ]] && cp "$daemon_json" "$daemon_json.bak"
	printf '%s\n' "$wanted" >"$daemon_json"
	say "wrote $daemon_json (default-runtime ${runtime_name})"
fi

# 4. inotify limits kind's kubelet and pods need (raised, never lowered).
for limit in fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=512; do
	key=${limit%%=*} want=${limit#*=}
	have=$(sysctl -n "$key" 2>/dev/null || echo 0)
	if ((have < want)); then
		if sysctl -qw "$key=$want" 2>/dev/null; then
			say "raised $key from $have to $want"
		else
			say "warning: could not raise $key from $have to $want"
		fi
	fi
done

# 5. The daemon.
if daemon_answers; then
	if runtime_configured; then
		say "dockerd is running with ${runtime_name}: nothing to do"
		exit 0
	fi
	pid=$(cat /var/run/docker.pid 2>/dev/null || true)
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		# runtimes and default-runtime are reloadable: no container is stopped.
		say "reloading dockerd (pid $pid) configuration"
		kill -HUP "$pid"
		wait_for_daemon runtime_configured
	elif command -v systemctl >/dev/null && systemctl is-active --quiet docker 2>/dev/null; then
		say "restarting docker.service"
		systemctl restart docker
		wait_for_daemon runtime_configured
	else
		die "dockerd answers but its pid is unknown: restart it so it reads $daemon_json"
	fi
else
	if command -v systemctl >/dev/null && systemctl is-system-running >/dev/null 2>&1; then
		say "starting docker.service"
		systemctl start docker
	else
		say "starting dockerd (log: /var/log/dockerd.log)"
		nohup dockerd >>/var/log/dockerd.log 2>&1 &
	fi
	wait_for_daemon daemon_answers
	wait_for_daemon runtime_configured
fi
say "dockerd is ready (default runtime ${runtime_name})"
