// Build-time minification of Lit's tagged templates: the text of css`...` loses comments and the
// whitespace CSS does not need; html`...` and svg`...` lose indentation (runs of whitespace that hold
// a line break become one space, and go entirely between two tags or around attributes). Expressions
// (`${...}`) are left as they are; the templates mean what they meant before. Used by vite.config.ts
// (the builds) and bench/size.mjs.
import ts from 'typescript';

const TAGS = new Set(['css', 'html', 'svg']);

/** Minifies one static piece of a css`` template (between two expressions, or at either end). */
export function minifyCss(text) {
  // An attribute selector's value needs no quotes when it is an identifier ([theme='dark'] -> [theme=dark]).
  text = text.replace(/=(['"])([a-z_][\w-]*)\1\]/gi, '=$2]');
  // Comments go first, read left to right with the strings as CSS reads them: a quote inside a
  // comment ("the bell's icon") starts no string, and a comment inside a string is text.
  text = text.replace(/\/\*[\s\S]*?\*\/|('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")/g, (m, string) => string ?? '');
  // Keep quoted strings whole; work on the rest.
  const parts = text.split(/('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")/);
  return parts
    .map((part, i) => {
      if (i % 2 === 1) return part;
      return (
        part
          .replace(/\s+/g, ' ')
          // No space is needed around these (":" only after: ".a :hover" differs from ".a:hover").
          .replace(/ ?([{};,>]) ?/g, '$1')
          .replace(/: /g, ':')
          .replace(/;}/g, '}')
      );
    })
    .join('');
}

/** Minifies one static piece of an html``/svg`` template without changing what it renders. */
export function minifyMarkup(text) {
  return (
    text
      // <!-- --> comments are not kept by lit either, but they may mark expressions: keep them.
      .replace(/>\s*\n\s*</g, '><')
      .replace(/\s*\n\s*/g, ' ')
      // Inside a tag: no space before its end, and no quotes around a simple value (part=row) unless
      // a `/` follows (r=4/> would read as r="4/").
      .replace(/\s+(\/?>)/g, '$1')
      .replace(/(\s[\w-]+=)"([\w.-]+)"(?=[\s>])/g, '$1$2')
  );
}

/**
 * The source with its css``/html``/svg`` templates minified, or null when it has none. Works on
 * TypeScript or JavaScript source through the TypeScript parser, so nested templates are found too.
 */
export function minifyTemplates(code, fileName = 'file.ts') {
  if (!/\b(css|html|svg)`/.test(code)) return null;
  const source = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  /** [start, end, replacement] of each static piece, in source order. */
  const edits = [];
  const piece = (node, minify, openLen, closeLen) => {
    const start = node.getStart(source) + openLen;
    const end = node.getEnd() - closeLen;
    const raw = code.slice(start, end);
    const out = minify(raw);
    if (out !== raw) edits.push([start, end, out]);
  };
  const visit = (node) => {
    if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && TAGS.has(node.tag.text)) {
      const minify = node.tag.text === 'css' ? minifyCss : minifyMarkup;
      const t = node.template;
      if (ts.isNoSubstitutionTemplateLiteral(t)) piece(t, minify, 1, 1);
      else {
        piece(t.head, minify, 1, 2); // `...${
        for (const span of t.templateSpans) {
          const lit = span.literal;
          piece(lit, minify, 1, ts.isTemplateTail(lit) ? 1 : 2); // }...${ or }...`
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (!edits.length) return null;
  let out = '';
  let at = 0;
  for (const [start, end, text] of edits.sort((a, b) => a[0] - b[0])) {
    out += code.slice(at, start) + text;
    at = end;
  }
  return out + code.slice(at);
}

/** The Vite/rolldown plugin: minifies the templates of the package's own sources (src/). */
export function minifyTemplatesPlugin({ include = /\/src\/.*\.[cm]?[jt]sx?$/ } = {}) {
  return {
    name: 'notif-minify-templates',
    enforce: 'pre',
    transform(code, id) {
      const file = id.split('?')[0];
      if (!include.test(file)) return null;
      const out = minifyTemplates(code, file);
      return out === null ? null : { code: out, map: null };
    },
  };
}
