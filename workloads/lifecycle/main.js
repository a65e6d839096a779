// lifecycle: does the memory a WebGPU page held come back when the page is reloaded or navigated
// away from, within one browser context? workloads/README.md contract; README.md here.
//
// One step per page load (a "cycle"; --tokens cycles). Each load: request a device, allocate
// buffer_mb MiB of storage buffers and fill them (writeBuffer), run `dispatches` dispatches of
// workloads/kernels/add.wgsl with a new bind group each and read the chain back (the
// dispatch-overhead bench, bench.js), end the step, hold `hold_ms` (the harness samples every
// browser process meanwhile, tagged with this step), tear down per `teardown`, then ask the
// runner page (ctx.page.navigate, web/runner.js) to reload (variant `reload`) or to navigate to
// its away page and back (variant `navigate`). The page keeps {cycle} in sessionStorage and the
// next load's worker continues with step cycle + 1; the harness sees one cell throughout.

import { DispatchBench, expectedResult } from '../dispatch-overhead/bench.js';

const MIB = 1 << 20;
/** Each allocation is at most this big (under the default maxStorageBufferBindingSize, 128 MiB). */
const CHUNK = 16 * MIB;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function sameValues(a, b) {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function intParam(p, name, def, lo, hi) {
  const v = p[name] ?? def;
  if (!Number.isInteger(v) || v < lo || v > hi) throw new Error(`lifecycle: --param ${name}=${v}: must be an integer from ${lo} to ${hi}`);
  return v;
}

export async function run(ctx) {
  const p = ctx.params ?? {};
  const mode = p.variant ?? 'reload';
  if (!['reload', 'navigate'].includes(mode)) throw new Error(`lifecycle: unknown variant ${mode} (valid: reload, navigate)`);
  const cycles = Number(p.tokens ?? 4);
  const bufferMb = intParam(p, 'buffer_mb', 64, 0, 4096);
  const dispatches = intParam(p, 'dispatches', 64, 0, 65536);
  const holdMs = intParam(p, 'hold_ms', 500, 0, 600000);
  const teardown = p.teardown ?? 'none';
  if (!['none', 'destroy'].includes(teardown)) throw new Error(`lifecycle: --param teardown=${teardown}: must be one of none, destroy`);
  const page = ctx.page ?? { loads: 1, navigation_type: null, state: null };
  const cycle = page.state?.cycle ?? 0;
  const emulated = ctx.adapter.info?.architecture === 'emulated';

  ctx.probe.beginStep(cycle);
  const t0 = performance.now();
  const device = await ctx.adapter.requestDevice({ label: `lifecycle.${cycle}` });
  const deviceMs = performance.now() - t0;
  const buffers = [];
  let bytes = 0;
  for (let left = bufferMb * MIB; left > 0; left -= CHUNK) {
    const size = Math.min(CHUNK, left);
    const b = device.createBuffer({ label: `lifecycle.${buffers.length}`, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(b, 0, new Uint8Array(size).fill((cycle + buffers.length) & 0xff));
    buffers.push(b);
    bytes += size;
  }
  const res = await fetch(ctx.kernelUrl('add.wgsl'));
  if (!res.ok) throw new Error(`fetch add.wgsl: HTTP ${res.status}`);
  const bench = new DispatchBench(device, await res.text(), { elements: 64, variant: 'fresh', kernelN: 1 }, false);
  await bench.init();
  let readbackOk = null;
  if (dispatches > 0) {
    bench.reset();
    const out = await bench.runMethod('one-pass', dispatches);
    // emulated WebGPU runs no shaders: its readback cannot be checked
    readbackOk = emulated ? null : sameValues(out.result, expectedResult(64, dispatches));
  }
  await device.queue.onSubmittedWorkDone();
  ctx.probe.endStep(cycle, {
    token: cycle,
    extra: {
      cycle, mode, teardown, thread: ctx.thread ?? 'worker', page_loads: page.loads,
      navigation_type: page.navigation_type ?? 'unknown', buffer_bytes: bytes, device_ms: deviceMs,
      readback_ok: readbackOk === null ? null : readbackOk ? 1 : 0,
    },
  });
  if (readbackOk === false) throw new Error(`lifecycle cycle ${cycle}: readback is not x0 + ${dispatches}*b`);
  await sleep(holdMs);
  if (teardown === 'destroy') {
    bench.destroy();
    for (const b of buffers) b.destroy();
    device.destroy();
  }
  if (cycle + 1 < cycles) return ctx.page.navigate(mode, { cycle: cycle + 1 });
  return { workload: 'lifecycle', mode, cycles, page_loads: page.loads, buffer_bytes: bytes, teardown };
}
