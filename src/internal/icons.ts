// Icons as lit `svg` templates (24x24, stroke = currentColor), decorative: the controls carry the names.
import { html, svg, type TemplateResult } from 'lit';

function icon(body: TemplateResult<2>, part = 'icon'): TemplateResult {
  return html`<svg
    part=${part}
    class="icon"
    viewBox="0 0 24 24"
    width="20"
    height="20"
    fill="none"
    stroke="currentColor"
    stroke-width="1.75"
    stroke-linecap="round"
    stroke-linejoin="round"
    aria-hidden="true"
    focusable="false"
  >
    ${body}
  </svg>`;
}

export const bellIcon = () =>
  icon(svg`<path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9" /><path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />`, 'bell-icon');

export const checkAllIcon = () => icon(svg`<path d="M18 6 7 17l-5-5" /><path d="m22 10-7.5 7.5L13 16" />`);

export const checkIcon = () => icon(svg`<path d="M20 6 9 17l-5-5" />`);

export const moreIcon = () =>
  icon(svg`<circle cx="12" cy="12" r="1" /><circle cx="19" cy="12" r="1" /><circle cx="5" cy="12" r="1" />`);

export const inboxIcon = () =>
  icon(
    svg`<polyline points="22 12 16 12 14 15 10 15 8 12 2 12" /><path d="M5.45 5.11 2 12v6a2 2 0 0 0 2 2h16a2 2 0 0 0 2-2v-6l-3.45-6.89A2 2 0 0 0 16.76 4H7.24a2 2 0 0 0-1.79 1.11z" />`,
  );

export const alertIcon = () =>
  icon(svg`<circle cx="12" cy="12" r="10" /><line x1="12" x2="12" y1="8" y2="12" /><line x1="12" x2="12.01" y1="16" y2="16" />`);
