/**
 * A collection: documents by canonical _id key plus its indexes. Mutations here are
 * synchronous and all-or-nothing (every unique check runs before anything changes), which is
 * what makes each single-document write atomic. Stored documents are never mutated in place:
 * updates install a new version, so cursors, undo logs and snapshots can keep references to the
 * decoded objects they were given. The documents themselves are kept as BSON bytes (docStore.ts).
 */
import { Binary, UUID } from 'bson';
import type { DocFiles } from './docFiles';
import { DocStore, encodeDoc, storedBytesOf, type CapturedDocs } from './docStore';
import { ErrorCodes, MongoCommandError } from './errors';
import { FileDocStore } from './fileDocStore';
import { FieldPicker } from './bsonRaw';
import { Index, duplicateKeyError, type IndexSpec } from './indexes';
import { canonicalKey, compareValues, type Doc } from './values';

export const ID_INDEX_SPEC: IndexSpec = { v: 2, key: { _id: 1 }, name: '_id_' };
/** The _id index reads documents' _id only: built without decoding the rest. */
const ID_FIELD = new FieldPicker(['_id']);

export class Collection {
  /** With a data directory (`files`), documents are read from its files; else they are kept in memory. */
  private readonly docs: DocStore | FileDocStore;
  readonly indexes = new Map<string, Index>();
  readonly uuid: Binary;

  constructor(
    readonly db: string,
    readonly name: string,
    readonly options: Doc = {},
    uuid?: Binary,
    files?: DocFiles,
  ) {
    this.docs = files ? new FileDocStore(files) : new DocStore();
    this.uuid = uuid ?? new UUID();
    this.indexes.set('_id_', new Index(ID_INDEX_SPEC, () => this.docs.picked(ID_FIELD)));
  }

  get ns(): string {
    return `${this.db}.${this.name}`;
  }

  get(idKey: string): Doc | undefined {
    return this.docs.get(idKey);
  }

  /** Number of stored documents. Readers outside this class go through get/values/size only. */
  get size(): number {
    return this.docs.size;
  }

  /** Every stored document, in insertion order. */
  values(): Iterable<Doc> {
    return this.docs.values();
  }

  /** Every stored document's id key, in insertion order. */
  ids(): Iterable<string> {
    return this.docs.keys();
  }

  /** A document's stored BSON bytes, for the journal (written without a re-encode). */
  stored(idKey: string): Uint8Array | undefined {
    return this.docs.stored(idKey);
  }

  /** The stored documents as they are now, for a snapshot. */
  captureDocs(): CapturedDocs {
    return this.docs.capture();
  }

  /** The journal synced `bytes` (a stored version given by `stored`) at `pos` of data file `file`. */
  landed(bytes: Uint8Array, file: number, pos: number): void {
    if (this.docs instanceof FileDocStore) this.docs.landed(bytes, file, pos);
  }

  private keysPerIndex(doc: Doc): unknown[][][] {
    const out: unknown[][][] = [];
    for (const idx of this.indexes.values()) out.push(idx.keysFor(doc));
    return out;
  }

  /** Inserts a document that already has an _id. Throws E11000 without side effects. */
  insert(doc: Doc): string {
    const id = canonicalKey(doc._id);
    const idIndex = this.indexes.get('_id_')!;
    if (this.docs.has(id)) throw duplicateKeyError(this.ns, idIndex, [doc._id]);
    const keys = this.keysPerIndex(doc);
    let i = 0;
    for (const idx of this.indexes.values()) {
      const k = keys[i++]!;
      if (!idx.isId) {
        const conflict = idx.findConflict(k, id);
        if (conflict) throw duplicateKeyError(this.ns, idx, conflict.key);
      }
    }
    const bytes = encodeDoc(doc);
    i = 0;
    for (const idx of this.indexes.values()) idx.add(keys[i++]!, id);
    this.docs.put(id, bytes, doc);
    return id;
  }

