import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import madge from 'madge';

// The service's modules depend one way (DESIGN.md, "The house"): main -> app -> plugins and
// routes -> domain (inbox/, workflows/, engine/) -> db, with small modules at the top of
// server/src that import nothing of the service (errors, json, ids...), and the proxy apart. No
// import circle, not even through a type. `npx madge --circular --extensions ts server/src` shows
// the circles by hand.

const SOURCE = resolve(import.meta.dirname, '../../server/src');

/** The files at the top of server/src that are not leaves: the entry points and the command line's own. */
const ENTRIES = ['main.ts', 'index.ts', 'proxy.ts'];
const COMMAND_LINE = ['config.ts', 'seed.ts', 'demo.ts'];
const APP = 'app.ts';

/** Where a module sits: its folder, or for a file at the top of server/src, what kind it is. */
function areaOf(module: string): string {
  const slash = module.indexOf('/');
  if (slash >= 0) return module.slice(0, slash);
  if (ENTRIES.includes(module)) return 'entry';
  if (COMMAND_LINE.includes(module)) return module;
  if (module === APP) return 'app';
  return 'leaf';
}

describe('server/src imports', () => {
  let graph: Record<string, string[]>;
  let circles: string[][];
  before(async () => {
    const result = await madge(SOURCE, { fileExtensions: ['ts'], detectiveOptions: { ts: { skipTypeImports: false } } });
    graph = result.obj();
    circles = result.circular();
  });

  /** The imports of the modules of `area` that land outside `allowed` areas, as "from -> to". */
  const importsOutside = (area: string, allowed: string[]) =>
    Object.entries(graph)
      .filter(([module]) => areaOf(module) === area)
      .flatMap(([module, imports]) => imports.filter((target) => !allowed.includes(areaOf(target))).map((target) => `${module} -> ${target}`));

  it('reads every module (and finds the ones this test names)', () => {
    assert.ok(Object.keys(graph).length > 50, `${Object.keys(graph).length} modules`);
    for (const module of ['main.ts', 'app.ts', 'config.ts', 'db/index.ts', 'engine/trigger.ts', 'routes/feed.ts', 'plugins/auth.ts', 'inbox/feed.ts', 'proxy/index.ts']) {
      assert.ok(graph[module], `${module} is in the graph`);
    }
  });

  it('has no import circle, type-only imports included', () => {
    assert.deepEqual(circles, [], circles.map((circle) => circle.join(' -> ')).join('\n'));
  });

  it('nothing imports app.ts but the entry points', () => {
    const importers = Object.entries(graph)
      .filter(([, imports]) => imports.includes(APP))
      .map(([module]) => module);
    assert.deepEqual(importers.filter((module) => areaOf(module) !== 'entry'), []);
  });

  it('only main.ts reads the configuration', () => {
    const importers = Object.entries(graph)
      .filter(([, imports]) => imports.includes('config.ts'))
      .map(([module]) => module);
    assert.deepEqual(importers, ['main.ts']);
  });

  it('db/ (storage) imports nothing of the engine, the domain, the routes, the plugins or the app', () => {
    assert.deepEqual(importsOutside('db', ['db', 'leaf']), []);
  });

  it('engine/ knows no app: it imports nothing of the routes, the plugins, the app or the inbox and workflows domain', () => {
    assert.deepEqual(importsOutside('engine', ['engine', 'db', 'leaf']), []);
  });

  it('inbox/ and workflows/ (the domain) import nothing of the routes, the plugins or the app', () => {
    const domain = ['inbox', 'workflows', 'engine', 'db', 'leaf'];
    assert.deepEqual([...importsOutside('inbox', domain), ...importsOutside('workflows', domain)], []);
  });

  it('a route never imports another route, a plugin or the app: only the domain, db/ and the leaves', () => {
    assert.deepEqual(importsOutside('routes', ['inbox', 'workflows', 'engine', 'db', 'leaf']), []);
  });

  it('plugins/ import no route and not the app', () => {
    assert.deepEqual(importsOutside('plugins', ['plugins', 'inbox', 'workflows', 'engine', 'db', 'leaf']), []);
  });

  it('the leaves at the top of server/src import nothing of the service but one another', () => {
    assert.deepEqual(importsOutside('leaf', ['leaf']), []);
  });

  it('the proxy (the package entry notif-inbox-server/proxy) imports only itself and the leaves: no database, no Fastify app', () => {
    assert.deepEqual(importsOutside('proxy', ['proxy', 'leaf']), []);
  });
});
