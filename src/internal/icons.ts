// Icons (24x24, stroked in currentColor by the `.icon` rule of theme.styles.ts), decorative: the
// controls carry the names. Each is written out whole: the repeated <svg> costs less than a helper.
import { html } from 'lit';

export const bellIcon = html`<svg part="bell-icon" class="icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9m4.3 13a1.94 1.94 0 0 0 3.4 0"/></svg>`;
export const checkIcon = html`<svg part="icon" class="icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M20 6 9 17l-5-5"/></svg>`;
export const checkAllIcon = html`<svg part="icon" class="icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M18 6 7 17l-5-5m20-2-7.5 7.5L13 16"/></svg>`;
export const mailIcon = html`<svg part="icon" class="icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M3 5h18v14H3zm0 1 9 7 9-7"/></svg>`;
export const userIcon = html`<svg part="icon" class="icon" viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="8" r="4"/><path d="M4 21a8 8 0 0 1 16 0"/></svg>`;
export const closeIcon = html`<svg part="icon" class="icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M18 6 6 18M6 6l12 12"/></svg>`;
export const inboxIcon = html`<svg part="icon" class="icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M2 12h6l2 3h4l2-3h6M5 4h14l3 8v8H2v-8z"/></svg>`;
export const alertIcon = html`<svg part="icon" class="icon" viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="12" r="10"/><path d="M12 8v4m0 4h.01"/></svg>`;
export const settingsIcon = html`<svg part="icon" class="icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M3 6h11m4 0h3M3 12h3m4 0h11M3 18h13m4 0h1"/><circle cx="16" cy="6" r="2"/><circle cx="8" cy="12" r="2"/><circle cx="18" cy="18" r="2"/></svg>`;
export const backIcon = html`<svg part="icon" class="icon back" viewBox="0 0 24 24" aria-hidden="true"><path d="m15 18-6-6 6-6"/></svg>`;
