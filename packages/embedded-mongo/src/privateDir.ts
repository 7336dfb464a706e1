/**
 * The data directory holds every document in clear (webhook secrets, customers' phone numbers), and
 * the engine has no authentication of its own: the file system's permissions are the only thing that
 * keeps other users out. So the directory is owner-only (0700) and so is each file the engine writes
 * (0600), whatever the umask says.
 */
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

const octal = (mode: number) => (mode & 0o777).toString(8);

/**
 * Creates `dir` owner-only, or tightens an existing one (and the regular files directly in it, the
 * engine's and any other) that an older version, a copy or a restore left open to others; logs once
 * what it changed. Symbolic links and subdirectories are left alone: the engine writes neither.
 */
export function makePrivateDir(dir: string, logger: (msg: string, extra?: object) => void): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const changed: string[] = [];
  // Only the group's and others' bits are taken away: the owner's stay as they are.
  const tighten = (p: string, mode: number) => {
    if ((mode & 0o077) === 0) return;
    fs.chmodSync(p, mode & 0o700);
    changed.push(`${path.relative(dir, p) || '.'} ${octal(mode)}→${octal(mode & 0o700)}`);
  };
  tighten(dir, fs.statSync(dir).mode);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile()) tighten(path.join(dir, entry.name), fs.lstatSync(path.join(dir, entry.name)).mode);
  }
  if (changed.length > 0) {
    logger('embedded db: made the data directory owner-only (it was readable by others)', { dataDir: dir, changed });
  }
}
