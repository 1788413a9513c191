'use client';

import Editor, { type OnMount } from '@monaco-editor/react';
import { useEffect, useRef, useState } from 'react';
import type { FileMarker } from '@/lib/console/compileDraft';
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
}: YamlEditorProps) {
  const [editor, setEditor] = useState<CodeEditor | undefined>();
  const handlers = useRef({ onUndo, onRedo });
  useEffect(() => {
    handlers.current = { onUndo, onRedo };
  }, [onUndo, onRedo]);

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
    monaco.editor.setModelMarkers(
      model,
      'meshdeck',
      markers.map((m) => {
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
      }),
    );
  }, [editor, markers, text, file]);

  useEffect(() => {
    if (!editor || !reveal || reveal.file !== file) return;
    editor.revealLineInCenter(reveal.line);
    editor.setPosition({ lineNumber: reveal.line, column: 1 });
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
