// custom-elements.json from the classes' JSDoc (`@summary @slot @csspart @cssprop @fires`) and their
// static `properties`, by @custom-elements-manifest/analyzer (`npm run manifest` runs it through
// scripts/manifest.mjs, which also writes the framework attribute types and the README reference).
//
// Two plugins of our own:
// - tag names: the elements register through `NotifBell.define('notif-bell')` (guarded registration),
//   which the analyzer does not read as a definition; this plugin does.
// - public API only: private and protected members, internal state and non-element declarations
//   stay out of the manifest (it is what editors and docs show to users).

import { readFileSync } from 'node:fs';

/** Reads `Class.define('tag-name')` calls. */
function defineCalls() {
  const found = []; // { tag, className, modulePath }
  return {
    name: 'notif-define-calls',
    analyzePhase({ ts, node, moduleDoc }) {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'define' &&
        ts.isIdentifier(node.expression.expression) &&
        node.arguments.length >= 1 &&
        ts.isStringLiteral(node.arguments[0]) &&
        node.arguments[0].text.includes('-')
      ) {
        found.push({ tag: node.arguments[0].text, className: node.expression.expression.text, modulePath: moduleDoc.path });
      }
    },
    packageLinkPhase({ customElementsManifest }) {
      const seen = new Set();
      for (const { tag, className, modulePath } of found) {
        const owner = customElementsManifest.modules.find((m) => m.declarations?.some((d) => d.kind === 'class' && d.name === className));
        const declaration = owner?.declarations.find((d) => d.name === className);
        if (!declaration) continue;
        // The registration file (`<tag>.ts`) defines the tag; the component file may define a tag
        // it depends on (notif-bell defines notif-feed): record each tag once, at its own file.
        const own = modulePath.endsWith(`/${tag}.ts`);
        if (seen.has(tag) && !own) continue;
        declaration.tagName = tag;
        declaration.customElement = true;
        const module = customElementsManifest.modules.find((m) => m.path === modulePath);
        if (!module || !own) continue;
        seen.add(tag);
        module.exports = (module.exports ?? []).filter((e) => !(e.kind === 'custom-element-definition' && e.name === tag));
        module.exports.push({ kind: 'custom-element-definition', name: tag, declaration: { name: className, module: owner.path } });
      }
    },
  };
}

/** Types each `@fires` event from src/events.ts (GlobalEventHandlersEventMap), which JSDoc leaves untyped. */
function eventTypes() {
  return {
    name: 'notif-event-types',
    packageLinkPhase({ customElementsManifest }) {
      const source = readFileSync(new URL('./src/events.ts', import.meta.url), 'utf8');
      const types = new Map([...source.matchAll(/'(notif-[a-z-]+)':\s*(CustomEvent<\w+>)/g)].map((m) => [m[1], m[2]]));
      for (const module of customElementsManifest.modules) {
        for (const d of module.declarations ?? []) {
          for (const event of d.events ?? []) {
            if (!event.type?.text && types.has(event.name)) event.type = { text: types.get(event.name) };
          }
        }
      }
    },
  };
}

/** Keeps what users can use: public members, attributes of public properties, element classes. */
function publicOnly() {
  const hidden = (m) => m.privacy === 'private' || m.privacy === 'protected' || m.name?.startsWith('_') || m.name?.startsWith('#');
  return {
    name: 'notif-public-only',
    packageLinkPhase({ customElementsManifest }) {
      for (const module of customElementsManifest.modules) {
        module.declarations = (module.declarations ?? []).filter((d) => d.kind === 'class');
        for (const d of module.declarations) {
          const removed = new Set((d.members ?? []).filter(hidden).map((m) => m.name));
          d.members = (d.members ?? []).filter((m) => !hidden(m));
          if (d.attributes) d.attributes = d.attributes.filter((a) => !a.fieldName || !removed.has(a.fieldName));
          for (const key of ['members', 'attributes', 'events', 'slots', 'cssParts', 'cssProperties']) {
            if (Array.isArray(d[key]) && d[key].length === 0) delete d[key];
          }
        }
        // Keep the tags this package defines (not `customElements.define(tag, ctor)` inside define()).
        module.exports = (module.exports ?? []).filter((e) =>
          e.kind === 'custom-element-definition' ? e.name.startsWith('notif-') : module.declarations.some((d) => d.name === e.declaration?.name),
        );
      }
      // In path order: the analyzer reads the files concurrently, and its modules came out in another
      // order now and then (about 1 run in 20), which made `npm run manifest -- --check` fail.
      customElementsManifest.modules = customElementsManifest.modules
        .filter((m) => m.declarations.length || m.exports.length)
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    },
  };
}

export default {
  globs: ['src/components/**/*.ts', 'src/internal/base-element.ts', 'src/internal/inbox-element.ts'],
  exclude: ['src/components/**/*.styles.ts'],
  outdir: '.',
  litelement: true,
  packagejson: false, // package.json names ./custom-elements.json itself
  plugins: [defineCalls(), eventTypes(), publicOnly()],
};
