// The measured methods. One DispatchBench per device; each method-run encodes N dispatches of
// Over 400 lines on purpose: every method of one DispatchBench, kept together so they share
// the chain, the staging buffer and the counter bookkeeping (its Python twin: harness/native/bench.py).
// workloads/kernels/add.wgsl chained ping-pong (dispatch j reads buffer j % 2 and b, writes
// buffer (j + 1) % 2), so after N dispatches the result buffer holds x0 + N*b exactly and the
// readback proves that every dispatch ran, in order.
//
// Every method-run ends the same way: its last command buffer also copies the result into a
// MAP_READ staging buffer, and the run's final sync is that buffer's mapAsync. So the probe's
// counters per run are exactly the method's own: submits (= command buffers), command encoders,
// dispatches, createBindGroup (N for `fresh`, 0 for `reused`) and mapAsync (1; N for single-op
// with single_op_sync=map).
//
// Times are performance.now() (ms) deltas; the browser coarsens that clock (5 µs when
// cross-origin isolated: HR-Time §7), so every per-dispatch figure is a total over N dispatches
// divided by N, never one call's delta (except `phases`, see there).


const F32 = 4;
/** Bytes sync-map copies and maps per iteration (the readback of a few values). */
export const SYNC_MAP_BYTES = 16;

