// installEmulatedWebGPU defines real classes on a global so probes can wrap prototypes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installEmulatedWebGPU } from '../../web/emulation/webgpu-emulated.js';

test('install on a worker-like global, wrap a prototype method, uninstall', async () => {
  const fakeGlobal = { navigator: {} };
  const { gpu, uninstall } = installEmulatedWebGPU(fakeGlobal, { logUncapturedErrors: false });
  assert.equal(fakeGlobal.navigator.gpu, gpu);
  for (const name of ['GPU', 'GPUAdapter', 'GPUDevice', 'GPUQueue', 'GPUBuffer', 'GPUBindGroup', 'GPUBindGroupLayout',
    'GPUPipelineLayout', 'GPUComputePipeline', 'GPUShaderModule', 'GPUCommandEncoder', 'GPUComputePassEncoder',
    'GPUCommandBuffer', 'GPUQuerySet', 'GPUValidationError', 'GPUBufferUsage', 'GPUMapMode', 'GPUShaderStage']) {
    assert.ok(fakeGlobal[name], name);
  }
  assert.equal(fakeGlobal.GPUBufferUsage.STORAGE, 0x80);
  assert.throws(() => new fakeGlobal.GPUDevice(), TypeError);

  let calls = 0;
  const original = fakeGlobal.GPUDevice.prototype.createBindGroup;
  fakeGlobal.GPUDevice.prototype.createBindGroup = function (...args) { calls++; return original.apply(this, args); };
  try {
    const adapter = await gpu.requestAdapter();
    assert.ok(adapter instanceof fakeGlobal.GPUAdapter);
    assert.equal(adapter.info.vendor, 'webgpu-harness');
    assert.equal(adapter.info.architecture, 'emulated');
    assert.equal(adapter.info.description, 'emulated WebGPU (modeled native memory)');
    assert.equal(adapter.limits.maxComputeWorkgroupsPerDimension, 65535);
    assert.ok('maxBufferSize' in adapter.limits);
    assert.ok([...(function* () { for (const k in adapter.limits) yield k; })()].includes('maxBindGroups'));
    assert.equal(adapter.features.has('shader-f16'), true);
    assert.equal(typeof gpu.getPreferredCanvasFormat(), 'string');
    const device = await adapter.requestDevice({ requiredFeatures: ['shader-f16'], requiredLimits: { maxBufferSize: 1 << 20 } });
    assert.ok(device instanceof fakeGlobal.GPUDevice);
    assert.equal(device.limits.maxBufferSize, 268435456, 'a worse required limit keeps the default');
    const layout = device.createBindGroupLayout({ entries: [{ binding: 0, visibility: 4, buffer: { type: 'storage' } }] });
    const buffer = device.createBuffer({ size: 16, usage: 128 });
    const bg = device.createBindGroup({ layout, entries: [{ binding: 0, resource: buffer }] });
    assert.ok(bg instanceof fakeGlobal.GPUBindGroup);
    assert.equal(calls, 1);
    await assert.rejects((await gpu.requestAdapter()).requestDevice({ requiredFeatures: ['texture-compression-bc'] }), TypeError);
    await assert.rejects((await gpu.requestAdapter()).requestDevice({ requiredLimits: { maxBindGroups: 64 } }), (e) => e.name === 'OperationError');
    await assert.rejects(adapter.requestDevice(), (e) => e.name === 'OperationError', 'adapter already consumed');
    device.destroy();
    const info = await device.lost;
    assert.equal(info.reason, 'destroyed');
  } finally {
    uninstall();
  }
  assert.equal(fakeGlobal.GPUDevice, undefined);
  assert.equal('gpu' in fakeGlobal.navigator, false);
});

test('install on globalThis without navigator (node) and uninstall', () => {
  const hadNavigator = 'navigator' in globalThis;
  const { gpu, uninstall } = installEmulatedWebGPU(globalThis, {});
  assert.equal(globalThis.navigator.gpu, gpu);
  assert.equal(typeof globalThis.GPUDevice.prototype.createBindGroup, 'function');
  uninstall();
  assert.equal('navigator' in globalThis, hadNavigator);
  assert.equal(globalThis.GPUDevice, undefined);
});

test('limits: spec defaults, the webkit-apple7 preset, overrides', async () => {
  const { createEmulatedGPU, DEFAULT_LIMITS, LIMIT_PRESETS } = await import('../../web/emulation/webgpu-emulated.js');
  const def = await createEmulatedGPU().requestAdapter();
  for (const [k, v] of Object.entries(DEFAULT_LIMITS)) assert.equal(def.limits[k], v, k);
  assert.equal(def.limits.maxStorageBuffersPerShaderStage, 8);
  const apple = await createEmulatedGPU({ limits: 'webkit-apple7' }).requestAdapter();
  assert.equal(apple.limits.maxStorageBuffersPerShaderStage, 44);
  assert.equal(apple.limits.minStorageBufferOffsetAlignment, 32);
  const device = await apple.requestDevice({ requiredLimits: { maxStorageBuffersPerShaderStage: 44, minStorageBufferOffsetAlignment: 32 } });
  assert.equal(device.limits.maxStorageBuffersPerShaderStage, 44);
  assert.equal(device.limits.minStorageBufferOffsetAlignment, 32);
  assert.equal(device.limits.maxBindGroups, 4, 'unrequested limits stay at the default');
  const custom = await createEmulatedGPU({ limits: { maxBufferSize: 1 << 30 } }).requestAdapter();
  assert.equal(custom.limits.maxBufferSize, 1 << 30);
  assert.throws(() => createEmulatedGPU({ limits: 'nope' }), TypeError);
  assert.throws(() => createEmulatedGPU({ limits: { maxWidgets: 1 } }), TypeError);
  assert.deepEqual(Object.keys(LIMIT_PRESETS), ['spec-default', 'webkit-apple7', 'ios-2024', 'ios-2025']);
});
