/**
 * A small file system to fill, for the disk-full tests (this package's and the gateway's fault suite):
 * a tmpfs of `size` mounted on `dir`. Returns why it could not be mounted (not root, mounting refused
 * in this container), for the caller to skip loudly; undefined once mounted.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export function mountTmpfs(dir: string, size: string, readOnly = false): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700${readOnly ? ',ro' : ''}`, 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (e) {
    return `mount refused: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`;
  }
}

/** Lazily: a descriptor the engine or a child still holds does not fail the test's clean-up. */
export function unmount(dir: string): void {
  execFileSync('umount', ['-l', dir]);
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Appends to `filler` until the file system refuses more; returns the error code it refused with. */
export function fillDisk(filler: string): string | undefined {
  const fd = fs.openSync(filler, 'a');
  const chunk = Buffer.alloc(256 * 1024);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code;
  } finally {
    fs.closeSync(fd);
  }
}
