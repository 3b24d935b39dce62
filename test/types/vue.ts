// Vue 3 typings (src/vue.ts): the props that GlobalComponents gives each element's template
// (vue-tsc reads the same types), and render functions.
import { h, type GlobalComponents } from 'vue';
import type { NotifActionDetail } from '../../src/vue.ts';

type Props<Tag extends keyof GlobalComponents> = InstanceType<GlobalComponents[Tag]>['$props'];

export const bell: Props<'notif-bell'> = {
  baseUrl: 'https://api.example.com',
  subscriberId: 'ada',
  pollInterval: 30000,
  theme: 'light',
  fetch: (input, init) => fetch(input, init),
  onNotifMessageClick: (e) => {
    if (e.detail.url) e.preventDefault();
  },
  onNotifAction: (e: CustomEvent<NotifActionDetail>) => console.log(e.detail.button),
  onNotifUnseenCountChange: (e) => console.log(e.detail.count.toFixed(0)),
};

export const feed: Props<'notif-feed'> = { embedded: true, feedIdentifier: 'billing', onNotifError: (e) => console.log(e.detail.error.message) };
export const message: Props<'notif-message'> = { message: undefined, markAsSupported: false };

export const rendered = h('notif-bell', { subscriberId: 'ada', onNotifReadChange: (e: CustomEvent) => e.detail });

// @ts-expect-error theme is 'light' | 'dark' | 'auto'
export const badTheme: Props<'notif-bell'> = { theme: 'blue' };
// @ts-expect-error pollInterval is a number
export const badInterval: Props<'notif-bell'> = { pollInterval: 'soon' };
// @ts-expect-error the detail of notif-unseen-count-change is { count }
export const badEvent: Props<'notif-bell'> = { onNotifUnseenCountChange: (e) => e.detail.url };
// @ts-expect-error not a property of <notif-feed>
export const badProp: Props<'notif-feed'> = { subscriber: 'x' };
