import type { NotifEventDetails, NotifEventName } from '../events.ts';

/**
 * Dispatches a typed `notif-*` event from `el`. Bubbles and is composed unless told otherwise;
 * returns the event so a caller can check `defaultPrevented` on cancelable ones.
 */
export function emit<K extends NotifEventName>(
  el: EventTarget,
  name: K,
  detail: NotifEventDetails[K],
  options: Omit<CustomEventInit, 'detail'> = {},
): CustomEvent<NotifEventDetails[K]> {
  const event = new CustomEvent<NotifEventDetails[K]>(name, { bubbles: true, composed: true, cancelable: false, ...options, detail });
  el.dispatchEvent(event);
  return event;
}
