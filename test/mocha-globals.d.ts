// The mocha globals that @web/test-runner-mocha provides to browser tests (a subset, typed here so
// the browser tests typecheck without @types/mocha).
type Done = (err?: unknown) => void;
type TestFn = (this: MochaContext, done: Done) => void | Promise<unknown>;
interface MochaContext {
  timeout(ms: number): void;
  skip(): never;
}
interface SuiteFn {
  (title: string, fn: (this: MochaContext) => void): void;
  only(title: string, fn: (this: MochaContext) => void): void;
  skip(title: string, fn: (this: MochaContext) => void): void;
}
interface ItFn {
  (title: string, fn?: TestFn): void;
  only(title: string, fn?: TestFn): void;
  skip(title: string, fn?: TestFn): void;
}
declare const describe: SuiteFn;
declare const it: ItFn;
declare function before(fn: TestFn): void;
declare function after(fn: TestFn): void;
declare function beforeEach(fn: TestFn): void;
declare function afterEach(fn: TestFn): void;
