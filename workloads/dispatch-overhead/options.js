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
/** Iterations of one sync-method run (each one latency sample in the step's extra). */
export const MAX_SYNC_ITERATIONS = 4096;
/** sync-n chains n × iterations dispatches: x0 + that × b stays exact in f32 below 2^24 (b ≤ 3). */
export const MAX_SYNC_CHAIN = 1 << 22;

/** Per-dispatch methods (the default set; n ≥ 1 dispatches per run, figure = wall ÷ n). */
export const DISPATCH_METHODS = ['single-op', 'sequential', 'batched', 'one-pass', 'phases', 'kernel'];
/** Sync-latency methods: `iterations` timed syncs per run, each one sample (bench.js runSync). */
export const SYNC_METHODS = ['sync-empty', 'sync-dispatch', 'sync-map', 'sync-n'];
export const METHODS = [...DISPATCH_METHODS, ...SYNC_METHODS];
export const PACINGS = ['none', 'raf', 'timeout'];

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
 * becomes n), batchLabels[], batchedPass, singleOpSync, timestampQuery, elements, kernelN,
 * syncIterations, pacing, paceMs, mainThread}.
 * n = 0 is valid only when every method is a sync method (sync-n then submits an empty command
 * buffer before each sync). Throws Error with a one-line message on any bad value.
 */
export function parseOptions(params) {
  const variant = oneOf('variant', params.variant ?? 'fresh', ['fresh', 'reused']);
  const rounds = intIn('rounds', params.rounds ?? params.tokens ?? 8, 1, MAX_ROUNDS);
  const methods = String(params.methods ?? DISPATCH_METHODS.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  if (!methods.length) throw new Error('--param methods is empty');
  for (const m of methods) oneOf('methods', m, METHODS);
  const perDispatch = methods.filter((m) => !SYNC_METHODS.includes(m));
  const n = intIn('n', params.n ?? 256, 0, MAX_N);
  if (n === 0 && perDispatch.length) {
    throw new Error(`--param n=0: must be an integer from 1 to ${MAX_N} for the methods ${perDispatch.join(', ')} ` +
                    `(n=0 is valid only with the sync methods ${SYNC_METHODS.join(', ')})`);
  }
  const syncIterations = intIn('sync_iterations', params.sync_iterations ?? 64, 1, MAX_SYNC_ITERATIONS);
  if (methods.includes('sync-n') && n * syncIterations > MAX_SYNC_CHAIN) {
    throw new Error(`--param n=${n} with sync_iterations=${syncIterations}: sync-n chains n × sync_iterations ` +
                    `dispatches, at most ${MAX_SYNC_CHAIN} (the readback x0 + that × b must stay exact in f32)`);
  }
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
    syncIterations,
    pacing: oneOf('pacing', params.pacing ?? 'none', PACINGS),
    paceMs: intIn('pace_ms', params.pace_ms ?? 0, 0, 10000),
    mainThread: params.main_thread === true || params.main_thread === 'true',
  };
}
