// Shared by the React and Vue typings (src/react.ts, src/vue.ts): each element's settable properties,
// its attributes (generated from custom-elements.json) and its events.
import type { LitElement } from 'lit';
import type { NotifBell } from '../components/notif-bell/notif-bell.component.ts';
import type { NotifFeed } from '../components/notif-feed/notif-feed.component.ts';
import type { NotifMessage } from '../components/notif-message/notif-message.component.ts';
import type { NotifPreferences } from '../components/notif-preferences/notif-preferences.component.ts';
import type { NotifBellAttributes, NotifFeedAttributes, NotifMessageAttributes, NotifPreferencesAttributes } from './attributes.ts';

/**
 * The public properties an app may set on element `E`: its own fields and those of its notif base
 * classes (not LitElement's or HTMLElement's), without its methods. `fetch` is a property that
 * holds a function, so it stays.
 */
export type ElementProperties<E> = {
  [K in keyof E as K extends keyof LitElement ? never : E[K] extends (...args: never[]) => unknown ? never : K]?: E[K];
};

export interface NotifElements {
  'notif-bell': { element: NotifBell; attributes: NotifBellAttributes };
  'notif-feed': { element: NotifFeed; attributes: NotifFeedAttributes };
  'notif-message': { element: NotifMessage; attributes: NotifMessageAttributes };
  /** Registered by `notif-inbox/notif-preferences` (or the bell, when its preferences button is pressed). */
  'notif-preferences': { element: NotifPreferences; attributes: NotifPreferencesAttributes };
}

/** `notif-message-click` -> `NotifMessageClick` (Vue's `onNotifMessageClick`). */
export type PascalEvent<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Capitalize<Head>}${PascalEvent<Tail>}` : Capitalize<S>;
