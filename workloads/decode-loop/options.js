// decode-loop's options from ctx.params (declared in manifest.json, validated by the harness
// before a run; checked again here for pages opened by `serve` or by hand). A bad value throws
// an Error with a one-line message naming the valid values.

export const KV_BUFFERS = ['preallocated', 'recreate-destroy', 'recreate-drop'];
export const CALL_ENDINGS = ['clean', 'leak', 'drop-undestroyed'];
export const BIND_GROUP_CACHE = ['evict', 'never'];
export const UNIFORM_BUFFERS = ['cache', 'per-dispatch'];
export const GRAPHS = ['unfused', 'fused'];
/** Dispatch paths (executor.js VARIANTS) and the fused graph's two cell variants. */
export const VARIANTS = ['fresh', 'reuse', 'dynamic-offset', 'immediates', 'bind-group-cache'];
export const FUSED_VARIANTS = { fused: 'fresh', 'fused-reuse': 'reuse' };
export const ON_GPU_ERROR = ['fail', 'continue'];

const flag = (v) => v === true || (v !== undefined && v !== null && !['', '0', 'false', 'no', 0, false].includes(v));

function int(params, name, dflt, lo, hi) {
  const raw = params[name];
  const v = raw === undefined || raw === null || raw === '' ? dflt : Number(raw);
  if (!Number.isInteger(v) || v < lo || v > hi) throw new Error(`--param ${name}=${raw}: must be an integer from ${lo} to ${hi}`);
  return v;
}

function num(params, name, dflt, lo, hi) {
  const raw = params[name];
  const v = raw === undefined || raw === null || raw === '' ? dflt : Number(raw);
  if (!Number.isFinite(v) || v < lo || v > hi) throw new Error(`--param ${name}=${raw}: must be a number from ${lo} to ${hi}`);
  return v;
}

function oneOf(params, name, dflt, choices) {
  const v = String(params[name] ?? dflt);
  if (!choices.includes(v)) throw new Error(`--param ${name}=${v}: must be one of ${choices.join(', ')}`);
  return v;
}

async function resolveProfile(params) {
  if (params.profile && typeof params.profile === 'object') {
    return { profileName: params.profileName ?? 'custom', profile: params.profile };
  }
  const manifest = await (await fetch(new URL('./manifest.json', import.meta.url))).json();
  const profileName = params.profileName ?? (typeof params.profile === 'string' ? params.profile : manifest.default_profile);
  const profile = manifest.profiles[profileName];
  if (!profile) throw new Error(`unknown profile '${profileName}' (have: ${Object.keys(manifest.profiles).join(', ')})`);
  return { profileName, profile };
}

/**
 * ctx.params -> the run's options (manifest.json `parameters` says what each one changes).
 * Variants: the dispatch paths fresh, reuse, dynamic-offset, immediates, bind-group-cache
 * (executor.js, remedies.js); `fused` / `fused-reuse` are the fused graph (graph-fused.js) on the
 * fresh / reuse dispatch path; `--param graph=fused` selects it for any variant.
 */
export async function parseOptions(params = {}) {
  const { profileName, profile } = await resolveProfile(params);
  const fusedVariant = FUSED_VARIANTS[params.variant];
  const variant = fusedVariant ?? params.variant ?? 'fresh';
  if (!VARIANTS.includes(variant)) {
    throw new Error(`unknown variant '${params.variant}' (have: ${[...VARIANTS, ...Object.keys(FUSED_VARIANTS)].join(', ')})`);
  }
  const bindings = int(params, 'bindings_per_bind_group', 0, 0, 16);
  if (bindings === 1) throw new Error('--param bindings_per_bind_group=1: must be 0 (each kernel\'s own) or from 2 to 16');
  const uniformBuffers = oneOf(params, 'uniform_buffers', 'cache', UNIFORM_BUFFERS);
  if (uniformBuffers === 'per-dispatch' && (variant === 'dynamic-offset' || variant === 'immediates')) {
    throw new Error(`--param uniform_buffers=per-dispatch: variant ${variant} has no uniform buffer per dispatch (use fresh, reuse or bind-group-cache)`);
  }
  return {
    variant,
    cellVariant: params.variant ?? 'fresh',
    profileName,
    profile,
    graph: fusedVariant ? 'fused' : oneOf(params, 'graph', 'unfused', GRAPHS),
    tokens: int(params, 'tokens', 16, 1, 10_000_000),
    seed: int(params, 'seed', 1, 0, 2 ** 32 - 1),
    startToken: int(params, 'start_token', 1, 0, profile.vocab - 1),
    verify: flag(params.verify),
    verifyTolerance: num(params, 'verify_tolerance', 1e-3, 0, 1),
    bufferCachePop: oneOf(params, 'buffer_cache_pop', 'oldest', ['oldest', 'lifo']),
    maxPendingDispatches: int(params, 'max_pending_dispatches', 16, 1, 100_000),
    dispatchesPerPass: int(params, 'dispatches_per_pass', 0, 0, 100_000),
    maxInFlight: int(params, 'max_in_flight', 0, 0, 1024),
    uniformBuffers,
    bindGroupCacheMaxEntries: int(params, 'bind_group_cache_max_entries', 4096, 1, 10_000_000),
    onGpuError: oneOf(params, 'on_gpu_error', 'fail', ON_GPU_ERROR),
    bindingsPerBindGroup: bindings,
    storageBufferMinBytes: int(params, 'storage_buffer_min_bytes', 0, 0, 2 ** 31),
    kvBuffers: oneOf(params, 'kv_buffers', 'preallocated', KV_BUFFERS),
    tokensPerCall: int(params, 'tokens_per_call', 0, 0, 10_000_000),
    callEnding: oneOf(params, 'call_ending', 'clean', CALL_ENDINGS),
    bindGroupCache: oneOf(params, 'bind_group_cache', 'evict', BIND_GROUP_CACHE),
    encoderMibPerCall: num(params, 'encoder_mib_per_call', 0, 0, 65536),
    encoderBufferMib: num(params, 'encoder_buffer_mib', 64, 1 / 1024, 65536),
    faults: {
      hang: int(params, 'test_hang_at_step', -1, -1, 10_000_000),
      busy: int(params, 'test_busy_at_step', -1, -1, 10_000_000),
      destroyDevice: int(params, 'test_destroy_device_at_step', -1, -1, 10_000_000),
      throw: int(params, 'test_throw_at_step', -1, -1, 10_000_000),
    },
  };
}
