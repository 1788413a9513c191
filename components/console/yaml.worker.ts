// monaco-yaml's language server, bundled locally (no CDN).
import 'monaco-yaml/yaml.worker.js';
