#!/usr/bin/env bash
# A local cluster (issue 14, item 7): N replicas of the whole mesh on this machine, each an
# `npm start` process on its own port, all on one PostgreSQL (ASG_DATABASE_URL) and one NATS
# (ASG_EVENTS_URL). Every process runs every service, so each is a replica of every service.
#
#   ASG_DATABASE_URL=postgres://… ASG_EVENTS_URL=nats://… deploy/local-cluster.sh [N] [--config FILE] [--port FIRST]
#
# N defaults to 2, the config to config/agent.yaml, the first port to 8080: replica i listens
# on FIRST+i-1. Each replica's config is the given one with only `port:` changed, written to
# data/cluster/replica-<i>.yaml (ASG_CLUSTER_DIR chooses another folder), its log beside it as
# replica-<i>.log. Ctrl-C or SIGTERM stops every replica cleanly (each drains within
# shutdown_grace); when one exits, the others are stopped too. ASG_CLUSTER_DRY_RUN=1 writes the
# configs and prints the commands without running them.
set -euo pipefail

replicas=2
config=config/agent.yaml
first_port=8080
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config="$2"; shift 2 ;;
    --port) first_port="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *)
      if [[ "$1" =~ ^[1-9][0-9]*$ ]]; then replicas="$1"; shift
      else echo "local-cluster: unknown argument \"$1\" (usage: deploy/local-cluster.sh [N] [--config FILE] [--port FIRST])" >&2; exit 2
      fi ;;
  esac
done

# Several stores on one SQLite file would each take the others' running turns for interrupted
# ones: a cluster needs the shared database and event bus.
if [[ "${ASG_DATABASE_URL:-}" != postgres://* && "${ASG_DATABASE_URL:-}" != postgresql://* ]]; then
  echo "local-cluster: set ASG_DATABASE_URL to a PostgreSQL URL (postgres://user:password@host:5432/db): replicas share one database" >&2
  exit 2
fi
if [[ "${ASG_EVENTS_URL:-}" != nats://* ]]; then
  echo "local-cluster: set ASG_EVENTS_URL to a NATS URL (nats://host:4222): replicas share live events" >&2
  exit 2
fi
if [ ! -r "$config" ]; then
  echo "local-cluster: cannot read the config $config" >&2
  exit 2
fi
if ! [[ "$first_port" =~ ^[0-9]+$ ]] || [ $((first_port + replicas - 1)) -gt 65535 ]; then
  echo "local-cluster: --port needs a port number with room for $replicas replicas, got \"$first_port\"" >&2
  exit 2
fi

# npm start runs in the repository; the paths given stay relative to where this was called.
config="$(cd "$(dirname "$config")" && pwd)/$(basename "$config")"
cluster_dir="${ASG_CLUSTER_DIR:-data/cluster}"
mkdir -p "$cluster_dir"
cluster_dir="$(cd "$cluster_dir" && pwd)"
cd "$(dirname "$0")/.."
pids=()
stop_all() {
  trap - INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait
}
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM

for i in $(seq 1 "$replicas"); do
  port=$((first_port + i - 1))
  replica_config="$cluster_dir/replica-$i.yaml"
  # Only the top-level `port:` differs between replicas (appended when the config has none).
  if grep -q '^port:' "$config"; then
    sed -E "s/^port:.*/port: $port/" "$config" > "$replica_config"
  else
    { cat "$config"; echo "port: $port"; } > "$replica_config"
  fi
  if [ "${ASG_CLUSTER_DRY_RUN:-}" = 1 ]; then
    echo "npm start -- --config $replica_config"
    continue
  fi
  npm start --silent -- --config "$replica_config" > "$cluster_dir/replica-$i.log" 2>&1 &
  pids+=($!)
  echo "local-cluster: replica $i on port $port (pid $!, log $cluster_dir/replica-$i.log)"
done
[ "${ASG_CLUSTER_DRY_RUN:-}" = 1 ] && exit 0

# The cluster lives as long as every replica does.
set +e
wait -n
status=$?
echo "local-cluster: a replica exited (status $status); stopping the others" >&2
stop_all
exit "$status"
