'use client';

import Editor, { type OnMount } from '@monaco-editor/react';
import { useEffect, useRef, useState } from 'react';
import type { FileMarker } from '@/lib/console/compileDraft';
import type { QuickFix } from '@/lib/console/quickFixes';
import type { Diagnostic } from '@/lib/model/diagnostic';
import { monaco } from './monaco-setup';

type CodeEditor = Parameters<OnMount>[0];

export interface YamlEditorProps {
  file: string;
  text: string;
  markers: FileMarker[];
  theme: 'dark' | 'light';
  reveal: { file: string; line: number; seq: number } | undefined;
  onChange(text: string): void;
  onUndo(): void;
  onRedo(): void;
  /** Quick fixes of a marker's diagnostic, offered as Monaco code actions (the light bulb, Ctrl+.). */
  fixesFor?(d: Diagnostic): QuickFix[];
  onFix?(fix: QuickFix): void;
}

const SEVERITY = {
  error: monaco.MarkerSeverity.Error,
  warning: monaco.MarkerSeverity.Warning,
  info: monaco.MarkerSeverity.Info,
} as const;

/** Monaco on one draft file: edits become setFileText commands, diagnostics become markers. */
export default function YamlEditor({
  file,
  text,
  markers,
  theme,
  reveal,
  onChange,
  onUndo,
  onRedo,
  fixesFor,
  onFix,
}: YamlEditorProps) {
  const [editor, setEditor] = useState<CodeEditor | undefined>();
  const handlers = useRef({ onUndo, onRedo, markers, fixesFor, onFix });
  useEffect(() => {
    handlers.current = { onUndo, onRedo, markers, fixesFor, onFix };
  }, [onUndo, onRedo, markers, fixesFor, onFix]);

  // The engine's markers get their quick fixes as code actions. Registered per editor and
  // filtered by model: Monaco's providers are global per language.
  useEffect(() => {
    if (!editor) return;
    const commandId = `meshdeck.quickFix.${editor.getId()}`;
    const command = monaco.editor.registerCommand(commandId, (_accessor, fix: QuickFix) =>
      handlers.current.onFix?.(fix),
    );
    const provider = monaco.languages.registerCodeActionProvider(
      'yaml',
      {
        provideCodeActions(model, range) {
          const { fixesFor: fixes, markers: ours } = handlers.current;
          const actions: monaco.languages.CodeAction[] = [];
          if (model !== editor.getModel() || !fixes) return { actions, dispose() {} };
          // Every marker on the cursor's lines, not only those under it: Ctrl+. at the start of
          // an indented line (where "line N" puts the cursor) must find the line's problems.
          const lines = model.getLineCount();
          const shown = monaco.editor.getModelMarkers({ resource: model.uri, owner: 'meshdeck' });
          for (const m of ours) {
            const line = Math.min(Math.max(1, m.line), lines);
            if (line < range.startLineNumber || line > range.endLineNumber) continue;
            const mk = shown.find((x) => x.startLineNumber === line && x.message === m.message);
            for (const fix of fixes(m.diagnostic)) {
              // Several problems of one object may offer the same fix (its seed-dialect warnings).
              if (actions.some((a) => a.title === fix.title)) continue;
              actions.push({
                title: fix.title,
                kind: 'quickfix',
                diagnostics: mk ? [mk] : undefined,
                isPreferred: actions.length === 0,
                command: { id: commandId, title: fix.title, arguments: [fix] },
              });
            }
          }
          return { actions, dispose() {} };
        },
      },
      { providedCodeActionKinds: ['quickfix'] },
    );
    return () => {
      command.dispose();
      provider.dispose();
    };
  }, [editor]);

  const onMount: OnMount = (ed) => {
    // One undo history for graph, form and YAML edits: Monaco's own would skip the others.
    ed.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.KeyZ, () => handlers.current.onUndo());
    ed.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyMod.Shift | monaco.KeyCode.KeyZ, () =>
      handlers.current.onRedo(),
    );
    ed.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.KeyY, () => handlers.current.onRedo());
    setEditor(ed);
  };

  useEffect(() => {
    const model = editor?.getModel();
    if (!model) return;
    const lines = model.getLineCount();
    const next = markers.map((m) => {
      const line = Math.min(Math.max(1, m.line), lines);
      return {
        severity: SEVERITY[m.severity],
        message: m.message,
        source: 'meshdeck',
        startLineNumber: line,
        startColumn: m.col ?? model.getLineFirstNonWhitespaceColumn(line) ?? 1,
        endLineNumber: line,
        endColumn: model.getLineMaxColumn(line),
      };
    });
    // Each compilation brings a new array; setting the same markers again would make Monaco
    // re-ask for code actions and close an open quick-fix menu (logging "Canceled").
    const current = monaco.editor.getModelMarkers({ resource: model.uri, owner: 'meshdeck' });
    const same =
      current.length === next.length &&
      current.every((c, i) => {
        const n = next[i]!;
        return (
          c.message === n.message &&
          c.severity === n.severity &&
          c.startLineNumber === n.startLineNumber &&
          c.startColumn === n.startColumn &&
          c.endColumn === n.endColumn
        );
      });
    if (!same) monaco.editor.setModelMarkers(model, 'meshdeck', next);
  }, [editor, markers, text, file]);

  useEffect(() => {
    if (!editor || !reveal || reveal.file !== file) return;
    editor.revealLineInCenter(reveal.line);
    // At the line's first character: where its marker starts, so Ctrl+. finds its quick fixes.
    const column = editor.getModel()?.getLineFirstNonWhitespaceColumn(reveal.line) || 1;
    editor.setPosition({ lineNumber: reveal.line, column });
    // The model of a newly opened file appears a moment later; the seq makes each request count once.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [editor, reveal?.seq, file]);

  return (
    <Editor
      path={`file:///draft/${file}`}
      defaultLanguage="yaml"
      value={text}
      theme={theme === 'dark' ? 'vs-dark' : 'vs'}
      onMount={onMount}
      onChange={(v) => {
        if (v !== undefined && v !== text) onChange(v);
      }}
      loading={<div className="editor-loading">Loading the YAML editor…</div>}
      options={{
        editContext: false,
        automaticLayout: true,
        minimap: { enabled: false },
        fontSize: 13,
        scrollBeyondLastLine: false,
        tabSize: 2,
        renderValidationDecorations: 'on',
        ariaLabel: `YAML of ${file}`,
      }}
    />
  );
}
