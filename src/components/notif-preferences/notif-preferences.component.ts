import { html, nothing, type PropertyDeclarations, type TemplateResult } from 'lit';
import { Task, TaskStatus, initialState } from '@lit/task';
import { PreferencesStore, type Channel, type PreferenceChange, type PreferencesState } from '../../store/preferences.ts';
import type { PreferencesTranslation, Translation } from '../../i18n/translation.ts';
import { localeOf, translationFor } from '../../i18n/localize.ts';
import enPreferences from '../../i18n/en-preferences.ts';
import { emit } from '../../internal/base-element.ts';
import { InboxElement, isRefusal } from '../../internal/inbox-element.ts';
import { alertIcon } from '../../internal/icons.ts';
import styles from './notif-preferences.styles.ts';

const CHANNELS: Channel[] = ['in_app', 'email', 'sms', 'chat', 'push'];

/**
 * @summary The subscriber's notification preferences: a global switch, and each workflow's switch,
 * with a switch per channel when it delivers on several (critical workflows shown locked: they
 * always deliver). A subscriber the service has not seen yet has the defaults. The switches show
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

  /**
   * Loads the preferences of the store in use (again when it changes, or on retry); a store changed
   * meanwhile aborts the requests of the one before.
   */
  #loading = new Task(this, {
    args: () => [this.inbox] as const,
    task: async ([store], { signal }) => {
      if (!store) return initialState;
      const preferences = new PreferencesStore(store.config, () => this.requestUpdate());
      try {
        await preferences.load(signal);
      } catch (error) {
        if (!signal.aborted) this.#fail(error as Error);
        throw error;
      }
      return preferences;
    },
  });

  /**
   * Saves one change (applied at once, undone when the server refuses). Each change is sent whole:
   * a later change does not abort the request of one before it (a switch turned on, then another,
   * must both reach the service), so the task's signal is not passed to these requests.
   */
  #saving = new Task(this, {
    autoRun: false,
    task: async ([preferences, change]: readonly [PreferencesStore, PreferenceChange]) => {
      try {
        await preferences.set(change);
      } catch (error) {
        this.#fail(error as Error);
        throw error;
      }
    },
  });

  constructor() {
    super();
    this.embedded = false;
  }

  #set(change: PreferenceChange) {
    const preferences = this.#loading.value;
    if (preferences) void this.#saving.run([preferences, change]);
  }

  /** What went wrong, for developers (the console and the event); people see a translated text. */
  #fail = (error: Error) => {
    console.warn('notif-inbox: preferences', error);
    emit(this, 'notif-error', { error, action: 'preferences' });
  };

  override render() {
    // The shared translation, with this element's English strings where it has none of its own.
    const strings = { ...enPreferences, ...translationFor(localeOf(this)) };
    const status = this.#loading.status;
    const busy = status === TaskStatus.INITIAL || status === TaskStatus.PENDING;
    const loading = html`<div class="state"><span class="sr-only">${strings.loading}</span><i class="bone"></i><i class="bone"></i></div>`;
    // Until the configuration comes, the loading state; if it never does, unavailable.
    const body =
      this.unconfigured && !this.inbox
        ? this.#renderError(strings)
        : this.#loading.render({
            initial: () => loading,
            pending: () => loading,
            complete: (preferences) => this.#renderList(preferences.state, strings),
            error: (error) => this.#renderError(strings, error as Error),
          });
    return html`<section part="base" aria-labelledby="title">
      <header part="header"><slot name="back"></slot><slot name="header"><h2 part="title" id="title">${strings.preferences}</h2></slot></header>
      <div class="body" aria-busy=${busy}>${body}</div>${this.liveRegion()}
    </section>`;
  }

  /**
   * The error state: loading failed (with a retry), or unavailable (the service refuses this inbox,
   * or, `error` unset, the configuration never came).
   */
  #renderError(strings: Translation & PreferencesTranslation, error?: Error) {
    const unavailable = !error || isRefusal(error);
    return html`<div part="error" class="state" role="alert">${alertIcon}<p>${unavailable ? strings.unavailable : strings.preferencesError}</p>${
      unavailable ? nothing : html`<p>${strings.errorHint}</p>`
    }${error ? html`<button part="retry-button" class="outline retry" @click=${() => this.#loading.run()}>${strings.retry}</button>` : nothing}</div>`;
  }

  /** A switch: its label (and hint), on or off, and the change it makes. */
  #renderSwitch(label: string, on: boolean | undefined, change: (on: boolean) => PreferenceChange, hint?: string | false, disabled?: boolean): TemplateResult {
    return html`<label class="row"><span>${label}${hint ? html`<small>${hint}</small>` : nothing}</span><input
        part="switch"
        type="checkbox"
        role="switch"
        .checked=${!!on}
        ?disabled=${disabled}
        @change=${(event: Event) => this.#set(change((event.target as HTMLInputElement).checked))}
    /></label>`;
  }

  /**
   * The global switch (its hint says what critical workflows are) and each workflow's switch: with
   * one channel, that switch is the channel's too (a second one would say the same); with several,
   * a switch per channel under it.
   */
  #renderList({ global, workflows }: PreferencesState, strings: Translation & PreferencesTranslation) {
    return html`<div part="global">${this.#renderSwitch(strings.allNotifications, global!.enabled, (enabled) => ({ enabled }), strings.allNotificationsHint)}</div>
      <ul part="list">${workflows!.map(({ critical, enabled, channels, workflow }) => {
        // What the engine does: a critical workflow always delivers; the others nothing while
        // everything or the workflow is off, and no channel turned off for every workflow.
        const live = critical || (global!.enabled && enabled);
        const change = (partial: PreferenceChange) => ({ workflow: workflow.identifier, ...partial });
        const offEverywhere = (channel: Channel) => !critical && global!.channels[channel] === false;
        const shown = CHANNELS.filter((channel) => channel in channels);
        const only = shown.length == 1 ? shown[0]! : undefined;
        let name: TemplateResult;
        if (critical) name = html`${workflow.name} <span part="locked" class="locked">${strings.alwaysOn}</span>`;
        else if (only) {
          name = this.#renderSwitch(
            workflow.name,
            live && !offEverywhere(only) && channels[only],
            (on) => change({ enabled: on, channels: { [only]: on } }),
            offEverywhere(only) && strings.channelOff,
            !global!.enabled || offEverywhere(only),
          );
        } else name = this.#renderSwitch(workflow.name, live, (on) => change({ enabled: on }), !enabled && strings.workflowOff, !global!.enabled);
        // (The first legend's switch stays usable in a disabled fieldset: it turns the workflow back on.)
        return html`<li part="workflow"><fieldset ?disabled=${critical || !live}>
            <legend>${name}</legend>
            ${only
              ? nothing
              : shown.map((channel) =>
                  this.#renderSwitch(
                    strings.channels[channel],
                    live && !offEverywhere(channel) && channels[channel],
                    (on) => change({ channels: { [channel]: on } }),
                    offEverywhere(channel) && strings.channelOff,
                    offEverywhere(channel),
                  ),
                )}
          </fieldset></li>`;
      })}</ul>`;
  }
}
