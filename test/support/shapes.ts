/**
 * Shape comparison of two JSON values under a schema of openapi.yaml: an example of the contract and a
 * real answer of the gateway must have the same fields, the same JSON types (null is a type of its own)
 * and the same enum members, while free values (ids, amounts, timestamps, names) may differ.
 *
 * - Objects closed by `additionalProperties: false`: the same keys on both sides. Other objects with
 *   declared properties: the example's keys exist in the answer and the declared ones appear on both
 *   sides or on neither. Typed maps (`additionalProperties: <schema>`, no properties, e.g. metadata):
 *   only the values of keys present on both sides are compared.
 * - Enum-valued leaves (`enum` or `const`, possibly `oneOf` with null): equal values.
 * - Arrays of enum members: the same set of members. Other arrays: both empty or both non-empty, and
 *   every element of the example has the shape of some element of the answer.
 * - `oneOf` / `anyOf`: the branch the answer fits decides the schema both sides are compared under
 *   (a discriminator's mapping when there is one).
 * - String fields that carry JSON (JSON_STRING_FIELDS) are parsed and compared under their schema.
 */
export type Schema = { [key: string]: any };

/** `<Component>.<property>` of string fields that hold a JSON document, and that document's schema. */
export const JSON_STRING_FIELDS: Record<string, string> = {
  // The exact raw body of the last delivery attempt: an Event.
  'WebhookDelivery.request_body': 'Event',
};

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export class ShapeComparer {
  constructor(private readonly doc: Schema) {}

  /** Follows `$ref`s; `name` is the last component reached (for JSON_STRING_FIELDS). */
  private deref(schema: Schema | undefined): { s: Schema; name?: string } {
    let s: Schema = schema ?? {};
    let name: string | undefined;
    const seen = new Set<string>();
    while (typeof s.$ref === 'string') {
      const ref: string = s.$ref;
      if (seen.has(ref)) throw new Error(`circular $ref ${ref}`);
      seen.add(ref);
      const m = /^#\/components\/schemas\/(.+)$/.exec(ref);
      if (m) name = m[1];
      const target = ref
        .slice(2)
        .split('/')
        .reduce<any>((acc, k) => acc?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
      if (!target) throw new Error(`unresolved $ref ${ref}`);
      const { $ref: _ignored, ...siblings } = s;
      s = { ...target, ...siblings };
    }
    return { s, name };
  }

  private isNullType(schema: Schema): boolean {
    const { s } = this.deref(schema);
    return s.type === 'null';
  }

  /** A leaf whose values are listed by the contract (enum, const, or a oneOf/anyOf of such, possibly with null). */
  isEnumLike(schema: Schema | undefined): boolean {
    const { s } = this.deref(schema);
    if (Array.isArray(s.enum) || 'const' in s) return true;
    const branches: Schema[] | undefined = s.oneOf ?? s.anyOf;
    if (!branches) return false;
    return branches.some((b) => this.isEnumLike(b)) && branches.every((b) => this.isEnumLike(b) || this.isNullType(b));
  }

  /** A structural check, enough to tell which branch of a oneOf a value is (no formats or patterns). */
  fits(v: unknown, schema: Schema | undefined): boolean {
    const { s } = this.deref(schema);
    if (s.oneOf && !(s.oneOf as Schema[]).some((b) => this.fits(v, b))) return false;
    if (s.anyOf && !(s.anyOf as Schema[]).some((b) => this.fits(v, b))) return false;
    if (s.allOf && !(s.allOf as Schema[]).every((b) => this.fits(v, b))) return false;
    if ('const' in s && !deepEqual(v, s.const)) return false;
    if (Array.isArray(s.enum) && !s.enum.some((e: unknown) => deepEqual(e, v))) return false;
    const t = jsonType(v);
    if (s.type !== undefined) {
      const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
      if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) return false;
    }
    if (t === 'object') {
      const obj = v as Record<string, unknown>;
      const props: Record<string, Schema> = s.properties ?? {};
      for (const k of (s.required as string[] | undefined) ?? []) if (!(k in obj)) return false;
      if (s.additionalProperties === false && Object.keys(obj).some((k) => !(k in props))) return false;
      for (const [k, sub] of Object.entries(props)) if (k in obj && !this.fits(obj[k], sub)) return false;
    }
    if (t === 'array' && s.items) return (v as unknown[]).every((x) => this.fits(x, s.items));
    return true;
  }

  /** The schema to compare under: a oneOf/anyOf resolved to the branch the real value fits. */
  private resolve(schema: Schema | undefined, real: unknown): { s: Schema; name?: string } {
    let { s, name } = this.deref(schema);
    for (let depth = 0; depth < 10; depth++) {
      const branches: Schema[] | undefined = s.oneOf ?? s.anyOf;
      if (!branches || this.isEnumLike(s)) break;
      let chosen: Schema | undefined;
      const disc = s.discriminator as { propertyName: string; mapping?: Record<string, string> } | undefined;
      const tag = disc && real && typeof real === 'object' ? (real as Record<string, unknown>)[disc.propertyName] : undefined;
      if (disc?.mapping && typeof tag === 'string' && disc.mapping[tag]) chosen = { $ref: disc.mapping[tag] };
      chosen ??= branches.find((b) => this.fits(real, b));
      if (!chosen) break; // nothing fits: compare under the union's own keywords (and report the types)
      const { oneOf: _o, anyOf: _a, discriminator: _d, ...rest } = s;
      const next = this.deref(chosen);
      s = { ...rest, ...next.s };
      name = next.name ?? name;
    }
    return { s, name };
  }

  /** Differences between an example and a real answer, one line each; [] when they have the same shape. */
  differences(example: unknown, real: unknown, schema: Schema | undefined, path = '$'): string[] {
    const { s, name } = this.resolve(schema, real);
    if (this.isEnumLike(s)) {
      return deepEqual(example, real) ? [] : [`${path}: ${JSON.stringify(example)} in the example, ${JSON.stringify(real)} in the answer (an enum member)`];
    }
    const te = jsonType(example);
    const tr = jsonType(real);
    if (te !== tr) return [`${path}: ${te} in the example, ${tr} in the answer`];
    if (te === 'array') return this.arrayDifferences(example as unknown[], real as unknown[], s, path);
    if (te !== 'object') return [];
    const ex = example as Record<string, unknown>;
    const re = real as Record<string, unknown>;
    const props: Record<string, Schema> = s.properties ?? {};
    const extra = s.additionalProperties;
    const typedMap = Object.keys(props).length === 0 && extra && typeof extra === 'object';
    const out: string[] = [];
    if (!typedMap) {
      for (const k of Object.keys(ex)) if (!(k in re)) out.push(`${path}.${k}: in the example, not in the answer`);
      const mustMatch = extra === false ? Object.keys(re) : Object.keys(props).filter((k) => k in re);
      for (const k of mustMatch) if (!(k in ex)) out.push(`${path}.${k}: in the answer, not in the example`);
    }
    for (const k of Object.keys(ex)) {
      if (!(k in re)) continue;
      const sub: Schema = props[k] ?? (extra && typeof extra === 'object' ? extra : {});
      const jsonSchema = name ? JSON_STRING_FIELDS[`${name}.${k}`] : undefined;
      if (jsonSchema && typeof ex[k] === 'string' && typeof re[k] === 'string') {
        out.push(...this.jsonStringDifferences(ex[k] as string, re[k] as string, jsonSchema, `${path}.${k}`));
      } else {
        out.push(...this.differences(ex[k], re[k], sub, `${path}.${k}`));
      }
    }
    return out;
  }

  private jsonStringDifferences(example: string, real: string, component: string, path: string): string[] {
    let ex: unknown;
    let re: unknown;
    try {
      ex = JSON.parse(example);
    } catch {
      return [`${path}: the example is not JSON (it carries a ${component})`];
    }
    try {
      re = JSON.parse(real);
    } catch {
      return [`${path}: the answer is not JSON (it carries a ${component})`];
    }
    return this.differences(ex, re, { $ref: `#/components/schemas/${component}` }, `${path}<json>`);
  }

  private arrayDifferences(ex: unknown[], re: unknown[], s: Schema, path: string): string[] {
    const items: Schema = s.items ?? {};
    if (this.isEnumLike(items)) {
      const a = [...new Set(ex.map((x) => JSON.stringify(x)))].sort();
      const b = [...new Set(re.map((x) => JSON.stringify(x)))].sort();
      return deepEqual(a, b) ? [] : [`${path}: members [${a.join(', ')}] in the example, [${b.join(', ')}] in the answer`];
    }
    if ((ex.length === 0) !== (re.length === 0)) {
      return [`${path}: ${ex.length} element(s) in the example, ${re.length} in the answer`];
    }
    const out: string[] = [];
    ex.forEach((item, i) => {
      let best: string[] | undefined;
      for (const candidate of re) {
        const d = this.differences(item, candidate, items, `${path}[${i}]`);
        if (d.length === 0) return;
        if (!best || d.length < best.length) best = d;
      }
      out.push(`${path}[${i}]: no element of the answer has its shape; the closest differs in:`, ...(best ?? []).map((l) => `  ${l}`));
    });
    return out;
  }
}
