// The Dawn host's own pieces (web/dawn/): the copy it hands dawn.node for writeBuffer data on a
// SharedArrayBuffer, the URL → file mapping of its offline mode, and — when Dawn can run here
// (npm webgpu, a Vulkan loader and Chromium's SwiftShader ICD) — that a SharedArrayBuffer
// write through the patched writeBuffer reaches the GPU buffer byte for byte, in a child
// process (dawn.node without the patch kills it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { unsharedCopy } from '../../web/dawn/write-buffer.js';
import { localPath } from '../../web/dawn/roots.js';

test('unsharedCopy takes writeBuffer offsets in elements for typed arrays, bytes otherwise', () => {
  const sab = new SharedArrayBuffer(64);
  const bytes = new Uint8Array(sab);
  for (let i = 0; i < 64; i++) bytes[i] = i;
  const f32 = new Float32Array(sab, 8, 8); // bytes 8..39
  const c = unsharedCopy(f32, 2, 3); // elements 2..4 = bytes 16..27
  assert.ok(!(c.buffer instanceof SharedArrayBuffer));
  assert.deepEqual([...c], [...bytes.slice(16, 28)]);
  assert.deepEqual([...unsharedCopy(f32, 6)], [...bytes.slice(32, 40)]); // size: the rest of the view
  assert.deepEqual([...unsharedCopy(sab, 60)], [60, 61, 62, 63]); // an ArrayBuffer: bytes
  assert.deepEqual([...unsharedCopy(new DataView(sab, 4, 8), 2, 4)], [6, 7, 8, 9]);
  assert.equal(unsharedCopy(f32, 7, 2), null); // past the view: the engine's own error
});

test('localPath maps URL paths under the longest root and refuses climbing out', () => {
  const roots = { web: '/r/web', workloads: '/r/workloads', 'workloads/mine': '/u/mine' };
  assert.equal(localPath(roots, '/web/worker.js'), '/r/web/worker.js');
  assert.equal(localPath(roots, '/workloads/mine/main.js'), '/u/mine/main.js');
  assert.equal(localPath(roots, '/workloads/kernels/add%2Ewgsl'), '/r/workloads/kernels/add.wgsl');
  assert.equal(localPath(roots, '/web/../../etc/passwd'), null);
  assert.equal(localPath(roots, '/elsewhere/x.js'), null);
});

const repo = fileURLToPath(new URL('../../', import.meta.url));
const icd = '/usr/lib/chromium/vk_swiftshader_icd.json';
const dawnHere = existsSync(`${repo}node_modules/webgpu/package.json`) && existsSync(icd);

test('a SharedArrayBuffer write through the patched writeBuffer reaches the buffer (real Dawn)', { skip: !dawnHere && 'npm webgpu or Chromium\'s SwiftShader ICD missing' }, () => {
  const script = `
    import { create, globals } from 'webgpu';
    import { patchWriteBuffer } from './web/dawn/write-buffer.js';
    patchWriteBuffer(globals.GPUQueue);
    const device = await (await create([]).requestAdapter()).requestDevice();
    const U = globals.GPUBufferUsage;
    const dst = device.createBuffer({ size: 16, usage: U.COPY_DST | U.COPY_SRC });
    const read = device.createBuffer({ size: 16, usage: U.COPY_DST | U.MAP_READ });
    const heap = new Uint32Array(new SharedArrayBuffer(64));
    for (let i = 0; i < 16; i++) heap[i] = 1000 + i;
    device.queue.writeBuffer(dst, 0, heap, 4, 4);
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(dst, 0, read, 0, 16);
    device.queue.submit([enc.finish()]);
    await read.mapAsync(globals.GPUMapMode.READ);
    console.log(JSON.stringify([...new Uint32Array(read.getMappedRange())]));
    process.exit(0);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: repo, encoding: 'utf8', timeout: 120_000,
    env: { ...process.env, VK_ICD_FILENAMES: icd, LD_LIBRARY_PATH: '/usr/lib/chromium' },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()), [1004, 1005, 1006, 1007]);
});
