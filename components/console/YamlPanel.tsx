'use client';

import dynamic from 'next/dynamic';
import { useState } from 'react';
import type { DraftCompilation } from '@/lib/console/compileDraft';
import type { CommandResult, DraftCommand } from '@/lib/console/draftCommands';
import type { QuickFix } from '@/lib/console/quickFixes';
import type { Diagnostic } from '@/lib/model/diagnostic';
import type { DraftDoc } from '@/lib/console/draftDoc';

// Monaco touches window at import time: client only (frontend-stack pitfall 6).
const YamlEditor = dynamic(() => import('./YamlEditor'), {
  ssr: false,
  loading: () => <div className="editor-loading">Loading the YAML editor…</div>,
});

export interface YamlPanelProps {
  draft: DraftDoc;
  compilation: DraftCompilation;
  file: string | undefined;
  theme: 'dark' | 'light';
  reveal: { file: string; line: number; seq: number } | undefined;
  onFile(file: string): void;
  onReveal(file: string, line: number): void;
  run(cmd: DraftCommand, opts?: { group?: string }): CommandResult;
  onUndo(): void;
  onRedo(): void;
  fixesFor?(d: Diagnostic): QuickFix[];
  onFix?(fix: QuickFix): void;
}

/** The draft's files in Monaco, one at a time, with the engine's markers and a list of them. */
export function YamlPanel({
  draft,
  compilation,
  file,
  theme,
  reveal,
  onFile,
  onReveal,
  run,
  onUndo,
  onRedo,
  fixesFor,
  onFix,
}: YamlPanelProps) {
  const files = Object.keys(draft.files).sort();
  const current = file && file in draft.files ? file : files[0];
  const [newName, setNewName] = useState('');
  const markers = current ? (compilation.markers[current] ?? []) : [];
  if (!current)
    return (
      <div className="empty-state" data-testid="yaml-empty">
        <p>The draft has no files.</p>
        <NewFile name={newName} setName={setNewName} files={draft.files} run={run} onFile={onFile} />
      </div>
    );
  return (
    <div className="yaml-panel" data-testid="yaml-panel">
      <div className="yaml-panel__bar">
        <label>
          File{' '}
          <select value={current} onChange={(e) => onFile(e.target.value)} data-testid="yaml-file">
            {files.map((f) => {
              const n = compilation.markers[f]?.filter((m) => m.severity === 'error').length ?? 0;
              return (
                <option key={f} value={f}>
                  {f}
                  {n ? ` (${n} error${n > 1 ? 's' : ''})` : ''}
                </option>
              );
            })}
          </select>
        </label>
        <NewFile name={newName} setName={setNewName} files={draft.files} run={run} onFile={onFile} />
      </div>
      <div className="yaml-panel__editor" data-testid="yaml-editor">
        <YamlEditor
          file={current}
          text={draft.files[current] ?? ''}
          markers={markers}
          theme={theme}
          reveal={reveal}
          onChange={(text) => run({ type: 'setFileText', path: current, text }, { group: `yaml:${current}` })}
          onUndo={onUndo}
          onRedo={onRedo}
          fixesFor={fixesFor}
          onFix={onFix}
        />
      </div>
      <ul className="yaml-panel__markers" aria-label={`Problems in ${current}`} data-testid="yaml-markers">
        {markers.map((m, i) => (
          <li key={i} className={`marker marker--${m.severity}`} data-line={m.line}>
            <button type="button" className="link" onClick={() => onReveal(current, m.line)}>
              line {m.line}
            </button>{' '}
            {m.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

function NewFile({
  name,
  setName,
  files,
  run,
  onFile,
}: {
  name: string;
  setName(n: string): void;
  files: Record<string, string>;
  run: YamlPanelProps['run'];
  onFile(f: string): void;
}) {
  const [error, setError] = useState<string | undefined>();
  const add = () => {
    const path = /\.(ya?ml|json)$/.test(name) ? name : `${name}.yaml`;
    if (path in files) {
      setError(`${path} already exists`);
      return;
    }
    const r = run({ type: 'setFileText', path, text: '' });
    if (!r.ok) setError(r.error);
    else {
      setError(undefined);
      setName('');
      onFile(path);
    }
  };
  return (
    <span className="new-file">
      <input
        type="text"
        placeholder="new-file.yaml"
        aria-label="New file name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        onKeyDown={(e) => e.key === 'Enter' && name && add()}
      />
      <button type="button" disabled={!name} onClick={add}>
        New file
      </button>
      {error ? (
        <span className="field-error field-error--error" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  );
}
