/**
 * One value this process shares between `meshdeck serve`, which sets it, and the route handlers that
 * read it. Next.js bundles route handlers apart from the server, so a module variable would be two
 * variables; a registered symbol on globalThis (`meshdeck.<name>`) is one.
 */
export function processSlot<T>(name: string): { get(): T | undefined; set(value: T | undefined): void } {
  const key = Symbol.for(`meshdeck.${name}`);
  const holder = globalThis as unknown as Record<symbol, T | undefined>;
  return {
    get: () => holder[key],
    set: (value) => {
      holder[key] = value;
    },
  };
}
