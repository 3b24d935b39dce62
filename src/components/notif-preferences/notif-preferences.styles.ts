import { css } from 'lit';
import { themeStyles } from '../../internal/theme.styles.ts';

export default [
  themeStyles,
  css`
    :host { display: block; min-inline-size: 0; }
    :host([embedded]), :host([embedded]) section { block-size: 100%; }
    :host([embedded]) { flex: 1; }
    section {
      display: flex; flex-flow: column; overflow: clip;
      background: var(--_surface); border: 1px solid var(--_border); border-radius: var(--_radius);
    }
    :host([embedded]) section { border: 0; border-radius: 0; }
    header { display: flex; align-items: center; gap: .5rem; padding: var(--_space); border-block-end: 1px solid var(--_border); }
    h2, ul, p { margin: 0; }
    h2 { font-size: 1rem; font-weight: 600; }
    .body { flex: 1; min-block-size: 0; overflow-y: auto; }
    ul { list-style: none; padding: 0; }
    [part=global] { border-block-end: 1px solid var(--_border); }
    li+li { border-block-start: 1px solid var(--_border); }
    fieldset { margin: 0; padding: .25rem 0; border: 0; min-inline-size: 0; }
    legend { float: inline-start; inline-size: 100%; padding: .5rem var(--_space) 0; font-weight: 600; overflow-wrap: anywhere; }
    legend .row { padding: 0; }
    .locked, small { display: block; color: var(--_muted); font-size: var(--_font-size-small); font-weight: 400; }
    .row { clear: both; display: flex; align-items: center; justify-content: space-between; gap: var(--_space); padding: .5rem var(--_space); cursor: pointer; }
    .row:has(:disabled) { cursor: default; color: var(--_muted); }
    input {
      appearance: none; flex: none; position: relative; inline-size: 2.25rem; block-size: 1.25rem; margin: 0;
      border-radius: 1rem; background: var(--_border); cursor: inherit; transition: background var(--_duration);
    }
    input::before {
      content: ''; position: absolute; inset-block-start: .1875rem; inset-inline-start: .1875rem;
      inline-size: .875rem; block-size: .875rem; border-radius: 50%; background: var(--_surface-raised); transition: translate var(--_duration);
    }
    input:checked { background: var(--_accent); }
    input:checked::before { translate: 1rem; }
    :host(:dir(rtl)) input:checked::before { translate: -1rem; }
    input:disabled { opacity: .5; }
    .state { display: flex; flex-flow: column; align-items: center; gap: .5rem; padding: 3rem 1.5rem; color: var(--_muted); text-align: center; }
    .state .icon { inline-size: 2rem; }
    p:first-of-type { color: var(--_text); font-weight: 600; }
    p+p { font-size: var(--_font-size-small); overflow-wrap: anywhere; }
    .retry { padding: .4375rem .875rem; }
    .bone { inline-size: 80%; }
  `,
];