  /** Replaces the stored version of a document (same _id). Throws E11000 without side effects. */
  replace(id: string, oldDoc: Doc, newDoc: Doc, skipUniqueCheck = false, bytes = encodeDoc(newDoc)): void {
    // `bytes` is encoded before anything changes: a document BSON cannot hold throws there.
    const changes: Array<{ idx: Index; oldKeys: unknown[][]; newKeys: unknown[][] }> = [];
    for (const idx of this.indexes.values()) {
      if (idx.isId || sameFields(idx.reads, oldDoc, newDoc)) continue;
      const oldKeys = idx.keysFor(oldDoc);
      const newKeys = idx.keysFor(newDoc);
      if (sameKeys(oldKeys, newKeys)) continue;
      if (!skipUniqueCheck) {
        const conflict = idx.findConflict(newKeys, id);
        if (conflict) throw duplicateKeyError(this.ns, idx, conflict.key);
      }
      changes.push({ idx, oldKeys, newKeys });
    }
    for (const c of changes) {
      c.idx.remove(c.oldKeys, id);
      c.idx.add(c.newKeys, id);
    }
    this.docs.put(id, bytes, newDoc);
  }

  delete(id: string): Doc | undefined {
    const doc = this.docs.get(id);
    if (!doc) return undefined;
    for (const idx of this.indexes.values()) idx.remove(idx.keysFor(doc), id);
    this.docs.delete(id);
    return doc;
  }

  /**
   * Used by recovery and undo: install a version without unique checks. A version that was stored
   * before goes back with its very bytes, so an undo can tell it from any other version by identity.
   */
  forcePut(doc: Doc): void {
    const id = canonicalKey(doc._id);
    const old = this.docs.get(id);
    const bytes = storedBytesOf(doc) ?? encodeDoc(doc);
    if (old) this.replace(id, old, doc, true, bytes);
    else {
      for (const idx of this.indexes.values()) idx.add(idx.keysFor(doc), id);
      this.docs.put(id, bytes, doc);
    }
  }

  /**
   * Start-up: a snapshot and journal replay install documents without touching the indexes (declared
   * with declareIndex), and finishLoad then builds each index once (or defers it), from the final
   * documents, sorted in one pass: cheaper than keeping every index ordered through hundreds of
   * thousands of inserts.
   */
  loadPut(bytes: Uint8Array, file: number, pos: number): void {
    if (!(this.docs instanceof FileDocStore)) throw new Error('embedded db: loading documents needs a data directory');
    this.docs.locate(canonicalKey(ID_FIELD.value(bytes)), file, pos, bytes.length);
  }

  loadDelete(id: string): void {
    this.docs.delete(id);
  }

  declareIndex(spec: IndexSpec): void {
    if (!this.indexes.has(spec.name)) this.indexes.set(spec.name, new Index(spec));
  }

  /**
   * After the load: builds the unique indexes now (a duplicate must be found at start-up, and every
   * insert checks them) and defers the others to their first use (Index.defer), so that a start-up on
   * a large data directory serves its first request without building indexes it does not read yet.
   * Returns the unique indexes it had to drop; `dropped` hears of a deferred one dropped later.
   */
  finishLoad(dropped: (d: { index: string; error: string }) => void): Array<{ index: string; error: string }> {
    const built: Index[] = [];
    for (const idx of this.indexes.values()) {
      if (idx.isId) continue;
      if (idx.unique) built.push(idx);
      else idx.defer(() => this.buildDeferred([idx], dropped));
    }
    return this.buildIndexes(built);
  }

  /** Builds the first index still waiting for its first use, if any; returns its name (idle time: Engine). */
  buildNextDeferredIndex(dropped: (d: { index: string; error: string }) => void): string | undefined {
    for (const idx of this.indexes.values()) {
      if (idx.isId || !idx.deferred) continue;
      this.buildDeferred([idx], dropped);
      return idx.name;
    }
    return undefined;
  }

  /**
   * Builds deferred indexes, each at its first use: a query reads one or two of a collection's indexes,
   * and a pass for one costs a fraction of all. A pass that cannot read the files leaves them deferred,
   * to be tried again by the next use.
   */
  private buildDeferred(building: Index[], dropped: (d: { index: string; error: string }) => void): void {
    for (const idx of building) idx.beginBuild();
    let failures: Array<{ index: string; error: string }>;
    try {
      failures = this.buildIndexes(building);
    } catch (e) {
      for (const idx of building) idx.defer(() => this.buildDeferred([idx], dropped));
      throw e;
    }
    for (const f of failures) {
      building.find((idx) => idx.name === f.index)!.failed(f.error);
      dropped(f);
    }
  }

