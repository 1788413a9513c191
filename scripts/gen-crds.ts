/** Writes deploy/crds/<plural>.msm.l7mp.io.yaml from the zod model (lib/kube/crds.ts). A test keeps them current. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crdFileName, MESH_CRD_KINDS, meshCrdYaml } from '../lib/kube/crds';

const dir = path.join(import.meta.dirname, '..', 'deploy', 'crds');
mkdirSync(dir, { recursive: true });
for (const kind of MESH_CRD_KINDS) writeFileSync(path.join(dir, crdFileName(kind)), meshCrdYaml(kind));
console.log(`wrote ${MESH_CRD_KINDS.length} CRDs to ${dir}`);
