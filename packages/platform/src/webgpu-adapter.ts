import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/**
 * What a WebGPU adapter says about itself: the spec's `GPUAdapterInfo` as Dawn fills it in
 * (`vendor` e.g. `nvidia` or `mesa`, `architecture` e.g. `hopper` or `software`, `device`,
 * `description`) and whether it is a fallback (software) adapter.
 */
export interface WebGpuAdapterInfo {
  readonly vendor: string;
  readonly architecture: string;
  readonly device: string;
  readonly description: string;
  readonly isFallbackAdapter: boolean;
}

/** The answer of one adapter request: the adapter's info, or why there is none. */
export type WebGpuAdapterProbe =
  | { readonly adapter: WebGpuAdapterInfo; readonly probeMs: number }
  | { readonly adapter: undefined; readonly reason: string; readonly probeMs: number };

/** The arch of every software (emulated) WebGPU adapter: lavapipe/llvmpipe, SwiftShader, WARP. */
export const SOFTWARE_ADAPTER_ARCH = 'software';

/** How long one adapter request may take (lavapipe answers in about 0.3 s). */
export const WEBGPU_PROBE_TIMEOUT_MS = 20_000;

// Drivers that emulate a GPU on the CPU, for adapters that report no architecture and do not say
// they are a fallback (Dawn marks lavapipe both ways; older Dawn builds did neither).
const SOFTWARE_DRIVERS = /llvmpipe|lavapipe|softpipe|swiftshader|\bwarp\b|microsoft basic render/i;

/** A lowercase `[a-z0-9-]` slug of an adapter string (at most 32 characters). */
function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32)
    .replace(/-+$/g, '');
}

/** True when the adapter emulates a GPU on the CPU (a fallback adapter, or a software driver). */
export function isSoftwareAdapter(info: WebGpuAdapterInfo): boolean {
  return (
    info.isFallbackAdapter ||
    info.architecture.toLowerCase() === SOFTWARE_ADAPTER_ARCH ||
    SOFTWARE_DRIVERS.test(`${info.device} ${info.description}`)
  );
}

/**
 * The webgpu arch of an adapter: `software` for any software adapter (so a job can exclude or
 * require them, and an operator sees emulated workers as one class), else `<vendor>-<architecture>`
 * as the adapter reports them (`nvidia-hopper`, `amd-rdna-3`, `intel-gen-12lp`), `<vendor>` when
 * it reports no architecture, `gpu` when it reports neither.
 */
export function webgpuArch(info: WebGpuAdapterInfo): string {
  if (isSoftwareAdapter(info)) return SOFTWARE_ADAPTER_ARCH;
  const parts = [slug(info.vendor), slug(info.architecture)].filter((part) => part !== '');
  return parts.length === 0 ? 'gpu' : parts.join('-');
}

/** The adapter's own words as platform features (`adapter.vendor:mesa`, …, `adapter.fallback`). */
export function webgpuFeatures(info: WebGpuAdapterInfo): string[] {
  const features = [
    `adapter.vendor:${info.vendor}`,
    `adapter.architecture:${info.architecture}`,
    `adapter.device:${info.device}`,
    `adapter.description:${info.description}`,
  ];
  if (info.isFallbackAdapter) features.push('adapter.fallback');
  return features;
}

// Runs in a child process (so Dawn's Vulkan instance and threads end with it and never share a
// process with onnxruntime's own Dawn): asks for the adapter onnxruntime's WebGPU provider gets
// (its default power preference is high-performance) and prints one JSON line.
const PROBE_SCRIPT = `
const started = performance.now();
const say = (value) => { process.stdout.write(JSON.stringify({ ...value, probeMs: performance.now() - started }) + '\\n'); process.exit(0); };
try {
  const { create } = await import(process.argv[1]);
  const adapter = await create([]).requestAdapter({ powerPreference: 'high-performance' });
  if (adapter == null) say({ reason: 'Dawn found no WebGPU adapter (no Vulkan driver with a usable device)' });
  const info = adapter.info ?? {};
  say({ adapter: {
    vendor: String(info.vendor ?? ''), architecture: String(info.architecture ?? ''),
    device: String(info.device ?? ''), description: String(info.description ?? ''),
    isFallbackAdapter: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false),
  } });
} catch (error) {
  say({ reason: 'the WebGPU adapter request failed: ' + (error && error.message ? error.message : String(error)) });
}
`;

/** Where Dawn's Node bindings (npm `webgpu`, an optional dependency) are, when installed. */
export function webgpuModuleUrl(): string | undefined {
  try {
    return pathToFileURL(createRequire(import.meta.url).resolve('webgpu')).href;
  } catch {
    // Not installed (an optional dependency): the fact is "no way to ask for an adapter".
    return undefined;
  }
}

/**
 * Asks Dawn for a WebGPU adapter in a short-lived child process and returns what it says, or why
 * there is none. Never throws.
 */
export function requestWebGpuAdapter(
  env: Readonly<Record<string, string | undefined>> = process.env,
  moduleUrl: string | undefined = webgpuModuleUrl(),
): WebGpuAdapterProbe {
  const started = performance.now();
  const none = (reason: string): WebGpuAdapterProbe => ({
    adapter: undefined,
    reason,
    probeMs: performance.now() - started,
  });
  if (moduleUrl === undefined) {
    return none("Dawn's Node bindings (the optional dependency 'webgpu') are not installed");
  }
  let stdout: string;
  try {
    stdout = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', PROBE_SCRIPT, moduleUrl],
      {
        encoding: 'utf8',
        timeout: WEBGPU_PROBE_TIMEOUT_MS,
        // Dawn prints driver warnings straight to stderr; only the JSON line on stdout counts.
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { ...env },
      },
    );
  } catch (error) {
    return none(`the WebGPU adapter probe did not finish: ${(error as Error).message}`);
  }
  const line = stdout.trim().split('\n').at(-1) ?? '';
  try {
    const parsed = JSON.parse(line) as { adapter?: WebGpuAdapterInfo; reason?: string };
    return parsed.adapter === undefined
      ? none(parsed.reason ?? 'no WebGPU adapter')
      : { adapter: parsed.adapter, probeMs: performance.now() - started };
  } catch {
    // Not JSON: a broken probe is reported as the reason, never as an adapter.
    return none(`the WebGPU adapter probe answered '${line.slice(0, 200)}'`);
  }
}
