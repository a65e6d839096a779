// Parameters of the dispatch-overhead workload, validated (a bad value throws, which the worker
// records as an `error` sample: the cell fails with the message).
//
// The caps are the harness's own sanity limits, not WebGPU limits: MAX_N bounds one method-run
// (sequential submits N command buffers; 65,536 of them take seconds even on a GPU) and keeps
// the expected readback x0 + N*b exact in f32 (N * 3 + 64 < 2^24).

export const MAX_N = 65536;
export const MAX_K = 65536;
export const MAX_ELEMENTS = 65536;
export const MAX_ROUNDS = 10000;
/** A timestamp query set holds at most 4096 queries (WebGPU spec, createQuerySet), 2 per dispatch. */
export const MAX_KERNEL_DISPATCHES = 2048;

export const METHODS = ['single-op', 'sequential', 'batched', 'one-pass', 'phases', 'kernel'];

function intIn(name, value, lo, hi) {
  const v = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (!Number.isInteger(v) || v < lo || v > hi) {
    throw new Error(`--param ${name}=${value}: must be an integer from ${lo} to ${hi}`);
  }
  return v;
}

function oneOf(name, value, choices) {
  if (!choices.includes(value)) throw new Error(`--param ${name}=${value}: must be one of ${choices.join(', ')}`);
  return value;
}

/**
 * Options from ctx.params. Returns {variant, n, rounds, methods[], batchSizes[] (numbers; 'all'
 * becomes n), batchLabels[], batchedPass, singleOpSync, timestampQuery, elements, kernelN}.
 * Throws Error with a one-line message on any bad value.
 */
export function parseOptions(params) {
  const variant = oneOf('variant', params.variant ?? 'fresh', ['fresh', 'reused']);
  const n = intIn('n', params.n ?? 256, 1, MAX_N);
  const rounds = intIn('rounds', params.rounds ?? params.tokens ?? 8, 1, MAX_ROUNDS);
  const methods = String(params.methods ?? METHODS.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  if (!methods.length) throw new Error('--param methods is empty');
  for (const m of methods) oneOf('methods', m, METHODS);
  const batchLabels = [];
  const batchSizes = [];
  for (const raw of String(params.batch_sizes ?? '1,16,64,all').split(',').map((s) => s.trim()).filter(Boolean)) {
    if (raw === 'all') {
      batchLabels.push('all');
      batchSizes.push(n);
    } else {
      const k = intIn('batch_sizes', raw, 1, MAX_K);
      batchLabels.push(String(k));
      batchSizes.push(Math.min(k, n));
    }
  }
  if (methods.includes('batched') && !batchSizes.length) throw new Error('--param batch_sizes is empty');
  return {
    variant,
    n,
    rounds,
    methods,
    batchSizes,
    batchLabels,
    batchedPass: oneOf('batched_pass', params.batched_pass ?? 'shared', ['shared', 'per-dispatch']),
    singleOpSync: oneOf('single_op_sync', params.single_op_sync ?? 'done', ['done', 'map']),
    timestampQuery: oneOf('timestamp_query', params.timestamp_query ?? 'auto', ['auto', 'off']),
    elements: intIn('elements', params.elements ?? 64, 1, MAX_ELEMENTS),
    kernelN: Math.min(n, intIn('kernel_max_dispatches', params.kernel_max_dispatches ?? MAX_KERNEL_DISPATCHES, 1, MAX_KERNEL_DISPATCHES)),
  };
}
