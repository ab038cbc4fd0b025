# syntax=docker/dockerfile:1
# The flowfleet coordinator. Build from the repository root:
#   docker build -f infra/docker/coordinator.Dockerfile -t flowfleet/coordinator:0.1.0 .
# It runs the TypeScript sources exactly as `npm run coordinator` does (tsx, the
# @flowfleet/source condition), so there is no separate build step to drift from.

FROM node:20.20.2-bookworm-slim AS deps
WORKDIR /app
ENV TURBO_TELEMETRY_DISABLED=1
COPY . .
# .npmrc skips onnxruntime-node's CUDA download (the coordinator never loads onnxruntime).
RUN npm ci --no-audit --no-fund && npm cache clean --force

FROM node:20.20.2-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    FLOWFLEET_HOST=0.0.0.0 \
    FLOWFLEET_PORT=8080 \
    FLOWFLEET_BLOB_DIR=/var/lib/flowfleet/blobs
RUN groupadd --gid 10001 flowfleet \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin flowfleet \
 && mkdir -p /var/lib/flowfleet/blobs \
 && chown -R 10001:10001 /var/lib/flowfleet
# The code stays root-owned and read-only to the service user; only the blob store is writable.
COPY --from=deps /app /app
USER 10001:10001
VOLUME ["/var/lib/flowfleet/blobs"]
EXPOSE 8080
# /healthz answers 200 only while Redis answers PING within 1 s (no auth needed).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.FLOWFLEET_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node itself is PID 1 and handles SIGTERM (main.ts closes the server, then Redis).
CMD ["node", "--import", "tsx", "--conditions=@flowfleet/source", "apps/coordinator/src/main.ts"]
