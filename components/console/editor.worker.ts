// Monaco's editor worker, bundled locally (no CDN).
import 'monaco-editor/editor/editor.worker';
