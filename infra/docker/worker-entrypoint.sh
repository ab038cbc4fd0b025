#!/bin/sh
# The worker images' entrypoint: names the worker after its container (hostname: the container id
# under Docker, the pod name under Kubernetes) unless FLOWFLEET_WORKER_ID is set, so the
# HEALTHCHECK (apps/worker/src/health-main.ts) reads the same heartbeat the worker writes; then
# replaces itself with node, which handles SIGTERM (drain, then exit).
set -eu
: "${FLOWFLEET_WORKER_ID:=$(hostname)}"
export FLOWFLEET_WORKER_ID
exec node --import tsx --conditions=@flowfleet/source apps/worker/src/main.ts "$@"
