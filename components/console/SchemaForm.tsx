'use client';

import { useDeferredValue, useEffect, useId, useMemo, useRef, useState } from 'react';
import { mayHaveQuickFix, type QuickFix } from '@/lib/console/quickFixes';
import type { Diagnostic } from '@/lib/model/diagnostic';
import { formatFieldPath } from '@/lib/model/fieldPath';
import type { FieldPath } from '@/lib/console/fieldPath';
import {
  defaultFor,
  type JsonSchema,
  parseNumberInput,
  pickVariant,
  variantLabel,
  variants,
  widgetFor,
} from '@/lib/console/schemaForm';

export interface SchemaFormProps {
  schema: JsonSchema;
  value: Record<string, unknown>;
  /** Diagnostics by the field path that shows them (see diagnosticsByField). */
  diagnostics: Map<string, Diagnostic[]>;
  /** Sets a field; `undefined` removes it. */
  onChange(path: FieldPath, value: unknown): void;
  /** metadata.name is renamed (references follow) instead of set. */
  onRename(name: string): void;
  /** A field to scroll to and focus (a diagnostic's anchor path). */
  focusPath?: string;
  focusSeq?: number;
  /** Quick fixes offered beside a field's problem (lib/console/quickFixes.ts). */
  fixesFor?(d: Diagnostic): QuickFix[];
  onFix?(fix: QuickFix): void;
}

interface FieldCtx {
  diagnostics: Map<string, Diagnostic[]>;
  onChange(path: FieldPath, value: unknown): void;
  onRename(name: string): void;
  fixesFor?(d: Diagnostic): QuickFix[];
  onFix?(fix: QuickFix): void;
}

/** A form for any object, generated from its JSON Schema: no form is written per kind. */
export function SchemaForm({
  schema,
  value,
  diagnostics,
  onChange,
  onRename,
  focusPath,
  focusSeq,
  fixesFor,
  onFix,
}: SchemaFormProps) {
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focusPath === undefined || !root.current) return;
    const el = root.current.querySelector<HTMLElement>(`[data-field-path="${CSS.escape(focusPath)}"]`);
    if (!el) return;
    el.scrollIntoView({ block: 'center' });
    // The value's own input, not a union's variant switch.
    const input =
      el.querySelector<HTMLElement>('input[type="text"], textarea') ??
      el.querySelector<HTMLElement>('input, select');
    input?.focus({ preventScroll: true });
  }, [focusPath, focusSeq]);
  const ctx: FieldCtx = { diagnostics, onChange, onRename, fixesFor, onFix };
  return (
    <div className="schema-form" ref={root} data-testid="schema-form">
      <FieldErrors list={diagnostics.get('')} ctx={ctx} />
      <ObjectFields schema={schema} value={value} path={[]} ctx={ctx} />
    </div>
  );
}

function FieldErrors({ list, ctx }: { list: Diagnostic[] | undefined; ctx: FieldCtx }) {
  if (!list || list.length === 0) return null;
  return (
    <ul className="field-errors" data-testid="field-errors">
      {list.map((d, i) => (
        <li key={i} className={`field-error field-error--${d.severity}`}>
          {d.message}
          {ctx.fixesFor && ctx.onFix && mayHaveQuickFix(d) ? (
            <FieldQuickFixes d={d} fixesFor={ctx.fixesFor} onFix={ctx.onFix} />
          ) : null}
        </li>
      ))}
    </ul>
  );
}

/**
 * A problem's quick fixes, worked out in a render after the one that shows the problem: a dangling
 * reference's suggestions compare it with every name of the draft (a few ms at 500 objects), and the
 * message and the canvas's marker should not wait for them (issue 5, P8).
 */
function FieldQuickFixes({
  d,
  fixesFor,
  onFix,
}: {
  d: Diagnostic;
  fixesFor(d: Diagnostic): QuickFix[];
  onFix(fix: QuickFix): void;
}) {
  const asked = useMemo(() => ({ d, fixesFor }), [d, fixesFor]);
  const deferred = useDeferredValue(asked, null);
  const fixes = useMemo(() => (deferred ? deferred.fixesFor(deferred.d) : []), [deferred]);
  if (fixes.length === 0) return null;
  return (
    <span className="field-error__fixes" role="group" aria-label="Quick fixes">
      {fixes.map((f) => (
        <button key={f.title} type="button" data-testid="field-quick-fix" onClick={() => onFix(f)}>
          {f.title}
        </button>
      ))}
    </span>
  );
}

