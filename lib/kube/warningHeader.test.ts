import { describe, expect, it } from 'vitest';
import { warningTexts } from './warningHeader';

describe('warningTexts', () => {
  it('takes the text out of the API server\'s `299 - "..."`, quotes unescaped', () => {
    expect(warningTexts(['299 - "unknown field \\"spec.x\\""'])).toEqual(['unknown field "spec.x"']);
  });

  it('splits values joined with ", " (commas inside the text stay), and skips a date', () => {
    expect(
      warningTexts([
        '299 - "after the delete, error: Route default/r2 spec.destination: \\"t1\\" is gone", 299 - "b" "Sat, 28 Nov 2026 08:00:00 GMT",299 kube "c"',
        '299 - "d"',
      ]),
    ).toEqual(['after the delete, error: Route default/r2 spec.destination: "t1" is gone', 'b', 'c', 'd']);
  });

  it('keeps a value that is not in the RFC form, and drops empty ones', () => {
    expect(warningTexts(['deprecated: use v2', '', '299 - "unterminated'])).toEqual([
      'deprecated: use v2',
      'unterminated',
    ]);
  });
});
