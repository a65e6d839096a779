// A workload outside the harness (--workloads-dir): same contract as workloads/README.md. It
// imports the harness's shared code by a relative path, as a built-in workload does, since the
// harness serves it at /workloads/bind-groups-k/ beside them.
import { fnv1a32Hex } from '../lib/hash.js';

export async function run(ctx) {
  const p = ctx.params;
  const k = Number(p.k);
  const device = await ctx.adapter.requestDevice({ label: 'bind-groups-k' });
  const buffer = device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE });
  const layout = device.createBindGroupLayout({
    entries: [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } }],
  });
  const make = () => device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer } }] });
  const kept = p.variant === 'reuse' ? Array.from({ length: k }, make) : null;
  for (let i = 0; i < Number(p.tokens); i++) {
    ctx.probe.beginStep(i);
    const groups = kept ?? Array.from({ length: k }, make);
    device.queue.submit([device.createCommandEncoder().finish()]);
    await device.queue.onSubmittedWorkDone();
    ctx.probe.endStep(i, { token: i, logitsHash: fnv1a32Hex(new Uint32Array([i, groups.length])) });
  }
  device.destroy();
  return { k };
}
