import { html, nothing, type PropertyDeclarations } from 'lit';
import type { InboxStoreApi } from '../../store/types.ts';
import { PreferencesStore, type Channel, type PreferenceChange } from '../../store/preferences.ts';
import { localeOf, translationFor } from '../../i18n/localize.ts';
import { emit } from '../../internal/base-element.ts';
import { InboxElement } from '../../internal/inbox-element.ts';
import { alertIcon } from '../../internal/icons.ts';
import styles from './notif-preferences.styles.ts';

const CHANNELS: Channel[] = ['in_app', 'email', 'sms', 'chat', 'push'];

/** The element's own strings (English, German), beside the shared translation's. */
const STRINGS = {
  en: {
    all: 'All notifications',
    allHint: 'Turned off, only critical notifications reach you.',
    channels: { in_app: 'In-app', email: 'Email', sms: 'SMS', chat: 'Chat', push: 'Push' },
    locked: 'Always on: critical',
    loadError: "Couldn't load your preferences",
  },
  de: {
    all: 'Alle Benachrichtigungen',
    allHint: 'Ausgeschaltet erreichen Sie nur kritische Benachrichtigungen.',
    channels: { in_app: 'In der App', email: 'E-Mail', sms: 'SMS', chat: 'Chat', push: 'Push' },
    locked: 'Immer an: kritisch',
    loadError: 'Ihre Einstellungen konnten nicht geladen werden',
  },
};

/**
 * @summary The subscriber's notification preferences: a global switch, and each workflow's channel
 * switches (critical workflows shown locked: they always deliver). Each change applies at once and
 * is undone, with `notif-error`, when the server refuses it. Alone it is configured by its
 * attributes; inside `<notif-bell>` (its gear button) it shares the bell's store.
 *
 * @slot header - Replaces the title.
 * @slot back - Before the title (the bell puts its "back to notifications" button there).
 *
 * @csspart base - The frame.
 * @csspart header - Back button and title.
 * @csspart title - The title.
 * @csspart global - The global switch's row.
 * @csspart list - The list of workflows; each is `workflow`.
 * @csspart workflow - One workflow: its name and channel switches.
 * @csspart locked - "Always on" of a critical workflow.
 * @csspart switch - Each switch (a checkbox with the switch role).
 * @csspart error - The error state.
 * @csspart retry-button - Retry after an error.
 *
 * @cssprop --notif-color-accent - Switches that are on.
 *
 * @fires notif-error - A change was refused (and undone), or the preferences could not be loaded.
 */
export class NotifPreferences extends InboxElement {
  static override styles = styles;
  static override properties: PropertyDeclarations = {
    embedded: { type: Boolean, reflect: true },
  };

  /** Set by `<notif-bell>`: fills the popover and scrolls inside it. */
  declare embedded: boolean;
  #prefs?: PreferencesStore;

  constructor() {
    super();
    this.embedded = false;
  }

  protected override storeChanged(store: InboxStoreApi, attached: boolean) {
    this.#prefs = undefined;
    if (attached) this.#load((this.#prefs = new PreferencesStore(store.config, () => this.requestUpdate())));
  }

  async #load(prefs = this.#prefs!) {
    await prefs.load();
    const error = prefs.state.error;
    if (error) emit(this, 'notif-error', { error, action: 'preferences' });
  }

  #set(change: PreferenceChange) {
    this.#prefs!.set(change).catch((error) => emit(this, 'notif-error', { error, action: 'preferences' }));
  }

  override render() {
    const locale = localeOf(this);
    const t = translationFor(locale);
    const s = STRINGS[locale.toLowerCase().startsWith('de') ? 'de' : 'en'];
    const { global, workflows, error } = this.#prefs?.state ?? {};
    const sw = (label: string, on: boolean | undefined, change: (on: boolean) => PreferenceChange, hint?: string) =>
      html`<label class="row"><span>${label}${hint ? html`<small>${hint}</small>` : nothing}</span><input
          part="switch"
          type="checkbox"
          role="switch"
          .checked=${!!on}
          @change=${(e: Event) => this.#set(change((e.target as HTMLInputElement).checked))}
      /></label>`;
    return html`<section part="base" aria-labelledby="title">
      <header part="header"><slot name="back"></slot><slot name="header"><h2 part="title" id="title">${t.preferences}</h2></slot></header>
      <div class="body" aria-busy=${!workflows && !error}>${
        error || !this.configured
          ? html`<div part="error" class="state" role="alert">${alertIcon}<p>${s.loadError}</p><p>${error?.message || t.notConfigured}</p>${
              error ? html`<button part="retry-button" class="retry" @click=${() => this.#load()}>${t.retry}</button>` : nothing
            }</div>`
          : !workflows
            ? html`<div class="state"><span class="sr-only">${t.loading}</span><i class="bone"></i><i class="bone"></i></div>`
            : html`<div part="global">${sw(s.all, global!.enabled, (enabled) => ({ enabled }), s.allHint)}</div>
                <ul part="list">${workflows.map(
                  (w, i) => html`<li part="workflow"><fieldset ?disabled=${w.critical || !global!.enabled}>
                      <legend id="w${i}">${w.workflow.name}${w.critical ? html` <span part="locked" class="locked">${s.locked}</span>` : nothing}</legend>
                      ${CHANNELS.filter((c) => c in w.channels).map((c) =>
                        sw(s.channels[c], w.channels[c], (on) => ({ workflow: w.workflow.identifier, channels: { [c]: on } })),
                      )}
                    </fieldset></li>`,
                )}</ul>`
      }</div>${this.liveRegion()}
    </section>`;
  }
}
