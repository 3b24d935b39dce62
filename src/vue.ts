// `notif-inbox/vue`: the package (it registers the elements) plus Vue 3 typings: GlobalComponents
// entries so that templates type-check (vue-tsc / Volar):
//   <notif-bell :base-url="url" :subscriber-id="id" @notif-message-click="(e) => go(e.detail.url)" />
// Tell Vue's compiler these are custom elements (vite.config: vue({ template: { compilerOptions:
// { isCustomElement: (tag) => tag.startsWith('notif-') } } })); Vue then sets properties the element
// has (`subscriberId`, `fetch`, `store`) as properties, and `@notif-*` listens to the events.
//   import 'notif-inbox/vue';            // in the app's entry (or: import type {} from 'notif-inbox/vue')
import type { DefineComponent } from 'vue';
import type { NotifEventDetails } from './events.ts';
import type { ElementProperties, NotifElements, PascalEvent } from './types/elements.ts';

export * from './index.ts';

/** `onNotifMessageClick` (`@notif-message-click` in a template) and the other events. */
export type NotifVueEvents = {
  [K in keyof NotifEventDetails as `on${PascalEvent<K>}`]?: (event: CustomEvent<NotifEventDetails[K]>) => void;
};

/** The props of `<tag>` in a Vue template: its properties (kebab-case or camelCase) and events. */
export type NotifVueProps<Tag extends keyof NotifElements> = ElementProperties<NotifElements[Tag]['element']> & NotifVueEvents;

declare module 'vue' {
  interface GlobalComponents {
    'notif-bell': DefineComponent<NotifVueProps<'notif-bell'>>;
    'notif-feed': DefineComponent<NotifVueProps<'notif-feed'>>;
    'notif-message': DefineComponent<NotifVueProps<'notif-message'>>;
    'notif-preferences': DefineComponent<NotifVueProps<'notif-preferences'>>;
  }
}
