// workloads/upload/paths.js on the emulated WebGPU (web/emulation/, which really moves bytes):
// every path delivers the bytes, and its staging ledger counts what it created and destroyed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installEmulatedWebGPU, completeSubmittedWork } from '../../web/emulation/webgpu-emulated.js';
import { PATHS, Uploader, parseSizes } from '../../workloads/upload/paths.js';

const emu = installEmulatedWebGPU(globalThis, { logUncapturedErrors: false });
const BU = globalThis.GPUBufferUsage;

async function device() {
  return (await (await emu.gpu.requestAdapter()).requestDevice());
}

async function readBack(d, buffer, size) {
  const rb = d.createBuffer({ size, usage: BU.MAP_READ | BU.COPY_DST });
  const enc = d.createCommandEncoder();
  enc.copyBufferToBuffer(buffer, 0, rb, 0, size);
  d.queue.submit([enc.finish()]);
  completeSubmittedWork(d);
  await rb.mapAsync(GPUMapMode.READ);
  return new Uint8Array(rb.getMappedRange().slice(0));
}

for (const path of PATHS) {
  test(`${path}: five uploads of 64 and 256 bytes land in dst; staging ledger`, async () => {
    const d = await device();
    const up = new Uploader(d, path, { maxBytes: 256, ring: 2 });
    up.init();
    const dst = d.createBuffer({ size: 256, usage: BU.STORAGE | BU.COPY_DST | BU.COPY_SRC });
    for (let i = 0; i < 5; i++) {
      const size = i % 2 ? 256 : 64;
      const src = Uint8Array.from({ length: size }, (_, j) => (j * 7 + i) & 0xff);
      await up.upload(dst, src);
      completeSubmittedWork(d);
      assert.deepEqual(await readBack(d, dst, size), src, `upload ${i}`);
    }
    const l = up.ledger;
    if (path === 'staging-ring') {
      assert.deepEqual([l.buffersCreated, l.buffersDestroyed, l.bytesCreated], [2, 0, 512]);
    } else if (path === 'write-buffer') {
      assert.deepEqual([l.buffersCreated, l.buffersDestroyed], [0, 0]);
    } else {
      assert.deepEqual([l.buffersCreated, l.buffersDestroyed], [5, 5]);
      assert.equal(l.bytesCreated, 64 * 3 + 256 * 2);
      assert.equal(l.bytesCreated, l.bytesDestroyed);
    }
    await up.destroy();
    assert.equal(up.ledger.bytesCreated, up.ledger.bytesDestroyed);
  });
}

test('parseSizes: bytes, multiples of 4 from 16 to the limit; one-line errors', () => {
  assert.deepEqual(parseSizes('16, 65536'), [16, 65536]);
  assert.throws(() => parseSizes('12'), /sizes item 12: must be a multiple of 4 bytes from 16 to/);
  assert.throws(() => parseSizes('18'), /multiple of 4/);
  assert.throws(() => parseSizes('1k'), /sizes item 1k/);
  assert.throws(() => parseSizes('2048', 1024), /from 16 to 1024/);
  assert.throws(() => parseSizes(''), /sizes is empty/);
});
