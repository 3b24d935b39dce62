import { expect, fixture, html } from '@open-wc/testing';
import '../../src/index.ts';
import { registerTranslation, type NotifBell, type NotifFeed, type Translation } from '../../src/index.ts';
import { de, en, enPreferences } from '../../src/i18n/index.ts';
import { BellHarness, FeedHarness, waitFor } from './harness.ts';
import { createWorkflow, testServer, triggerMany, uniqueSubscriber } from './server.ts';

// Texts from a typed Translation (English built in, German shipped, more by registerTranslation),
// the locale from the attribute, then the closest lang, then <html lang>, then the browser; times and
// counts through Intl.

describe('localization', () => {
  let workflowId: string;
  before(async () => {
    workflowId = await createWorkflow();
  });

  async function feedIn(attrs: { locale?: string; lang?: string }, sub?: string) {
    const { baseUrl, apiKey } = await testServer();
    const subscriber = sub ?? (await uniqueSubscriber());
    const wrap = await fixture<HTMLElement>(html`<div lang=${attrs.lang ?? ''}>
      <notif-feed locale=${attrs.locale ?? ''} base-url=${baseUrl} subscriber-id=${subscriber} api-key=${apiKey}></notif-feed>
    </div>`);
    const feed = new FeedHarness(wrap.querySelector<NotifFeed>('notif-feed')!);
    await feed.loaded();
    return feed;
  }

  it('German has every term English has, and nothing hard-coded slips through', () => {
    // $name and $dir are optional metadata (English leaves them out).
    // (English has <notif-preferences>' strings in that element's entry: en-preferences.ts.)
    const english: Translation = { ...en, ...enPreferences };
    const terms = (t: Translation) => Object.keys(t).filter((k) => k !== '$name' && k !== '$dir').sort();
    expect(terms(de)).to.deep.equal(terms(english));
    for (const key of Object.keys(english) as (keyof Translation)[]) {
      if (key.startsWith('$') || key === 'unread') continue; // "Unread" is a label in both places
      const [a, b] = [english[key], de[key]];
      if (typeof a === 'function') expect((b as typeof a)(3, '3'), key).to.not.equal(a(3, '3'));
      else expect(b, key).to.not.equal(a);
    }
  });

  it('uses German once registered, by locale attribute, by the closest lang, and by <html lang>', async () => {
    registerTranslation(de);
    const byAttribute = await feedIn({ locale: 'de' });
    expect(byAttribute.tabs.map((t) => t.textContent!.trim())).to.deep.equal(['Alle', 'Ungelesen']);
    expect(byAttribute.markAllButton.textContent!.trim()).to.equal('Alle gelesen');
    expect(byAttribute.empty!.textContent).to.contain('Noch keine Benachrichtigungen');

    const byLang = await feedIn({ lang: 'de-AT' });
    expect(byLang.selectedTab).to.equal('Alle');

    const html0 = document.documentElement.lang;
    document.documentElement.lang = 'de';
    try {
      const byDocument = await feedIn({});
      expect(byDocument.selectedTab).to.equal('Alle');
    } finally {
      document.documentElement.lang = html0;
    }

    const unknown = await feedIn({ locale: 'xx-YY' });
    expect(unknown.selectedTab, 'an unknown locale falls back to English').to.equal('All');
  });

  it('registers a new language at run time: connected elements re-render, right-to-left included', async () => {
    const feed = await feedIn({ locale: 'he' });
    expect(feed.selectedTab).to.equal('All');
    const he: Translation = { ...en, $code: 'he', $name: 'עברית', $dir: 'rtl', tabAll: 'הכל', tabUnread: 'לא נקראו' };
    registerTranslation(he);
    await waitFor(() => feed.selectedTab === 'הכל', 'Hebrew tab');
  });

  it('formats counts and relative times through Intl: the bell name and badge in Arabic digits, times in German', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 3);
    const { baseUrl, apiKey } = await testServer();
    const bell = new BellHarness(await fixture<NotifBell>(html`<notif-bell locale="ar-EG" base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>`));
    const three = new Intl.NumberFormat('ar-EG').format(3);
    expect(three).to.not.equal('3');
    await waitFor(() => bell.badge === three, `badge ${three}`);
    expect(bell.label).to.equal(`Notifications, ${three} unseen`);

    registerTranslation(de);
    const deBell = new BellHarness(await fixture<NotifBell>(html`<notif-bell locale="de" base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>`));
    await waitFor(() => deBell.badge === '3', 'badge 3');
    expect(deBell.label).to.equal('Benachrichtigungen, 3 ungesehen');
    expect(deBell.popover.getAttribute('aria-label')).to.equal('Benachrichtigungen');

    const feed = await feedIn({ locale: 'de' }, sub);
    await feed.loaded(3);
    expect(feed.messages[0]!.time).to.equal(new Intl.RelativeTimeFormat('de', { numeric: 'auto', style: 'short' }).format(0, 'second'));
  });
});
