'use client';
/**
 * Monaco with YAML and the mesh's JSON Schemas, bundled locally so the console works offline
 * (frontend-stack notes: slim entry, local workers, no CDN, the createWebWorker shim for monaco-yaml).
 * Imported only by the client-only YAML editor.
 */
import { loader } from '@monaco-editor/react';
import * as monaco from 'monaco-editor/editor';
import 'monaco-editor/features/register.all';
import 'monaco-editor/languages/definitions/yaml/register';
import { configureMonacoYaml, type JSONSchema } from 'monaco-yaml';
import { meshJsonSchema, SCHEMA_KINDS } from '@/lib/model/jsonSchemas';

window.MonacoEnvironment = {
  getWorker: (_id: string, label: string) =>
    label === 'yaml'
      ? new Worker(new URL('./yaml.worker.ts', import.meta.url), { type: 'module' })
      : new Worker(new URL('./editor.worker.ts', import.meta.url), { type: 'module' }),
};

// Without this, @monaco-editor/react fetches Monaco from a CDN.
loader.config({ monaco });

// monaco-yaml 5.5.1 still calls the createWebWorker({moduleId, label, createData}) form that
// monaco-editor 0.55 removed; this shim restores it (frontend-stack pitfall 4).
const native = monaco.editor.createWebWorker;
type LegacyOptions = { worker?: Worker; label?: string; createData?: unknown };
monaco.editor.createWebWorker = ((opts: LegacyOptions) => {
  if (opts.worker !== undefined) return native(opts as Parameters<typeof native>[0]);
  const worker = window.MonacoEnvironment!.getWorker!('workerMain.js', opts.label ?? '') as Worker;
  worker.postMessage('ignore'); // the first message initialises the worker
  worker.postMessage(opts.createData); // the second starts the language server
  return native({ ...opts, worker } as Parameters<typeof native>[0]);
}) as typeof native;

/**
 * One schema for every document of every file: each kind's generated schema applies to documents of
 * that kind and apiVersion (seed-dialect documents are left to the engine, which converts them).
 */
function meshDocumentSchema(): JSONSchema {
  return {
    allOf: SCHEMA_KINDS.map((kind) => {
      const { $schema: _drop, ...schema } = meshJsonSchema(kind) as Record<string, unknown> & {
        properties?: { apiVersion?: { const?: string } };
      };
      void _drop;
      const apiVersion = schema.properties?.apiVersion?.const;
      return {
        if: {
          properties: { kind: { const: kind }, ...(apiVersion ? { apiVersion: { const: apiVersion } } : {}) },
          required: apiVersion ? ['kind', 'apiVersion'] : ['kind'],
        },
        then: schema,
      } as JSONSchema;
    }),
  };
}

configureMonacoYaml(monaco, {
  enableSchemaRequest: false,
  hover: true,
  completion: true,
  validate: true,
  schemas: [
    {
      uri: 'inmemory://meshdeck/schemas/mesh.json',
      fileMatch: ['**/*.yaml', '**/*.yml'],
      schema: meshDocumentSchema(),
    },
  ],
});

export { monaco };
