// Mutations (mark all, mark one, action, delete): applied to the state at once, sent with one
// idempotency key (retried with the same key while offline or throttled), and rolled back with an
// `error` event when the server refuses.
import { newIdempotencyKey, type NotifApiError } from '../api/request.ts';
import type { MarkAs, Message } from '../api/types.ts';
import { TABS, type MessageChange, type StoreContext } from './context.ts';
import { merge } from './feed-pages.ts';
import type { FeedList, InboxConfig, InboxTab, MessageActionType } from './types.ts';

/** Attempts after the first, at most. */
const MAX_RETRIES = 4;
/** The wait before the first retry (ms) when the server names none; it doubles with each. */
const FIRST_RETRY_WAIT = 500;
const NOT_FOUND = 404;
/** Mutations kept after they end, for first pages asked before them and answered after (Mutations.replayFromNow). */
const KEPT_MUTATIONS = 32;

/** Failures worth another attempt with the same key: offline (0), conflicting (409), throttled (429), unavailable (>= 502). */
function retryable(status: number): boolean {
  return status === 0 || status === 409 || status === 429 || status >= 502;
}

/** Waits before another attempt: the server's Retry-After, else FIRST_RETRY_WAIT doubled per attempt; offline, until back online. */
function waitToRetry(attempt: number, retryAfter: number | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!navigator.onLine) {
      addEventListener('online', () => resolve(), { once: true });
      return;
    }
    const wait = retryAfter === undefined ? FIRST_RETRY_WAIT * 2 ** attempt : retryAfter * 1000;
    setTimeout(resolve, wait);
  });
}

const isMessage = (value: unknown): value is Message => !!(value as Message | null | undefined)?._id;

/** The messages of every tab's list, each once (the All list's copy first). */
export function loadedMessages(lists: Readonly<Record<InboxTab, FeedList>>): Message[] {
  const seen = new Set<string>();
  const messages: Message[] = [];
  for (const tab of TABS) {
    for (const message of lists[tab].messages) {
      if (!seen.has(message._id)) messages.push(message);
      seen.add(message._id);
    }
  }
  return messages;
}

/** `messages` with `change` applied: removed, replaced, and (mark-all) every other one changed by `all`. */
export function applyChange(messages: readonly Message[], { upsert = [], remove = [], all }: MessageChange): Message[] {
  const replacements = new Map(upsert.map((message) => [message._id, message]));
  return messages
    .filter((message) => !remove.includes(message._id))
    .map((message) => replacements.get(message._id) ?? (all ? { ...message, ...all } : message));
}

export interface Mutation {
  /** The action's name in errors: 'markAllRead', 'markRead', 'remove', 'action', ... */
  action: string;
  /** The message changed; none: every message is offered to `change`. */
  messageId?: string;
  /** A message as changed, null to remove it, or undefined to leave it as it is. */
  change(message: Message): Message | null | undefined;
  /** The request (`path` as StoreContext.call takes it). */
  method: string;
  path: string;
  body?: unknown;
  /** What a mark-all sets on every message (the unseen count becomes 0). */
  all?: Partial<Message>;
}

export interface MutationsOptions {
  context: StoreContext;
  /** Applies a change here and tells the other tabs. */
  share(change: MessageChange): void;
  /** A mutation was rolled back: first pages answered while it was in flight show its change, and the other tabs' may too: they are fetched again. */
  rolledBack(): void;
  /** The last mutation in flight ended. */
  settled(): void;
}

/** A mutation as `replayFromNow` replays it: the order it started in, whether it ended, and whether the server refused it. */
interface Started {
  order: number;
  mutation: Mutation;
  ended?: boolean;
  refused?: boolean;
}

/** `messages` as `mutation` changes them (the one it names, or each). */
function changed(messages: readonly Message[], { messageId, change }: Mutation): Message[] {
  return messages.flatMap((message) => {
    const next = messageId && message._id !== messageId ? undefined : change(message);
    if (next === undefined) return [message];
    return next ? [next] : [];
  });
}

export class Mutations {
  #options: MutationsOptions;
  /** Mutations in flight: server reads answered meanwhile may predate them. */
  #inFlight = 0;
  /** The mutations in flight and the last ones that ended, in the order they started. */
  #started: Started[] = [];
  /** How many mutations have started. */
  #count = 0;

  constructor(options: MutationsOptions) {
    this.#options = options;
  }

  get busy(): boolean {
    return this.#inFlight > 0;
  }

