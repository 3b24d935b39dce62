import { css } from 'lit';
import { themeStyles } from '../../internal/theme.styles.ts';

// Every row has its top border (a row's height is then the same wherever it is in the windowed list);
// the list's first one sits under the line above it.
export default [
  themeStyles,
  css`
    :host { display: block; min-inline-size: 0; }
    :host([embedded]) { display: flex; flex-flow: column; min-block-size: 0; }
    section {
      display: flex; flex-flow: column; overflow: clip;
      background: var(--_surface); border: 1px solid var(--_border); border-radius: var(--_radius);
    }
    :host([embedded]) section { min-block-size: 0; border: 0; border-radius: 0; }
    header {
      display: flex; align-items: center; gap: .25rem;
      padding: var(--_space) 0 .25rem; padding-inline: var(--_space) calc(var(--_space)*.625);
    }
    h2, ul, p { margin: 0; }
    h2 { flex: none; font-size: 1rem; font-weight: 600; }
    .all { margin-inline-start: auto; }
    /* One line whatever the language: the label gives way (its title has it whole). */
    h2, header span { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    header button { min-inline-size: 0; }
    .close { padding: .375rem; }
    .tabs { display: flex; gap: .25rem; padding-inline: calc(var(--_space)*.625); border-block-end: 1px solid var(--_border); }
    .tab { padding: .625rem .5rem; border-block-end: 2px solid transparent; color: var(--_muted); font-weight: 500; }
    .tab:hover, [aria-selected='true'] { color: var(--_text); }
    [aria-selected='true'] { border-color: var(--_accent); }
    .tab:focus-visible { outline-offset: -2px; }
    #panel { min-block-size: 12rem; }
    :host([embedded]) #panel { min-block-size: 0; overflow-y: auto; overscroll-behavior: contain; }
    ul { list-style: none; padding: 0; margin-block-start: -1px; }
    li, .skeleton+.skeleton, .more { border-block-start: 1px solid var(--_border); }
    /* Above the rows' CTA buttons and controls, raised (z-index 1) above each row's link. */
    .new { position: sticky; top: .5rem; z-index: 2; display: block; margin: 0 auto -2rem; padding: .375rem .75rem; border-radius: 1rem; background: var(--_accent); color: var(--_on-accent); }
    .state, .banner, .more { display: flex; align-items: center; gap: .5rem; padding: .5rem var(--_space); color: var(--_muted); }
    .state { flex-flow: column; padding: 3rem 1.5rem; text-align: center; }
    .state .icon { inline-size: 2rem; }
    p { max-inline-size: 32ch; overflow-wrap: anywhere; }
    p:first-of-type { color: var(--_text); font-weight: 600; }
    p+p, .banner, .more { font-size: var(--_font-size-small); }
    .retry { padding: .4375rem .875rem; }
    .banner { background: var(--_surface-hover); border-block-end: 1px solid var(--_border); }
    .banner .retry { margin-inline-start: auto; padding: .1875rem .5rem; }
    .more { justify-content: center; animation: pulse 1.4s infinite; }
    .skeleton { display: grid; grid: auto/2.25rem 1fr; gap: .5rem var(--_space); padding: var(--_space); }
    .bone:first-child { grid-row: span 2; block-size: 2.25rem; border-radius: 50%; }
    .bone:last-child { inline-size: 55%; }
  `,
];