function ObjectFields({
  schema,
  value,
  path,
  ctx,
}: {
  schema: JsonSchema;
  value: Record<string, unknown>;
  path: (string | number)[];
  ctx: FieldCtx;
}) {
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  // Present and required fields are shown; the rest can be added (a Target has 14 protocol keys).
  const shown = Object.keys(props).filter((k) => value[k] !== undefined || required.has(k));
  const addable = Object.keys(props).filter((k) => !shown.includes(k));
  const extra = Object.keys(value).filter((k) => !(k in props));
  return (
    <>
      {shown.map((k) => (
        <Field
          key={k}
          name={k}
          schema={props[k]!}
          value={value[k]}
          path={[...path, k]}
          required={required.has(k)}
          ctx={ctx}
        />
      ))}
      {extra.map((k) => (
        <Field key={k} name={k} schema={{}} value={value[k]} path={[...path, k]} required={false} ctx={ctx} />
      ))}
      {addable.length > 0 ? (
        <AddField
          options={addable}
          label={`Add a field to ${formatFieldPath(path) || 'the object'}`}
          onAdd={(k) => ctx.onChange([...path, k], defaultFor(props[k]!))}
        />
      ) : null}
    </>
  );
}

function AddField({ options, label, onAdd }: { options: string[]; label: string; onAdd(k: string): void }) {
  return (
    <select
      className="add-field"
      aria-label={label}
      value=""
      onChange={(e) => {
        if (e.target.value) onAdd(e.target.value);
      }}
    >
      <option value="">+ add field…</option>
      {options.map((o) => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
    </select>
  );
}

function Field({
  name,
  schema,
  value,
  path,
  required,
  ctx,
}: {
  name: string;
  schema: JsonSchema;
  value: unknown;
  path: (string | number)[];
  required: boolean;
  ctx: FieldCtx;
}) {
  const id = useId();
  const p = formatFieldPath(path);
  const widget = widgetFor(schema);
  const errors = ctx.diagnostics.get(p);
  const hasError = errors?.some((d) => d.severity === 'error');
  const remove =
    !required && value !== undefined ? (
      <button
        type="button"
        className="field__remove"
        aria-label={`Remove ${p}`}
        title={`Remove ${p}`}
        onClick={() => ctx.onChange(path, undefined)}
      >
        ×
      </button>
    ) : null;
  const label = (
    <label htmlFor={id} className="field__label" title={schema.description}>
      {name}
      {required ? <span aria-hidden="true"> *</span> : null}
    </label>
  );
  const set = (v: unknown) => ctx.onChange(path, v);
  let body: React.ReactNode;
  switch (widget) {
    case 'object':
    case 'record':
    case 'array':
      return (
        <fieldset className={`field field--group${hasError ? ' field--invalid' : ''}`} data-field-path={p}>
          <legend className="field__legend" title={schema.description}>
            {name}
            {remove}
          </legend>
          <FieldErrors list={errors} ctx={ctx} />
          {widget === 'object' ? (
            <ObjectFields schema={schema} value={asRecord(value)} path={path} ctx={ctx} />
          ) : widget === 'record' ? (
            <RecordFields schema={schema} value={asRecord(value)} path={path} ctx={ctx} />
          ) : (
            <ArrayFields schema={schema} value={Array.isArray(value) ? value : []} path={path} ctx={ctx} />
          )}
        </fieldset>
      );
    case 'union': {
      const list = variants(schema);
      const i = pickVariant(schema, value);
      return (
        <div className={`field field--union${hasError ? ' field--invalid' : ''}`} data-field-path={p}>
          <div className="field__row">
            <span className="field__label" title={schema.description}>
              {name}
            </span>
            {list.length > 1 ? (
              <select
                aria-label={`Kind of ${p}`}
                value={i}
                onChange={(e) => set(defaultFor(list[Number(e.target.value)]!))}
              >
                {list.map((v, k) => (
                  <option key={k} value={k}>
                    {variantLabel(v)}
                  </option>
                ))}
              </select>
            ) : null}
            {remove}
          </div>
          <Field
            name={variantLabel(list[i] ?? {})}
            schema={{ ...list[i], description: schema.description }}
            value={value}
            path={path}
            required
            ctx={ctx}
          />
        </div>
      );
    }
    case 'const':
      body = (
        <output id={id} className="field__const">
          {String(schema.const)}
        </output>
      );
      break;
    case 'enum':
      body = (
        <select
          id={id}
          value={value === undefined ? '' : String(value)}
          onChange={(e) => set(e.target.value || undefined)}
        >
          {required ? null : <option value="">(unset)</option>}
          {(schema.enum ?? []).map((o) => (
            <option key={String(o)} value={String(o)}>
              {String(o)}
            </option>
          ))}
        </select>
      );
      break;
    case 'boolean':
      body = (
        <input id={id} type="checkbox" checked={value === true} onChange={(e) => set(e.target.checked)} />
      );
      break;
    case 'string':
      body =
        p === 'metadata.name' ? (
          <CommitOnBlurInput id={id} value={typeof value === 'string' ? value : ''} onCommit={ctx.onRename} />
        ) : (
          <input
            id={id}
            type="text"
            value={typeof value === 'string' ? value : value === undefined ? '' : String(value)}
            spellCheck={false}
            onChange={(e) => set(e.target.value)}
          />
        );
      break;
    case 'number':
    case 'integer':
      body = <NumberInput id={id} schema={schema} value={value} onCommit={set} />;
      break;
    case 'json':
      body = <JsonInput id={id} value={value} onCommit={set} />;
      break;
  }
  return (
    <div className={`field${hasError ? ' field--invalid' : ''}`} data-field-path={p}>
      <div className="field__row">
        {label}
        {body}
        {remove}
      </div>
      <FieldErrors list={errors} ctx={ctx} />
    </div>
  );
}

function RecordFields({
  schema,
  value,
  path,
  ctx,
}: {
  schema: JsonSchema;
  value: Record<string, unknown>;
  path: (string | number)[];
  ctx: FieldCtx;
}) {
  const item = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : {};
  const [newKey, setNewKey] = useState('');
  const p = formatFieldPath(path);
  return (
    <>
      {Object.keys(value).map((k) => (
        <Field
          key={k}
          name={k}
          schema={item}
          value={value[k]}
          path={[...path, k]}
          required={false}
          ctx={ctx}
        />
      ))}
      <div className="field__row">
        <input
          type="text"
          aria-label={`New key in ${p}`}
          placeholder="new key"
          value={newKey}
          onChange={(e) => setNewKey(e.target.value)}
        />
        <button
          type="button"
          disabled={!newKey || newKey in value}
          onClick={() => {
            ctx.onChange([...path, newKey], defaultFor(item));
            setNewKey('');
          }}
        >
          Add
        </button>
      </div>
    </>
  );
}

function ArrayFields({
  schema,
  value,
  path,
  ctx,
}: {
  schema: JsonSchema;
  value: unknown[];
  path: (string | number)[];
  ctx: FieldCtx;
}) {
  const item = schema.items ?? {};
  const p = formatFieldPath(path);
  return (
    <>
      {value.map((v, i) => (
        <div key={i} className="array-item">
          <Field name={`[${i}]`} schema={item} value={v} path={[...path, i]} required ctx={ctx} />
          <button
            type="button"
            className="field__remove"
            aria-label={`Remove ${p}[${i}]`}
            onClick={() =>
              ctx.onChange(
                path,
                value.filter((_, j) => j !== i),
              )
            }
          >
            ×
          </button>
        </div>
      ))}
      <button
        type="button"
        className="add-item"
        onClick={() => ctx.onChange([...path, value.length], defaultFor(item))}
      >
        + add to {p.split('.').pop()}
      </button>
    </>
  );
}

/** A text field whose value is applied on Enter or blur (renames rewrite references, so not per key). */
function CommitOnBlurInput({
  id,
  value,
  onCommit,
}: {
  id: string;
  value: string;
  onCommit(v: string): void;
}) {
  const [text, setText] = useState(value);
  const [prev, setPrev] = useState(value);
  if (prev !== value) {
    setPrev(value);
    setText(value);
  }
  return (
    <input
      id={id}
      type="text"
      value={text}
      spellCheck={false}
      onChange={(e) => setText(e.target.value)}
      onBlur={() => text !== value && onCommit(text)}
      onKeyDown={(e) => {
        if (e.key === 'Enter' && text !== value) onCommit(text);
        if (e.key === 'Escape') setText(value);
      }}
    />
  );
}

/** A number field that keeps what was typed (and says why) until it is a number the schema accepts. */
function NumberInput({
  id,
  schema,
  value,
  onCommit,
}: {
  id: string;
  schema: JsonSchema;
  value: unknown;
  onCommit(v: number): void;
}) {
  const shown = value === undefined ? '' : String(value);
  const [text, setText] = useState(shown);
  const [prev, setPrev] = useState(shown);
  if (prev !== shown) {
    setPrev(shown);
    setText(shown);
  }
  const parsed = text === shown ? null : parseNumberInput(text, schema);
  return (
    <span className="field__number">
      <input
        id={id}
        type="text"
        inputMode="numeric"
        value={text}
        aria-invalid={parsed !== null && 'error' in parsed}
        onChange={(e) => {
          setText(e.target.value);
          const r = parseNumberInput(e.target.value, schema);
          if ('value' in r) onCommit(r.value);
        }}
      />
      {parsed && 'error' in parsed ? (
        <span className="field-error field-error--error" role="alert">
          {parsed.error} (not applied)
        </span>
      ) : null}
    </span>
  );
}

/** Free-form values (JSONPredicate matches, rewrite values) as JSON text, applied when valid. */
function JsonInput({ id, value, onCommit }: { id: string; value: unknown; onCommit(v: unknown): void }) {
  const shown = value === undefined ? '' : JSON.stringify(value);
  const [text, setText] = useState(shown);
  const [prev, setPrev] = useState(shown);
  const [error, setError] = useState<string | undefined>();
  if (prev !== shown) {
    setPrev(shown);
    setText(shown);
  }
  return (
    <span className="field__json">
      <textarea
        id={id}
        rows={Math.min(6, Math.max(1, Math.ceil(text.length / 40)))}
        value={text}
        spellCheck={false}
        onChange={(e) => setText(e.target.value)}
        onBlur={() => {
          if (text === shown) return;
          try {
            onCommit(JSON.parse(text));
            setError(undefined);
          } catch (e) {
            setError(`not JSON (${(e as Error).message}); not applied`);
          }
        }}
      />
      {error ? (
        <span className="field-error field-error--error" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  );
}

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
