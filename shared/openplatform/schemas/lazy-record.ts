/**
 * A record of zod schemas built on first use. The request and answer schemas of all 356 operations
 * are a few hundred zod schemas; built at module load they cost every process that imports them
 * (each Lambda function's cold start, the CLI) tens of milliseconds, though most use a handful or
 * none. The record behaves as the object `build` returns (indexing, `in`, `Object.keys`), which is
 * built, once, when anything first reads it.
 */
export function lazyRecord<T extends object>(build: () => T): T {
  let built: T | undefined;
  const target = () => {
    built ??= build();
    return built;
  };
  return new Proxy({} as T, {
    get: (_empty, key) => Reflect.get(target(), key),
    has: (_empty, key) => Reflect.has(target(), key),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_empty, key) => Reflect.getOwnPropertyDescriptor(target(), key),
  });
}
