import { html, nothing, type PropertyDeclarations } from 'lit';
import type { InboxStoreApi } from '../../store/types.ts';
import { PreferencesStore, type Channel, type PreferenceChange } from '../../store/preferences.ts';
import { errorHint, localeOf, translationFor } from '../../i18n/localize.ts';
import enPreferences from '../../i18n/en-preferences.ts';
import { emit } from '../../internal/base-element.ts';
import { InboxElement } from '../../internal/inbox-element.ts';
import { alertIcon } from '../../internal/icons.ts';
import styles from './notif-preferences.styles.ts';

const CHANNELS: Channel[] = ['in_app', 'email', 'sms', 'chat', 'push'];

/**
 * @summary The subscriber's notification preferences: a global switch, and each workflow's switch
 * and channel switches (critical workflows shown locked: they always deliver). The switches show
 * what the service will deliver: everything off, or a workflow off, shows that workflow's channels
 * off and disabled (a workflow's own switch turns it back on); a channel turned off for every
 * workflow shows off, disabled, in each. Each change applies at once and is undone, with
 * `notif-error`, when the server refuses it. Its strings are the shared translation's
 * (`registerTranslation`; English built in). Alone it is configured by its attributes; inside
 * `<notif-bell>` (its gear button) it shares the bell's store.
 *
 * @slot header - Replaces the title.
 * @slot back - Before the title (the bell puts its "back to notifications" button there).
 *
 * @csspart base - The frame.
 * @csspart header - Back button and title.
 * @csspart title - The title.
 * @csspart global - The global switch's row.
 * @csspart list - The list of workflows; each is `workflow`.
 * @csspart workflow - One workflow: its name and switch, and its channel switches.
 * @csspart locked - "Always on" of a critical workflow.
 * @csspart switch - Each switch (a checkbox with the switch role).
 * @csspart error - The error state.
 * @csspart retry-button - Retry after an error.
 *
 * @cssprop --notif-color-accent - Switches that are on.
 * @cssprop --notif-duration - A switch's movement (default .15s; none under `prefers-reduced-motion`).
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
    if (error) this.#fail(error);
  }

  #set(change: PreferenceChange) {
    this.#prefs!.set(change).catch(this.#fail);
  }

  /** What went wrong, for developers (the console and the event); people see a translated text. */
  #fail = (error: Error) => {
    console.warn('notif-inbox: preferences', error);
    emit(this, 'notif-error', { error, action: 'preferences' });
  };

  override render() {
    // The shared translation, with this element's English strings where it has none of its own.
    const t = { ...enPreferences, ...translationFor(localeOf(this)) };
    const { global, workflows, error } = this.#prefs?.state ?? {};
    const sw = (label: string, on: boolean | undefined, change: (on: boolean) => PreferenceChange, hint?: string | false, disabled?: boolean) =>
      html`<label class="row"><span>${label}${hint ? html`<small>${hint}</small>` : nothing}</span><input
          part="switch"
          type="checkbox"
          role="switch"
          .checked=${!!on}
          ?disabled=${disabled}
          @change=${(e: Event) => this.#set(change((e.target as HTMLInputElement).checked))}
      /></label>`;
    return html`<section part="base" aria-labelledby="title">
      <header part="header"><slot name="back"></slot><slot name="header"><h2 part="title" id="title">${t.preferences}</h2></slot></header>
      <div class="body" aria-busy=${!workflows && !error}>${
        error || !this.configured
          ? html`<div part="error" class="state" role="alert">${alertIcon}<p>${t.preferencesError}</p><p>${error ? errorHint(t, error) : t.notConfigured}</p>${
              error ? html`<button part="retry-button" class="outline retry" @click=${() => this.#load()}>${t.retry}</button>` : nothing
            }</div>`
          : !workflows
            ? html`<div class="state"><span class="sr-only">${t.loading}</span><i class="bone"></i><i class="bone"></i></div>`
            : html`<div part="global">${sw(t.allNotifications, global!.enabled, (enabled) => ({ enabled }), t.allNotificationsHint)}</div>
                <ul part="list">${workflows.map((w) => {
                  // What the engine does: a critical workflow always delivers; the others nothing while
                  // everything or the workflow is off, and no channel turned off for every workflow.
                  const { critical, enabled, channels, workflow } = w;
                  const live = critical || (global!.enabled && enabled);
                  const change = (c: PreferenceChange) => ({ workflow: workflow.identifier, ...c });
                  // (The first legend's switch stays usable in a disabled fieldset: it turns the workflow back on.)
                  return html`<li part="workflow"><fieldset ?disabled=${critical || !live}>
                      <legend>${critical
                        ? html`${workflow.name} <span part="locked" class="locked">${t.alwaysOn}</span>`
                        : sw(workflow.name, live, (enabled) => change({ enabled }), !enabled && t.workflowOff, !global!.enabled)}</legend>
                      ${CHANNELS.filter((c) => c in channels).map((c) => {
                        const everywhere = !critical && global!.channels[c] === false;
                        return sw(t.channels[c], live && !everywhere && channels[c], (on) => change({ channels: { [c]: on } }), everywhere && t.channelOff, everywhere);
                      })}
                    </fieldset></li>`;
                })}</ul>`
      }</div>${this.liveRegion()}
    </section>`;
  }
}
