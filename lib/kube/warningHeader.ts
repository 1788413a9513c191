/**
 * The texts of HTTP Warning headers as the Kubernetes API server sends them (`299 - "text"`, RFC 7234
 * §5.5: code, agent, quoted text, an optional quoted date), several to a header value when a proxy or
 * Node's http module joined them with ", ". The console shows what kubectl prints after `Warning:`: the
 * text alone. A value not in that form is kept whole, trimmed.
 */
export function warningTexts(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    let i = 0;
    const s = value;
    const skip = (re: RegExp) => {
      while (i < s.length && re.test(s[i]!)) i++;
    };
    for (;;) {
      skip(/[\s,]/);
      if (i >= s.length) break;
      const head = /^(\d{3})\s+(\S+)\s+"/.exec(s.slice(i));
      if (!head) {
        out.push(s.slice(i).trim());
        break;
      }
      i += head[0].length;
      const start = i;
      const text = quoted();
      if (text === undefined) {
        // An unterminated quote: keep what there is.
        out.push(s.slice(start).trim());
        break;
      }
      out.push(text);
      // An optional warn-date.
      const date = /^\s+"[^"]*"/.exec(s.slice(i));
      if (date) i += date[0].length;
    }
    function quoted(): string | undefined {
      let text = '';
      while (i < s.length) {
        const c = s[i++]!;
        if (c === '\\' && i < s.length) text += s[i++]!;
        else if (c === '"') return text;
        else text += c;
      }
      return undefined;
    }
  }
  return out.filter((t) => t.length > 0);
}
