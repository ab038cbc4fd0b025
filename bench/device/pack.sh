#!/usr/bin/env bash
# Packs the device kit (bench/device/README.md): everything a Linux x86-64 machine with a GPU and
# its Vulkan driver, but no Node or npm, needs to run a local flowfleet fleet on the GPU through
# WebGPU and measure it — this machine's node binary, the apps bundled with esbuild, the native
# parts of onnxruntime-node and Dawn's Node bindings, a redis-server with its libraries, the
# Vulkan loader — as bench/device/dist/flowfleet-device-kit.tar.xz (under 64 MiB).
#
#   bash bench/device/pack.sh [--no-archive]   (the latter stops at the unpacked kit directory)
#   then, on the GPU machine:
#   tar xJf flowfleet-device-kit.tar.xz && flowfleet-device-kit/run.sh --out device.json
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dist=$root/bench/device/dist
kit=$dist/flowfleet-device-kit
limit_bytes=$((64 * 1024 * 1024))

rm -rf "$kit" "$dist/flowfleet-device-kit.tar.xz"
mkdir -p "$kit/bin" "$kit/app/node_modules" "$kit/lib/redis" "$kit/lib/vulkan"

# The apps and the bench, from sources; the modules the compute pool loads into its threads are
# entries of their own, named as moduleWorkerUrl looks for them next to their caller, and shared
# code is split into chunks so a thread holds one copy of each module (FlowfleetError's class
# among them). The native packages stay external and travel as files.
# Every module a thread loads by moduleWorkerUrl(import.meta.url, '<stem>'): <caller's dir>/<stem>.ts.
thread_entries=()
while IFS=: read -r file stem; do
  thread_entries+=("$stem=$(dirname "$file")/$stem.ts")
done < <(grep -rHoE --include='*.ts' --exclude='*.test.ts' "moduleWorkerUrl\(import\.meta\.url, '[a-z-]+'\)" \
  packages/*/src apps/*/src | sed -E "s/:moduleWorkerUrl\(import\.meta\.url, '([a-z-]+)'\)/:\1/" | sort -u)
"$root/node_modules/.bin/esbuild" \
  coordinator=apps/coordinator/src/main.ts \
  worker=apps/worker/src/main.ts \
  device-bench=bench/device/device-bench.ts \
  "${thread_entries[@]}" \
  --bundle --splitting --format=esm --platform=node --target=node20 \
  --conditions=@flowfleet/source --external:onnxruntime-node --external:webgpu \
  --banner:js="import { createRequire as __ffRequire } from 'node:module'; const require = __ffRequire(import.meta.url);" \
  --outdir="$kit/app" --log-level=warning
echo '{ "type": "module" }' >"$kit/app/package.json"

# onnxruntime-node: its JS, onnxruntime-common and the linux-x64 native binding and library.
ort=$root/node_modules/onnxruntime-node
mkdir -p "$kit/app/node_modules/onnxruntime-node/bin/napi-v6/linux"
cp -r "$ort/package.json" "$ort/dist" "$kit/app/node_modules/onnxruntime-node/"
cp -r "$ort/bin/napi-v6/linux/x64" "$kit/app/node_modules/onnxruntime-node/bin/napi-v6/linux/"
mkdir -p "$kit/app/node_modules/onnxruntime-common"
cp -r "$root/node_modules/onnxruntime-common/package.json" "$root/node_modules/onnxruntime-common/dist" \
  "$kit/app/node_modules/onnxruntime-common/"
# Dawn's Node bindings (the adapter probe): the linux-x64 build only.
wgpu=$root/node_modules/webgpu
mkdir -p "$kit/app/node_modules/webgpu/dist"
cp "$wgpu/package.json" "$wgpu/index.js" "$kit/app/node_modules/webgpu/"
cp -r "$wgpu/dist/linux-x64" "$kit/app/node_modules/webgpu/dist/"

# The queue board's static UI, which the coordinator serves from its package directory.
mkdir -p "$kit/app/node_modules/@bull-board/ui"
cp -r "$root/node_modules/@bull-board/ui/package.json" "$root/node_modules/@bull-board/ui/dist" \
  "$kit/app/node_modules/@bull-board/ui/"

# Node (glibc and libstdc++ only), redis-server and the libraries it links beyond glibc.
cp "$(readlink -f "$(command -v node)")" "$kit/bin/node"
redis=$(readlink -f "$(command -v redis-server)")
cp "$redis" "$kit/bin/redis-server.bin"
ldd "$redis" | awk '/=> \// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
  libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libstdc++.so.* | libgcc_s.so.* | ld-linux*) ;;
  *) cp -L "$lib" "$kit/lib/redis/" ;;
  esac
done
cat >"$kit/bin/redis-server" <<'EOF'
#!/usr/bin/env bash
here=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH="$here/../lib/redis${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/redis-server.bin" "$@"
EOF
chmod +x "$kit/bin/redis-server"
# The Vulkan loader, for machines whose image lacks one (used only then: see run.sh).
cp -L "$(ldconfig -p | awk '/libvulkan\.so\.1 .*x86-64/ {print $NF; exit}')" "$kit/lib/vulkan/libvulkan.so.1"

cp bench/device/run.sh "$kit/run.sh"
cp bench/device/README.md "$kit/README.md"
chmod +x "$kit/run.sh"

if [ "${1:-}" = --no-archive ]; then
  echo "pack: $kit ($(du -sm "$kit" | cut -f1) MiB, not archived)"
  exit 0
fi
(cd "$dist" && tar -cf - flowfleet-device-kit | xz -T0 -6 >flowfleet-device-kit.tar.xz)
size=$(stat -c %s "$dist/flowfleet-device-kit.tar.xz")
echo "pack: $dist/flowfleet-device-kit.tar.xz $((size / 1024 / 1024)) MiB ($size bytes; unpacked $(du -sm "$kit" | cut -f1) MiB)"
if [ "$size" -gt "$limit_bytes" ]; then
  echo "pack: over the 64 MiB limit" >&2
  exit 1
fi
