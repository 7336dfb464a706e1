/**
 * Why the data directory cannot be used, in words an operator can act on. The system's own message
 * for these is cryptic: on a read-only file system `mkdir -p` of a new directory reports ENOENT, and
 * tightening an existing one's mode reports EROFS from chmod.
 */
import fs from 'node:fs';
import path from 'node:path';

const REMEDY = 'point DATA_DIR at a directory this user can write (DATA_DIR= keeps the data in memory only)';

export function dataDirError(dir: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const why = code === 'EROFS' || code === 'ENOENT' || code === 'EACCES' || code === 'EPERM' ? writeProblem(dir) ?? code : undefined;
  if (!why) return err instanceof Error ? err : new Error(String(err));
  const message =
    why === 'EROFS'
      ? `embedded db: the data directory ${dir} is on a read-only file system, and the engine writes its journal there: mount it read-write, or ${REMEDY}`
      : `embedded db: the data directory ${dir} cannot be written by this user (${why}), and the engine writes its journal there: give it to this user (uid ${process.getuid?.() ?? '?'}), or ${REMEDY}`;
  return new Error(message, { cause: err });
}

/** EROFS or EACCES for the directory, or its nearest existing parent, when this process cannot write it. */
function writeProblem(dir: string): string | undefined {
  let at = path.resolve(dir);
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  try {
    fs.accessSync(at, fs.constants.W_OK);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code;
  }
  // access(2) does not look at the mount: a read-only file system still answers "writable" for root.
  try {
    const probe = path.join(at, `.pgw-write-probe-${process.pid}`);
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code;
  }
  return undefined;
}
