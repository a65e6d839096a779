// upload: what one upload of N bytes from JS into a GPUBuffer costs, in time and in buffers, on
// each path (paths.js): writeBuffer, a ring of mapped staging buffers, or one mapped staging
// buffer per upload (mappedAtCreation or mapAsync(WRITE)). workloads/README.md contract.
//
// One step per upload: --tokens rounds, each round one upload of every size in `sizes`
// (round-major, so drift hits every size alike). Step s uploads a per-size source array (filled
// once, outside the steps) whose last 16 bytes are stamped with (round, size, step, path-free
// magic); then, with sync=done, waits for queue.onSubmittedWorkDone(); then, with verify, copies
// dst's last 16 bytes into a MAP_READ buffer and checks the stamp arrived (its FNV-1a is the
// step's logits_hash, equal across paths). extra: path, ring, size_bytes, round, enqueue_ms
// (step start to the upload queued: staging allocation, map waits, memcpy, submit), wait_ms (map
// waits alone), done_ms (to onSubmittedWorkDone), the staging ledger (buffers and bytes created
// and destroyed this step, bytes alive) and expected_* counters (paths.js CALLS_PER_UPLOAD plus
// the verify readback: +1 encoder, +1 submit, +1 mapAsync).

import { CALLS_PER_UPLOAD, Uploader, parseSizes } from './paths.js';
import { fnv1a32Hex } from '../lib/hash.js';

const STAMP_BYTES = 16;
const MAGIC = 0x55504c44; // 'UPLD'

function sourceArray(size) {
  const src = new Uint8Array(size);
  for (let i = 0; i < size; i++) src[i] = (i * 31 + 7) & 0xff;
  return src;
}

function stamp(src, words) {
  new Uint32Array(src.buffer, src.byteLength - STAMP_BYTES, 4).set(words);
}

export async function run(ctx) {
  const p = ctx.params ?? {};
  const path = p.variant ?? 'write-buffer';
  const rounds = Number(p.tokens ?? 8);
  const ring = Number(p.ring ?? 4);
  if (!Number.isInteger(ring) || ring < 1 || ring > 64) throw new Error(`upload: --param ring=${p.ring}: must be an integer from 1 to 64`);
  const sync = p.sync ?? 'done';
  if (!['done', 'none'].includes(sync)) throw new Error(`upload: --param sync=${sync}: must be one of done, none`);
  const verify = p.verify !== false && p.verify !== 'false';
  const adapterMax = ctx.adapter.limits.maxBufferSize;
  const sizes = parseSizes(p.sizes ?? '65536,1048576,16777216', adapterMax);
  const maxBytes = Math.max(...sizes);
  const device = await ctx.adapter.requestDevice({
    label: 'upload',
    requiredLimits: maxBytes > 268435456 ? { maxBufferSize: maxBytes } : {},
  });
  const gpuErrors = [];
  device.addEventListener('uncapturederror', (e) => gpuErrors.push(String(e.error?.message ?? e.error)));
  const U = GPUBufferUsage;
  const dst = new Map(sizes.map((s) => [s, device.createBuffer({ label: `upload.dst.${s}`, size: s, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC })]));
  const src = new Map(sizes.map((s) => [s, sourceArray(s)]));
  const readback = device.createBuffer({ label: 'upload.verify', size: STAMP_BYTES, usage: U.MAP_READ | U.COPY_DST });
  const up = new Uploader(device, path, { maxBytes, ring });
  up.init();
  await device.queue.onSubmittedWorkDone();
  const perSize = {};
  let step = 0;
  try {
    for (let r = 0; r < rounds; r++) {
      for (const size of sizes) {
        const data = src.get(size);
        const words = [MAGIC, r, size >>> 0, step];
        stamp(data, words);
        const before = up.ledger.snapshot();
        ctx.probe.beginStep(step);
        const t0 = performance.now();
        // eslint-disable-next-line no-await-in-loop
        const { waitMs } = await up.upload(dst.get(size), data);
        const enqueueMs = performance.now() - t0;
        let doneMs = null;
        if (sync === 'done') {
          // eslint-disable-next-line no-await-in-loop
          await device.queue.onSubmittedWorkDone();
          doneMs = performance.now() - t0;
        }
        let hash = null;
        let ok = null;
        if (verify) {
          const enc = device.createCommandEncoder({ label: 'upload.verify' });
          enc.copyBufferToBuffer(dst.get(size), size - STAMP_BYTES, readback, 0, STAMP_BYTES);
          device.queue.submit([enc.finish()]);
          // eslint-disable-next-line no-await-in-loop
          await readback.mapAsync(GPUMapMode.READ);
          const got = new Uint32Array(readback.getMappedRange().slice(0));
          readback.unmap();
          ok = words.every((w, i) => got[i] === w);
          hash = fnv1a32Hex(got);
        }
        const after = up.ledger;
        const calls = CALLS_PER_UPLOAD[path];
        const v = verify ? 1 : 0;
        const extra = {
          path, ring: path === 'staging-ring' ? ring : 0, size_bytes: size, round: r, sync,
          enqueue_ms: enqueueMs, wait_ms: waitMs, done_ms: doneMs,
          staging_buffers_created: after.buffersCreated - before.buffersCreated,
          staging_buffers_destroyed: after.buffersDestroyed - before.buffersDestroyed,
          staging_bytes_created: after.bytesCreated - before.bytesCreated,
          staging_bytes_destroyed: after.bytesDestroyed - before.bytesDestroyed,
          staging_bytes_alive: after.bytesCreated - after.bytesDestroyed,
          expected_create_buffer: calls.createBuffer,
          expected_buffer_destroy: calls.bufferDestroy,
          expected_map_async: calls.mapAsync + v,
          expected_write_buffer: calls.writeBuffer,
          expected_write_buffer_bytes: calls.writeBuffer ? size : 0,
          expected_submits: calls.submit + v,
          verify_ok: ok === null ? null : ok ? 1 : 0,
        };
        ctx.probe.endStep(step, { token: r, logitsHash: hash, extra });
        if (ok === false) throw new Error(`upload ${path} ${size} B round ${r}: dst's last 16 bytes are not the stamp just uploaded`);
        if (gpuErrors.length) throw new Error(`WebGPU error: ${gpuErrors.join('; ')}`);
        (perSize[size] ??= []).push(doneMs ?? enqueueMs);
        step += 1;
      }
    }
  } finally {
    await up.destroy();
    for (const b of dst.values()) b.destroy();
    readback.destroy();
    device.destroy();
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  return {
    workload: 'upload', path, ring, sync, verify, sizes, rounds,
    ms_per_upload_median: Object.fromEntries(Object.entries(perSize).map(([k, xs]) => [k, median(xs.length > 1 ? xs.slice(1) : xs)])),
    staging: up.ledger.snapshot(),
  };
}
