// A subscriber's preferences for <notif-preferences>: read with endpoint 14 (the non-critical and
// the critical workflows), changed with the PATCH extensions (decisions.md), optimistically and
// rolled back when the server refuses. Loaded only with the element (notif-inbox/notif-preferences),
// which runs load() and set() in its tasks (@lit/task).
import { request, type NotifApiError, type NotifClientOptions } from '../api/request.ts';
import type { PreferenceChannels, Preferences } from '../api/types.ts';
import type { InboxConfig } from './types.ts';
import { apiOptions } from './config.ts';

export type Channel = keyof PreferenceChannels;
export type WorkflowPreference = Preferences['workflows'][number] & { critical?: boolean };

export interface PreferencesState {
  global?: Preferences['global'];
  /** Non-critical workflows first, then the critical ones (`critical: true`: always delivered, not changeable). */
  workflows?: WorkflowPreference[];
  /** Why loading failed. */
  error?: Error;
}

/** The service knows no such subscriber yet (an API key's call; through the proxy it is made on first contact). */
const NOT_FOUND = 404;

/** A subscriber the service has not seen yet: everything on, no workflow of its own yet. */
const DEFAULT_PREFERENCES: PreferencesState = { global: { enabled: true, channels: {} }, workflows: [] };

/** A page of preferences as the service answers it: every switch has its channels. */
function wellFormed(normal: Preferences, critical: Preferences): boolean {
  const all = [normal.global, ...normal.workflows, ...critical.workflows];
  return all.every((preference) => preference.channels instanceof Object);
}

/** A change: the global preferences (`workflow` unset) or one workflow's. */
export interface PreferenceChange {
  workflow?: string;
  enabled?: boolean;
  channels?: PreferenceChannels;
}

export class PreferencesStore {
  state: PreferencesState = {};
  #api: NotifClientOptions;
  #base: string;

  constructor(
    config: InboxConfig,
    /** Called after every change of `state`. */
    private changed: () => void,
  ) {
    // As InboxStore reaches the service: address, key, fetch, the proxy's subscriber hash.
    this.#api = apiOptions(config);
    this.#base = `/subscribers/${encodeURIComponent(config.subscriberId)}/preferences`;
  }

  #set(state: PreferencesState) {
    this.state = state;
    this.changed();
  }

  /**
   * Loads the preferences (`signal` aborts the requests); rejects, with the error in the state too,
   * when that fails. A subscriber the service has not seen yet (404) has the defaults.
   */
  async load(signal?: AbortSignal): Promise<void> {
    this.#set({});
    const get = (criticality: string) => request<Preferences>(this.#api, 'GET', '/v2' + this.#base, { query: { criticality }, signal });
    try {
      const [normal, critical] = await Promise.all([get('nonCritical'), get('critical')]);
      // The answer's shape is checked, so a malformed one is an error with a retry, not a blank element.
      if (!wellFormed(normal, critical)) throw new Error('Bad answer');
      const criticalWorkflows = critical.workflows.map((workflow) => ({ ...workflow, critical: true }));
      this.#set({ global: normal.global, workflows: [...normal.workflows, ...criticalWorkflows] });
    } catch (error) {
      if ((error as NotifApiError).status === NOT_FOUND) {
        this.#set(DEFAULT_PREFERENCES);
        return;
      }
      this.#set({ error: error as Error });
      throw error;
    }
  }

  /** The state with `change` applied. */
  #apply({ workflow, enabled, channels }: PreferenceChange) {
    const apply = <T extends { enabled: boolean; channels: PreferenceChannels }>(preference: T): T => ({
      ...preference,
      enabled: enabled ?? preference.enabled,
      channels: { ...preference.channels, ...channels },
    });
    const { global, workflows } = this.state;
    this.#set({
      global: workflow ? global : apply(global!),
      workflows: workflows!.map((each) => (each.workflow.identifier == workflow ? apply(each) : each)),
    });
  }

  /** Applies `change` at once, then on the server; undoes it (and rejects) when the server refuses. */
  async set(change: PreferenceChange): Promise<void> {
    const { workflow, ...body } = change;
    const old = workflow ? this.state.workflows!.find((each) => each.workflow.identifier == workflow)! : this.state.global!;
    // What the changed settings were: restored alone on a refusal, so other changes made meanwhile stay.
    const undo: PreferenceChange = {
      workflow,
      enabled: body.enabled == null ? undefined : old.enabled,
      channels: Object.fromEntries(Object.keys(body.channels ?? {}).map((channel) => [channel, old.channels[channel as Channel]])),
    };
    this.#apply(change);
    try {
      await request(this.#api, 'PATCH', '/v1' + this.#base + (workflow ? '/' + encodeURIComponent(workflow) : ''), { body });
    } catch (error) {
      this.#apply(undo);
      throw error;
    }
  }
}
