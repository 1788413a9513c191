/** Writes schemas/<Kind>.json from the zod model (npm run schemas:json). A test keeps them current. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { meshJsonSchema, SCHEMA_KINDS } from '../lib/model/jsonSchemas';

const dir = path.join(import.meta.dirname, '..', 'schemas');
mkdirSync(dir, { recursive: true });
for (const kind of SCHEMA_KINDS) {
  writeFileSync(path.join(dir, `${kind}.json`), JSON.stringify(meshJsonSchema(kind), null, 2) + '\n');
}
console.log(`wrote ${SCHEMA_KINDS.length} schemas to ${dir}`);
