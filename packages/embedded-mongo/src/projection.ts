/**
 * find()/findAndModify projections. Plain inclusion/exclusion (the common mongoose case,
 * `select`) is done here without copying untouched values; anything with operators or
 * expressions ($slice, $elemMatch, aggregation expressions) is handed to mingo.
 */
import { Query } from 'mingo';
import { isPlainObject, setOwn, type Doc } from './values';

type Tree = { [k: string]: Tree | true };

interface Compiled {
  mode: 'include' | 'exclude' | 'mingo';
  tree: Tree;
  excludeId: boolean;
  spec: Doc;
}

function isSimpleFlag(v: unknown): boolean {
  return typeof v === 'number' || typeof v === 'boolean';
}

export function compileProjection(spec: unknown): Compiled | undefined {
  if (!isPlainObject(spec)) return undefined;
  const entries = Object.entries(spec);
  if (entries.length === 0) return undefined;
  let include = false;
  let exclude = false;
  let excludeId = false;
  let includeId = false;
  const tree: Tree = {};
  for (const [path, v] of entries) {
    if (!isSimpleFlag(v) || path.includes('$')) return { mode: 'mingo', tree, excludeId, spec };
    const on = Boolean(v);
    if (path === '_id') {
      excludeId = !on;
      includeId = on;
      continue;
    }
    if (on) include = true;
    else exclude = true;
    let node = tree;
    const parts = path.split('.');
    parts.forEach((p, i) => {
      if (i === parts.length - 1) node[p] = true;
      else {
        const next = node[p];
        if (next === true) return;
        node = (next as Tree | undefined) ?? (node[p] = {});
      }
    });
  }
  if (include && exclude) return { mode: 'mingo', tree, excludeId, spec };
  // `{ _id: 1 }` alone is an inclusion of _id only, as on a MongoDB server (not "no projection").
  return { mode: include || (includeId && !exclude) ? 'include' : 'exclude', tree, excludeId, spec };
}

function includeTree(value: unknown, tree: Tree): unknown {
  if (Array.isArray(value)) {
    return value.filter((e) => isPlainObject(e) || Array.isArray(e)).map((e) => includeTree(e, tree));
  }
  if (!isPlainObject(value)) return undefined;
  const out: Doc = {};
  for (const [k, sub] of Object.entries(tree)) {
    if (!Object.hasOwn(value, k)) continue;
    const v = value[k];
    if (sub === true) setOwn(out, k, v);
    else {
      const r = includeTree(v, sub);
      if (r !== undefined) setOwn(out, k, r);
    }
  }
  return out;
}

function excludeTree(value: unknown, tree: Tree): unknown {
  if (Array.isArray(value)) return value.map((e) => (isPlainObject(e) || Array.isArray(e) ? excludeTree(e, tree) : e));
  if (!isPlainObject(value)) return value;
  const out: Doc = {};
  for (const k of Object.keys(value)) {
    const sub = tree[k];
    if (sub === true) continue;
    setOwn(out, k, sub ? excludeTree(value[k], sub) : value[k]);
  }
  return out;
}

export function applyProjection(doc: Doc, p: Compiled | undefined): Doc {
  if (!p) return doc;
  if (p.mode === 'mingo') {
    // mingo's find projection understands $slice / $elemMatch / expressions.
    const res = new Query({}).find([doc], p.spec).all();
    return (res[0] as Doc | undefined) ?? {};
  }
  if (p.mode === 'exclude') {
    const out = excludeTree(doc, p.tree) as Doc;
    if (p.excludeId) delete out._id;
    return out;
  }
  const out: Doc = {};
  if (!p.excludeId && '_id' in doc) out._id = doc._id;
  Object.assign(out, includeTree(doc, p.tree) as Doc);
  return out;
}
