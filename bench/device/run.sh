#!/usr/bin/env bash
# The device kit's entry (bench/device/README.md): runs device-bench on this machine with the
# carried node, apps, onnxruntime and redis-server, and writes one JSON (default ./device.json;
# pass --out PATH, and sizes: --latent 9x30x52 --rollout-latent 9x30x52 --group 4 --steps 10).
# Needs a Linux x86-64 machine with a GPU and its Vulkan driver; nothing else.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# The system's Vulkan loader when it has one, else the carried one.
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
  export LD_LIBRARY_PATH="$here/lib/vulkan${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# Container images with NVIDIA's driver mounted under /usr/local/nvidia keep its Vulkan ICD there.
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ -f "$nvidia_icd" ] &&
  ! ls /usr/share/vulkan/icd.d/nvidia* /etc/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
  export VK_DRIVER_FILES=$nvidia_icd
fi
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/flowfleet-xdg-runtime}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"

redis=$(command -v redis-server || echo "$here/bin/redis-server")
echo "device-kit: node $("$here/bin/node" --version), redis-server $redis, VK_DRIVER_FILES=${VK_DRIVER_FILES:-default}" >&2
exec "$here/bin/node" "$here/app/device-bench.js" --apps "$here/app" --redis-server "$redis" "$@"
