// Custom rendering's types: the hooks an app sets on `<notif-bell>` or `<notif-feed>` to render
// messages its own way, and what a renderer may do with its message.
import type { Message } from '../api/types.ts';
import type { MessageActionType } from '../store/types.ts';

/**
 * What a custom renderer may do with its message, as the built-in controls do: optimistic, through
 * the store; each resolves once the server answered (a refusal rolls back and fires `notif-error`).
 */
export interface MessageActions {
  /** Opens the message as a click on it does: marks it read, fires `notif-message-click`, follows its URL unless prevented. */
  open(): Promise<void>;
  markRead(): Promise<void>;
  markUnread(): Promise<void>;
  /** Runs a CTA button's action (status `done`), firing `notif-action`; follows the button's URL unless prevented. */
  action(button: MessageActionType): Promise<void>;
  remove(): Promise<void>;
}

/**
 * Renders a message, or a piece of it, the app's own way into `host`, a light-DOM element slotted
 * into the message's row (the page's CSS applies; React portals and Vue teleports can target it).
 * May return a cleanup, called when the row leaves or before the message is rendered again; or
 * `false` to leave this message (or this piece of it) to the built-in rendering.
 */
export type MessageRenderer = (host: HTMLElement, message: Message, actions: MessageActions) => void | false | (() => void);

/**
 * The pieces of a message an app may render itself, each with its `render<Piece>` property and its
 * slot of the row (the name in lower case).
 */
export const HOOKS = ['Message', 'Avatar', 'Subject', 'Body', 'Actions'] as const;
export type Hook = (typeof HOOKS)[number];
