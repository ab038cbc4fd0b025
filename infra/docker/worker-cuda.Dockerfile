# syntax=docker/dockerfile:1
# A flowfleet worker on onnxruntime-node's CUDA execution provider. Build from the repository root:
#   docker build -f infra/docker/worker-cuda.Dockerfile -t flowfleet/worker-cuda:0.1.0 .
# Run it on a host with the NVIDIA Container Toolkit (`--gpus all`, or the Kubernetes
# nvidia.com/gpu resource). The worker reports `cuda/sm<major><minor>` only when it finds both a
# device and onnxruntime's CUDA provider library; otherwise it reports cpu (DESIGN.md §2).

FROM node:20.20.2-bookworm-slim AS deps
WORKDIR /app
ENV TURBO_TELEMETRY_DISABLED=1
COPY . .
# npm ci keeps skipping the provider download (.npmrc); the provider is fetched explicitly here:
# onnxruntime-node's own install script, told to install its linux/x64 `cuda12` manifest
# (libonnxruntime_providers_{cuda,shared,tensorrt}.so from the Microsoft.ML.OnnxRuntime.Gpu.Linux
# NuGet package), then a check that the library the worker probes for is really there.
RUN npm ci --no-audit --no-fund \
 && ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules/onnxruntime-node/script/install.js \
 && test -s node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so \
 && npm cache clean --force

# CUDA 12 + cuDNN 9 runtime libraries, which onnxruntime 1.x's CUDA 12 provider links against.
FROM nvidia/cuda:12.8.1-cudnn-runtime-ubuntu22.04
WORKDIR /app
# The base image already sets NVIDIA_VISIBLE_DEVICES=all and NVIDIA_DRIVER_CAPABILITIES=
# compute,utility (utility: the toolkit mounts nvidia-smi, which the platform probe runs).
ENV NODE_ENV=production
# Node from the same official image the dependencies were installed with (glibc 2.28+ binary;
# Ubuntu 22.04 has 2.35); nvidia-smi comes from the driver the container toolkit mounts.
COPY --from=deps /usr/local/bin/node /usr/local/bin/node
RUN groupadd --gid 10001 flowfleet \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin flowfleet
COPY --from=deps /app /app
USER 10001:10001
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "--import", "tsx", "--conditions=@flowfleet/source", "apps/worker/src/health-main.ts"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/infra/docker/worker-entrypoint.sh"]
