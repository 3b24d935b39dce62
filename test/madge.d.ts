// The part of madge's API the import tests use (test/server/imports.test.ts, test/build/imports.test.ts;
// madge ships no types).
declare module 'madge' {
  interface MadgeConfig {
    fileExtensions?: string[];
    /** Keep imports of npm packages in the graph (so a test can see which packages a folder uses). */
    includeNpm?: boolean;
    /** Leave out modules that are imported only as types (false keeps them: a cycle of types is a cycle). */
    detectiveOptions?: { ts?: { skipTypeImports?: boolean; skipAsyncImports?: boolean } };
  }
  interface MadgeResult {
    /** Each module (relative to the base directory) and the modules it imports. */
    obj(): Record<string, string[]>;
    /** Every import cycle, each as the modules along it. */
    circular(): string[][];
    /** Imports that could not be resolved (packages not installed, for one). */
    warnings(): { skipped: string[] };
  }
  export default function madge(path: string, config?: MadgeConfig): Promise<MadgeResult>;
}