  /**
   * Called as a read of the server starts: what applies the mutations that may be missing from its
   * answer (those in flight now, and those started after) to its messages, in the order they
   * started, except those the server refused. A page the server read before a mark all seen made
   * meanwhile (an open bell's) then shows its messages seen, without asking for it again.
   * The function gives undefined when some of them are no longer kept: then only a new read is sure.
   */
  replayFromNow(): (messages: readonly Message[]) => readonly Message[] | undefined {
    const oldestInFlight = this.#started.find((started) => !started.ended);
    const mark = oldestInFlight ? oldestInFlight.order : this.#count;
    return (messages) => {
      if (this.#count - mark > this.#started.length) return undefined;
      let result = messages;
      for (const started of this.#started) {
        if (started.order >= mark && !started.refused) result = changed(result, started.mutation);
      }
      return result;
    };
  }

  /** Applies `mutation` at once, then on the server; rolls it back when the server refuses. Never rejects. */
  async run(mutation: Mutation): Promise<void> {
    const { context, share } = this.#options;
    const { messageId, all } = mutation;
    const { lists, unseenCount } = context.state();
    const originals: Message[] = [];
    const upsert: Message[] = [];
    const remove: string[] = [];
    let count = unseenCount;
    for (const message of loadedMessages(lists)) {
      if (messageId && message._id !== messageId) continue;
      const changed = mutation.change(message);
      if (changed === undefined) continue;
      originals.push(message);
      if (changed) upsert.push(changed);
      else remove.push(message._id);
      if (changed && !changed.seen) count++;
      if (!message.seen) count--;
    }
    count = all ? 0 : Math.max(0, count);
    const countDelta = count - unseenCount;
    share({ upsert, remove, all, count });

    const started: Started = { order: this.#count, mutation };
    this.#count++;
    this.#started.push(started);
    this.#inFlight++;
    try {
      await this.#send(mutation);
    } catch (error) {
      started.refused = true;
      this.#rollBack(mutation, error as NotifApiError, originals, remove, countDelta, lists);
    } finally {
      started.ended = true;
      this.#inFlight--;
      while (this.#started.length > KEPT_MUTATIONS && this.#started[0]!.ended) this.#started.shift();
      if (!this.#inFlight) this.#options.settled();
    }
  }

  /** Sends the mutation, with retries; applies the messages the server answers with. Rejects when the server refuses. */
  async #send({ action, messageId, method, path, body }: Mutation) {
    const { context, share } = this.#options;
    const idempotencyKey = newIdempotencyKey();
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await context.call<unknown>(path, { idempotencyKey, body }, method);
        // The messages in the answer (not counts or acknowledgements).
        const returned = (Array.isArray(answer) ? answer : [answer]).filter(isMessage);
        if (returned.length) share({ upsert: returned, count: context.state().unseenCount });
        return;
      } catch (error) {
        const { status, retryAfter, message } = error as NotifApiError;
        // A message the server no longer has (deleted, here or on another device; its 404 names
        // it, where one of a server without the endpoint cannot): gone here too, not an error.
        if (status == NOT_FOUND && (action == 'remove' || message.includes(messageId!))) {
          share({ remove: [messageId!], count: context.state().unseenCount });
          return;
        }
        if (!retryable(status) || attempt >= MAX_RETRIES) throw error;
        await waitToRetry(attempt, retryAfter);
      }
    }
  }

  /**
   * Undoes what this mutation changed (later state, from polls and other mutations, stays) and
   * reports the failure: each list gets back what it held `before` the mutation.
   */
  #rollBack(
    { action, messageId, all }: Mutation,
    error: NotifApiError,
    originals: Message[],
    removed: string[],
    countDelta: number,
    before: Readonly<Record<InboxTab, FeedList>>,
  ) {
    const { context } = this.#options;
    const state = context.state();
    const byId = new Map(originals.map((message) => [message._id, message]));
    const lists = { ...state.lists };
    for (const tab of TABS) {
      const held = new Set(before[tab].messages.map((message) => message._id));
      const restored = lists[tab].messages.map((message) => byId.get(message._id) ?? message);
      const back = originals.filter((message) => removed.includes(message._id) && held.has(message._id));
      lists[tab] = { ...lists[tab], messages: merge(restored, back) };
    }
    context.set({ lists, unseenCount: Math.max(0, state.unseenCount - countDelta) });
    this.#options.rolledBack();
    // No single-message mark-as on this server: the elements hide the read toggle.
    const unsupported = !all && action.startsWith('mark') && error.status === NOT_FOUND;
    context.fail(error, action, unsupported ? { markAsSupported: false } : undefined, messageId);
  }
}

/** Mark all read (and seen), or all seen: every message not yet so changes, and the unseen count becomes 0. */
export function markAllMutation(markAs: MarkAs & ('read' | 'seen'), feedIdentifier: InboxConfig['feedIdentifier']): Mutation {
  const all: Partial<Message> = markAs === 'read' ? { read: true, seen: true } : { seen: true };
  return {
    action: markAs === 'read' ? 'markAllRead' : 'markAllSeen',
    change: (message) => (!message.seen || (markAs === 'read' && !message.read) ? { ...message, ...all } : undefined),
    method: 'POST',
    path: 'messages/mark-all',
    body: { markAs, feedIdentifier },
    all,
  };
}

/** One message read (and so seen) or unread. */
export function markOneMutation(messageId: string, read: boolean): Mutation {
  return {
    action: read ? 'markRead' : 'markUnread',
    messageId,
    change: (message) => ({ ...message, read, seen: message.seen || read }),
    method: 'POST',
    path: 'messages/mark-as',
    body: { messageId, markAs: read ? 'read' : 'unread' },
  };
}

/** One message deleted. */
export function removeMutation(messageId: string): Mutation {
  return { action: 'remove', messageId, change: () => null, method: 'DELETE', path: '/v1/messages/' + encodeURIComponent(messageId) };
}

/** A CTA button's action done (the message shown read and seen, its result instead of the buttons). */
export function actionMutation(messageId: string, type: MessageActionType): Mutation {
  return {
    action: 'action',
    messageId,
    change: (message) => ({
      ...message,
      read: true,
      seen: true,
      cta: { ...message.cta, action: { ...message.cta?.action, status: 'done', result: { type, payload: {} } } },
    }),
    method: 'POST',
    path: `messages/${encodeURIComponent(messageId)}/actions/${type}`,
    body: { status: 'done' },
  };
}
