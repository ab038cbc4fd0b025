# syntax=docker/dockerfile:1
# A flowfleet worker on onnxruntime-node's CPU execution provider. Build from the repository root:
#   docker build -f infra/docker/worker-cpu.Dockerfile -t flowfleet/worker-cpu:0.1.0 .
# It runs the TypeScript sources exactly as `npm run worker` does (tsx, @flowfleet/source).

FROM node:20.20.2-bookworm-slim AS deps
WORKDIR /app
ENV TURBO_TELEMETRY_DISABLED=1
COPY . .
# .npmrc skips onnxruntime-node's CUDA download: this image runs the CPU provider only.
RUN npm ci --no-audit --no-fund && npm cache clean --force

FROM node:20.20.2-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
RUN groupadd --gid 10001 flowfleet \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin flowfleet
# The code stays root-owned and read-only to the service user (a worker writes nothing to disk).
COPY --from=deps /app /app
USER 10001:10001
# Healthy while this worker's heartbeat key is live in Redis (the coordinator's own liveness rule).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "--import", "tsx", "--conditions=@flowfleet/source", "apps/worker/src/health-main.ts"]
# SIGTERM: stop fetching, drain for FLOWFLEET_DRAIN_TIMEOUT_MS (25 s by default), hand back the
# rest, exit; the runtime's stop timeout must exceed that bound plus 20 s (compose: stop_grace_period).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/infra/docker/worker-entrypoint.sh"]