/** Quantiles of sorted values by linear interpolation (numpy's default method). */
export function quantile(sorted, q) {
  if (!sorted.length) return null;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/**
 * Summary of per-iteration latencies `us` (µs): {min, p10, median, mean, p90, max} and
 * `samples`, every value rounded to 0.1 µs and joined with commas (a step's extra holds scalars
 * only; 64 samples take ~400 characters).
 */
export function latencySummary(us) {
  const s = [...us].sort((a, b) => a - b);
  const r = (v) => (v === null ? null : Math.round(v * 10) / 10);
  return {
    min: r(s[0] ?? null), p10: r(quantile(s, 0.1)), median: r(quantile(s, 0.5)),
    mean: r(s.length ? s.reduce((a, b) => a + b, 0) / s.length : null), p90: r(quantile(s, 0.9)),
    max: r(s.length ? s[s.length - 1] : null), samples: us.map((v) => r(v)).join(','),
  };
}

/** Initial values x0[i] = i % 251 and increments b[i] = i % 3 + 1 (small integers: exact in f32). */
export function initialValues(elements) {
  const x0 = new Float32Array(elements);
  const b = new Float32Array(elements);
  for (let i = 0; i < elements; i++) {
    x0[i] = i % 251;
    b[i] = (i % 3) + 1;
  }
  return { x0, b };
}

/** Expected result after n chained dispatches: x0 + n*b. */
export function expectedResult(elements, n) {
  const { x0, b } = initialValues(elements);
  const out = new Float32Array(elements);
  for (let i = 0; i < elements; i++) out[i] = x0[i] + n * b[i];
  return out;
}

export class DispatchBench {
  /**
   * @param {GPUDevice} device
   * @param {string} wgsl  source of add.wgsl (bindings: a, b, y storage; u uniform {n})
   * @param {object} o  parseOptions() result (elements, variant)
   * @param {boolean} timestamps  whether the device was created with 'timestamp-query'
   */
  constructor(device, wgsl, o, timestamps) {
    this.device = device;
    this.queue = device.queue;
    this.o = o;
    this.fresh = o.variant === 'fresh';
    this.bytes = o.elements * F32;
    this.groups = Math.ceil(o.elements / 64);
    this.wgsl = wgsl;
    this.timestamps = timestamps;
  }

  async init() {
    const d = this.device;
    const module = d.createShaderModule({ label: 'add', code: this.wgsl });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === 'error');
    if (errors.length) throw new Error(`add.wgsl: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; ')}`);
    this.pipeline = await d.createComputePipelineAsync({ label: 'add', layout: 'auto', compute: { module, entryPoint: 'main' } });
    this.layout = this.pipeline.getBindGroupLayout(0);
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.x = [d.createBuffer({ label: 'x.ping', size: this.bytes, usage: storage }),
      d.createBuffer({ label: 'x.pong', size: this.bytes, usage: storage })];
    this.b = d.createBuffer({ label: 'b', size: this.bytes, usage: storage });
    this.uniform = d.createBuffer({ label: 'u', size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.staging = d.createBuffer({ label: 'readback', size: this.bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    // sync-map: the "few bytes" an application reads back per sync (a token id, a flag)
    this.tiny = d.createBuffer({ label: 'readback.16B', size: SYNC_MAP_BYTES, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const { x0, b } = initialValues(this.o.elements);
    this.x0 = x0;
    this.queue.writeBuffer(this.b, 0, b);
    this.queue.writeBuffer(this.uniform, 0, new Uint32Array([this.o.elements, 0, 0, 0]));
    // reused: one bind group per direction, made once (ORT's would-be cache hit every dispatch)
    this.reusedGroups = [0, 1].map((j) => this.makeBindGroup(j));
    if (this.timestamps) {
      this.querySet = d.createQuerySet({ type: 'timestamp', count: 2 * this.o.kernelN });
      this.queryResolve = d.createBuffer({ label: 'ts.resolve', size: 16 * this.o.kernelN, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      this.queryRead = d.createBuffer({ label: 'ts.read', size: 16 * this.o.kernelN, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    }
    await this.queue.onSubmittedWorkDone();
  }

  makeBindGroup(j) {
    return this.device.createBindGroup({
      label: `add.${j % 2}`,
      layout: this.layout,
      entries: [
        { binding: 0, resource: { buffer: this.x[j % 2] } },
        { binding: 1, resource: { buffer: this.b } },
        { binding: 2, resource: { buffer: this.x[(j + 1) % 2] } },
        { binding: 3, resource: { buffer: this.uniform } },
      ],
    });
  }

  bindGroup(j) {
    return this.fresh ? this.makeBindGroup(j) : this.reusedGroups[j % 2];
  }

  /** setPipeline, setBindGroup(0), dispatchWorkgroups: one dispatch (j-th of the chain). */
  encode(pass, j) {
    const bg = this.bindGroup(j);
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(this.groups);
  }

  /** Reset the chain's input (ping) to x0. Call before beginStep: not part of the measurement. */
  reset() {
    this.queue.writeBuffer(this.x[0], 0, this.x0);
  }

  copyResult(encoder, n) {
    encoder.copyBufferToBuffer(this.x[n % 2], 0, this.staging, 0, this.bytes);
  }

  async readResult() {
    await this.staging.mapAsync(GPUMapMode.READ);
    const out = new Float32Array(this.staging.getMappedRange().slice(0));
    this.staging.unmap();
    return out;
  }

  /**
   * Run one method over n dispatches. `method`: 'single-op' | 'sequential' | 'batched' |
   * 'one-pass'; `k`: dispatches per command buffer (batched only).
   * Resolves to {wallMs (first encode to the final sync), cpuMs (to the last submit's return),
   * result: Float32Array, expected: {submits, commandEncoders, dispatches, bindGroups, mapAsync}}.
   */
  async runMethod(method, n, k = 0) {
    const q = this.queue;
    const d = this.device;
    let submits = 0;
    let mapAsyncs = 1;
    const t0 = performance.now();
    let result = null;
    if (method === 'single-op') {
      for (let j = 0; j < n; j++) {
        const enc = d.createCommandEncoder();
        const pass = enc.beginComputePass();
        this.encode(pass, j);
        pass.end();
        const last = j === n - 1;
        const map = last || this.o.singleOpSync === 'map';
        if (map) this.copyResult(enc, j + 1);
        q.submit([enc.finish()]);
        submits += 1;
        if (map) {
          // eslint-disable-next-line no-await-in-loop
          await this.staging.mapAsync(GPUMapMode.READ);
          if (last) result = new Float32Array(this.staging.getMappedRange().slice(0));
          this.staging.unmap();
        } else {
          // eslint-disable-next-line no-await-in-loop
          await q.onSubmittedWorkDone();
        }
      }
      mapAsyncs = this.o.singleOpSync === 'map' ? n : 1;
      const t1 = performance.now();
      return { wallMs: t1 - t0, cpuMs: null, result, expected: this.expected(n, submits, submits, mapAsyncs) };
    }
    if (method === 'sequential') {
      for (let j = 0; j < n; j++) {
        const enc = d.createCommandEncoder();
        const pass = enc.beginComputePass();
        this.encode(pass, j);
        pass.end();
        if (j === n - 1) this.copyResult(enc, n);
        q.submit([enc.finish()]);
        submits += 1;
      }
    } else if (method === 'batched' || method === 'one-pass') {
      const kk = method === 'one-pass' ? n : k;
      const perDispatchPass = method === 'batched' && this.o.batchedPass === 'per-dispatch';
      for (let start = 0; start < n; start += kk) {
        const end = Math.min(n, start + kk);
        const enc = d.createCommandEncoder();
        if (perDispatchPass) {
          for (let j = start; j < end; j++) {
            const pass = enc.beginComputePass();
            this.encode(pass, j);
            pass.end();
          }
        } else {
          const pass = enc.beginComputePass();
          for (let j = start; j < end; j++) this.encode(pass, j);
          pass.end();
        }
        if (end === n) this.copyResult(enc, n);
        q.submit([enc.finish()]);
        submits += 1;
      }
    } else {
      throw new Error(`unknown method ${method}`);
    }
    const tSubmit = performance.now();
    await this.staging.mapAsync(GPUMapMode.READ);
    const t1 = performance.now();
    result = new Float32Array(this.staging.getMappedRange().slice(0));
    this.staging.unmap();
    return { wallMs: t1 - t0, cpuMs: tSubmit - t0, result, expected: this.expected(n, submits, submits, mapAsyncs) };
  }

  expected(n, submits, encoders, mapAsyncs) {
    return { submits, commandEncoders: encoders, dispatches: n, bindGroups: this.fresh ? n : 0, mapAsync: mapAsyncs };
  }

  /**
   * The sequential method with every call timed on its own: performance.now() before and after
   * each of createCommandEncoder, beginComputePass, createBindGroup (fresh only), setPipeline,
   * setBindGroup, dispatchWorkgroups, end, finish, submit. A clock that floors to a resolution r
   * gives each delta as a multiple of r, but with the call's start uniformly placed between ticks
   * the expected delta equals the true duration, so the mean over n calls is unbiased; its
   * standard error shrinks as r / sqrt(n). Resolves to {phasesMs: {phase: summed ms}, calls: n,
   * wallMs, result, expected}.
   */
  async runPhases(n) {
    const q = this.queue;
    const d = this.device;
    const now = () => performance.now();
    const acc = {
      create_command_encoder: 0, begin_compute_pass: 0, create_bind_group: 0, set_pipeline: 0,
      set_bind_group: 0, dispatch_workgroups: 0, end: 0, finish: 0, submit: 0,
    };
    const t0 = now();
    for (let j = 0; j < n; j++) {
      const a = now();
      const enc = d.createCommandEncoder();
      const b = now();
      const pass = enc.beginComputePass();
      const c = now();
      let bg;
      let e = c;
      if (this.fresh) {
        bg = this.makeBindGroup(j);
        e = now();
        acc.create_bind_group += e - c;
      } else {
        bg = this.reusedGroups[j % 2];
      }
      pass.setPipeline(this.pipeline);
      const f = now();
      pass.setBindGroup(0, bg);
      const g = now();
      pass.dispatchWorkgroups(this.groups);
      const h = now();
      pass.end();
      const i = now();
      if (j === n - 1) this.copyResult(enc, n);
      const i2 = now();
      const cb = enc.finish();
      const k = now();
      q.submit([cb]);
      const l = now();
      acc.create_command_encoder += b - a;
      acc.begin_compute_pass += c - b;
      acc.set_pipeline += f - e;
      acc.set_bind_group += g - f;
      acc.dispatch_workgroups += h - g;
      acc.end += i - h;
      acc.finish += k - i2;
      acc.submit += l - k;
    }
    await this.staging.mapAsync(GPUMapMode.READ);
    const t1 = now();
    const result = new Float32Array(this.staging.getMappedRange().slice(0));
    this.staging.unmap();
    return { phasesMs: acc, calls: n, wallMs: t1 - t0, result, expected: this.expected(n, n, n, 1) };
  }

  /**
   * Kernel-only time from timestamp queries: n dispatches in one command buffer, each in its own
   * compute pass with timestampWrites at its beginning and end; kernel time per dispatch is the
   * mean of (end - begin). Needs a device with 'timestamp-query' (constructor flag); n ≤ 2048.
   * Resolves to {kernelNs: [per dispatch ns], quantumNs (smallest non-zero step between any two
   * timestamps: Chromium rounds them to 100 µs unless its WebGPU developer features are on),
   * result, expected}.
   */
  async runKernelTimestamps(n) {
    if (!this.timestamps) throw new Error('runKernelTimestamps without timestamp-query');
    const enc = this.device.createCommandEncoder();
    for (let j = 0; j < n; j++) {
      const pass = enc.beginComputePass({
        timestampWrites: { querySet: this.querySet, beginningOfPassWriteIndex: 2 * j, endOfPassWriteIndex: 2 * j + 1 },
      });
      this.encode(pass, j);
      pass.end();
    }
    enc.resolveQuerySet(this.querySet, 0, 2 * n, this.queryResolve, 0);
    enc.copyBufferToBuffer(this.queryResolve, 0, this.queryRead, 0, 16 * n);
    this.copyResult(enc, n);
    this.queue.submit([enc.finish()]);
    await Promise.all([this.queryRead.mapAsync(GPUMapMode.READ, 0, 16 * n), this.staging.mapAsync(GPUMapMode.READ)]);
    const ts = new BigUint64Array(this.queryRead.getMappedRange(0, 16 * n).slice(0));
    this.queryRead.unmap();
    const result = new Float32Array(this.staging.getMappedRange().slice(0));
    this.staging.unmap();
    const kernelNs = [];
    let quantumNs = null;
    for (let j = 0; j < n; j++) {
      const begin = ts[2 * j];
      const end = ts[2 * j + 1];
      kernelNs.push(end >= begin ? Number(end - begin) : 0);
    }
    const sorted = [...ts].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    for (let i = 1; i < sorted.length; i++) {
      const step = Number(sorted[i] - sorted[i - 1]);
      if (step > 0 && (quantumNs === null || step < quantumNs)) quantumNs = step;
    }
    return { kernelNs, quantumNs, result, expected: { ...this.expected(n, 1, 1, 2) } };
  }

  /**
   * A sync-latency method: `iterations` times, wait for `pace()` (nothing, a requestAnimationFrame
   * or a setTimeout; outside the timed interval), then time one sync with performance.now():
   *   sync-empty     queue.onSubmittedWorkDone() with nothing submitted since the last sync
   *   sync-dispatch  encoder, pass, 1 dispatch, finish, submit, onSubmittedWorkDone()
   *   sync-map       encoder, copyBufferToBuffer of SYNC_MAP_BYTES, submit, mapAsync(READ),
   *                  getMappedRange, unmap (a readback of a few bytes)
   *   sync-n         encoder, one pass of n dispatches (none for n = 0), finish, submit,
   *                  onSubmittedWorkDone()
   * Dispatches continue the ping-pong chain, and the run ends (untimed) with the usual readback
   * of the chain, so the result is x0 + (dispatches run) × b.
   * Resolves to {samplesUs: [µs per iteration], wallMs, chain (dispatches run), result, expected}.
   */
  async runSync(method, n, iterations, pace) {
    const q = this.queue;
    const d = this.device;
    const samplesUs = [];
    let j = 0;
    let submits = 0;
    let maps = 0;
    const t0 = performance.now();
    for (let i = 0; i < iterations; i++) {
      // eslint-disable-next-line no-await-in-loop
      await pace();
      const a = performance.now();
      if (method === 'sync-empty') {
        // eslint-disable-next-line no-await-in-loop
        await q.onSubmittedWorkDone();
      } else if (method === 'sync-map') {
        const enc = d.createCommandEncoder();
        enc.copyBufferToBuffer(this.x[j % 2], 0, this.tiny, 0, SYNC_MAP_BYTES);
        q.submit([enc.finish()]);
        submits += 1;
        // eslint-disable-next-line no-await-in-loop
        await this.tiny.mapAsync(GPUMapMode.READ);
        this.tiny.getMappedRange().slice(0);
        this.tiny.unmap();
        maps += 1;
      } else if (method === 'sync-dispatch' || method === 'sync-n') {
        const count = method === 'sync-dispatch' ? 1 : n;
        const enc = d.createCommandEncoder();
        if (count > 0) {
          const pass = enc.beginComputePass();
          for (let k = 0; k < count; k++) this.encode(pass, j++);
          pass.end();
        }
        q.submit([enc.finish()]);
        submits += 1;
        // eslint-disable-next-line no-await-in-loop
        await q.onSubmittedWorkDone();
      } else {
        throw new Error(`unknown sync method ${method}`);
      }
      samplesUs.push((performance.now() - a) * 1000);
    }
    const enc = d.createCommandEncoder();
    this.copyResult(enc, j);
    q.submit([enc.finish()]);
    const result = await this.readResult();
    const wallMs = performance.now() - t0;
    return {
      samplesUs, wallMs, chain: j, result,
      expected: { submits: submits + 1, commandEncoders: submits + 1, dispatches: j, bindGroups: this.fresh ? j : 0, mapAsync: maps + 1 },
    };
  }

  destroy() {
    for (const buf of [...this.x, this.b, this.uniform, this.staging, this.tiny, this.queryResolve, this.queryRead]) buf?.destroy();
    this.querySet?.destroy();
  }
}