  /**
   * Builds `building` from the stored documents; returns (and drops) those that failed. One pass over
   * the stored bytes: most entries are encoded straight from the BSON elements of the fields they read
   * (Index.entryFromBson); a document is decoded, and then only the top-level fields some index reads,
   * only for an index that needs values (a partial filter, a dotted path, an array, a subdocument...).
   */
  private buildIndexes(building: Index[]): Array<{ index: string; error: string }> {
    const dropped: Array<{ index: string; error: string }> = [];
    if (building.length === 0) return dropped;
    const picker = new FieldPicker(building.flatMap((idx) => idx.topLevelFields()));
    const entries = building.map((): string[] => []);
    const failed = new Map<Index, unknown>();
    /** Per index read from the bytes: its fields' positions among the picker's, and scratch for theirs in a document. */
    const fromBson = building.map((idx) => {
      const fields = idx.bsonFields();
      return fields && { slots: fields.map((f) => picker.slotOf(f)), at: new Int32Array(fields.length) };
    });
    const located = new Int32Array(picker.size);
    const add = (id: string, fields: Doc | undefined, buf?: Buffer, offset = 0): void => {
      if (buf) picker.locate(buf, offset, located);
      for (let i = 0; i < building.length; i++) {
        const idx = building[i]!;
        if (failed.has(idx)) continue;
        const raw = fromBson[i];
        if (buf && raw) {
          for (let j = 0; j < raw.slots.length; j++) raw.at[j] = located[raw.slots[j]!]!;
          const e = idx.entryFromBson(buf, raw.at, id);
          if (e === null) continue;
          if (e !== undefined) {
            entries[i]!.push(e);
            continue;
          }
        }
        try {
          fields ??= picker.pick(buf!, offset);
          for (const k of idx.keysFor(fields)) entries[i]!.push(idx.entry(k, id));
        } catch (e) {
          failed.set(idx, e);
        }
      }
    };
    if (this.docs instanceof FileDocStore) this.docs.visitBytes((id, buf, offset) => add(id, undefined, buf, offset));
    else for (const [id, fields] of this.docs.picked(picker)) add(id, fields);
    building.forEach((idx, i) => {
      try {
        if (failed.has(idx)) throw failed.get(idx);
        idx.buildFrom(entries[i]!, (id) => this.docs.get(id));
      } catch (e) {
        this.indexes.delete(idx.name);
        dropped.push({ index: idx.name, error: String(e) });
      }
    });
    return dropped;
  }

  /** Builds a new index over existing documents; a unique violation aborts the build. */
  createIndex(spec: IndexSpec): Index {
    const idx = new Index(spec);
    for (const [id, doc] of this.docs.entries()) {
      const keys = idx.keysFor(doc);
      const conflict = idx.findConflict(keys, id);
      if (conflict) throw duplicateKeyError(this.ns, idx, conflict.key);
      idx.add(keys, id);
    }
    this.indexes.set(spec.name, idx);
    return idx;
  }

  dropIndex(name: string): void {
    if (name === '_id_') {
      throw new MongoCommandError(ErrorCodes.InvalidOptions, 'cannot drop _id index');
    }
    if (!this.indexes.delete(name)) {
      throw new MongoCommandError(ErrorCodes.IndexNotFound, `index not found with name [${name}]`);
    }
  }

  clear(): void {
    this.docs.clear();
    for (const idx of this.indexes.values()) idx.clear();
  }
}

/**
 * Whether two versions hold the very same values in `fields`. An update copies only the containers it
 * writes into and shares the rest with the version before (update.ts, Draft), which is never changed
 * in place: an index whose fields are all shared keeps its keys, and is not read twice to learn it.
 */
function sameFields(fields: readonly string[], a: Doc, b: Doc): boolean {
  for (const f of fields) if (!Object.is(a[f], b[f])) return false;
  return true;
}

function sameKeys(a: unknown[][], b: unknown[][]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    for (let j = 0; j < x.length; j++) {
      // Entries compare by value (1 and 1.0 are the same key), so equal keys can stay as they are.
      if (x[j] !== y[j] && compareValues(x[j], y[j]) !== 0) return false;
    }
  }
  return true;
}
