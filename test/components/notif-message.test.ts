import { expect, fixture, html } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import sinon from 'sinon';
import '../../src/index.ts';
import { NotifMessage, registerTranslation, type Message } from '../../src/index.ts';
import de from '../../src/i18n/de.ts';
import { NotifElement } from '../../src/internal/base-element.ts';
import { formatCount, relativeTime } from '../../src/i18n/localize.ts';
import { initials, messageBody } from '../../src/components/notif-message/notif-message.component.ts';
import { MessageHarness, waitFor } from './harness.ts';

// <notif-message> on its own: what it shows for a message, and the pure helpers behind it.

const message = (fields: Partial<Message> = {}): Message => ({
  _id: 'm1',
  createdAt: new Date(Date.now() - 30_000).toISOString(),
  read: false,
  seen: false,
  subject: 'Ada Lovelace replied',
  content: 'Nice work',
  ...fields,
});

describe('<notif-message>', () => {
  let clock: ReturnType<typeof sinon.useFakeTimers> | undefined;
  afterEach(() => {
    clock?.restore();
    clock = undefined;
  });

  it('shows a neutral avatar, subject, body, time and the unread dot', async () => {
    const el = await fixture<NotifMessage>(html`<notif-message .message=${message()}></notif-message>`);
    const m = new MessageHarness(el);
    expect(m.subject).to.equal('Ada Lovelace replied');
    expect(m.body).to.equal('Nice work');
    expect(m.avatar!.querySelector('svg'), 'no initials made up from the subject').to.not.equal(null);
    expect(m.unread).to.equal(true);
    expect(m.link.textContent).to.contain('Unread');
    expect(m.time).to.equal('now');
    expect(el.shadowRoot!.querySelector('time')!.getAttribute('datetime')).to.equal(el.message!.createdAt);
    await expect(el).to.be.accessible();

    el.message = message({ read: true });
    await el.updateComplete;
    expect(m.unread).to.equal(false);
  });

  it('keeps its relative time current, in the locale', async () => {
    clock = sinon.useFakeTimers({ now: Date.parse('2025-03-01T12:00:00Z'), toFake: ['setInterval', 'clearInterval', 'Date'] });
    const created = new Date(Date.now() - 10_000).toISOString();
    const el = await fixture<NotifMessage>(html`<notif-message .message=${message({ createdAt: created })}></notif-message>`);
    const de = await fixture<NotifMessage>(html`<notif-message locale="de" .message=${message({ createdAt: created })}></notif-message>`);
    expect(new MessageHarness(el).time).to.equal('now');
    expect(new MessageHarness(de).time).to.equal('jetzt');
    clock.tick(3 * 60_000);
    await el.updateComplete;
    await de.updateComplete;
    expect(new MessageHarness(el).time).to.equal('3m');
    expect(new MessageHarness(de).time).to.equal('3 Min.');
  });

  it('shows the action result in place of the buttons once done', async () => {
    const cta = {
      action: {
        status: 'pending',
        buttons: [
          { type: 'primary', content: 'Accept', resultContent: 'Accepted' },
          { type: 'secondary', content: 'Decline', resultContent: 'Declined' },
        ],
      },
    };
    const el = await fixture<NotifMessage>(html`<notif-message .message=${message({ cta })}></notif-message>`);
    const m = new MessageHarness(el);
    expect(m.buttons.map((b) => b.textContent!.trim())).to.deep.equal(['Accept', 'Decline']);
    el.message = message({ cta: { action: { ...cta.action, status: 'done', result: { type: 'secondary' } } } });
    await el.updateComplete;
    expect(m.buttons).to.have.length(0);
    expect(m.result).to.equal('Declined');
  });

  it('hides the read toggle when the server has no mark-as endpoint', async () => {
    const store = { markRead: () => Promise.resolve(), markUnread: () => Promise.resolve(), remove: () => Promise.resolve() };
    const el = await fixture<NotifMessage>(
      html`<notif-message .message=${message()} .store=${store as never} .markAsSupported=${false}></notif-message>`,
    );
    const m = new MessageHarness(el);
    expect(m.controlNames).to.deep.equal(['Delete']);
    el.markAsSupported = true;
    await el.updateComplete;
    expect(m.controlNames).to.deep.equal(['Mark as read', 'Delete']);
    el.message = message({ read: true });
    await el.updateComplete;
    expect(m.controlNames).to.deep.equal(['Mark as unread', 'Delete']);
    expect(m.controls.every((b) => b.title === b.getAttribute('aria-label')), 'a tooltip beside each icon').to.equal(true);
  });

  it('cuts a long body after three lines, with "Show more" and "Show less" (keyboard, aria-expanded, German)', async () => {
    const long = Array(30).fill('A sentence that goes on and on.').join(' ');
    const el = await fixture<NotifMessage>(html`<notif-message .message=${message({ _id: 'long', content: long })}></notif-message>`);
    el.style.inlineSize = '320px';
    const root = el.shadowRoot!;
    const body = root.querySelector<HTMLElement>('[part~="body"]')!;
    const more = await waitFor(() => root.querySelector<HTMLButtonElement>('[part~="more-button"]'), '"Show more"');
    expect(more.textContent!.trim()).to.equal('Show more');
    expect(more.getAttribute('aria-expanded')).to.equal('false');
    expect(more.getAttribute('aria-controls')).to.equal(body.id);
    expect(body.scrollHeight, 'cut').to.be.greaterThan(body.clientHeight);
    const cutHeight = body.clientHeight;
    await expect(el).to.be.accessible();

    more.focus();
    await sendKeys({ press: 'Enter' });
    await el.updateComplete;
    expect(more.textContent!.trim()).to.equal('Show less');
    expect(more.getAttribute('aria-expanded')).to.equal('true');
    expect(body.clientHeight, 'whole').to.be.greaterThan(cutHeight);
    expect(body.scrollHeight).to.be.at.most(body.clientHeight);
    await expect(el).to.be.accessible();

    await sendKeys({ press: 'Space' });
    await el.updateComplete;
    expect(more.getAttribute('aria-expanded')).to.equal('false');
    expect(body.clientHeight).to.equal(cutHeight);

    registerTranslation(de);
    const german = await fixture<NotifMessage>(html`<notif-message locale="de" .message=${message({ _id: 'lang', content: long })}></notif-message>`);
    german.style.inlineSize = '320px';
    const mehr = await waitFor(() => german.shadowRoot!.querySelector('[part~="more-button"]'), '"Mehr anzeigen"');
    expect(mehr.textContent!.trim()).to.equal('Mehr anzeigen');
  });

  it('a body that fits its lines has no "Show more"', async () => {
    const el = await fixture<NotifMessage>(html`<notif-message .message=${message({ _id: 'short', content: 'Short and sweet' })}></notif-message>`);
    // Measured as laid out: two frames later it has been.
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await el.updateComplete;
    expect(el.shadowRoot!.querySelector('[part~="more-button"]')).to.equal(null);
  });

  it('joins text blocks as the body and makes initials from any script', () => {
    expect(messageBody(message({ content: [{ type: 'text', content: 'a' }, { content: 'b' }, { type: 'button', content: 'x' }] }))).to.equal('a\nb');
    expect(messageBody(message({ content: undefined }))).to.equal('');
    expect(initials('Ада Лавлейс')).to.equal('АЛ');
    expect(initials('  ')).to.equal('•');
    expect(initials('éclair au chocolat')).to.equal('ÉA');
  });

  it('formats counts and relative times through Intl', () => {
    const now = Date.parse('2025-03-01T12:00:00Z');
    expect(formatCount(5, 'en')).to.equal('5');
    expect(formatCount(100, 'en')).to.equal('99+');
    expect(formatCount(1500, 'de', 9999)).to.equal('1.500');
    expect(relativeTime(new Date(now - 2 * 3600_000), now, 'en')).to.equal('2h');
    expect(relativeTime(new Date(now - 26 * 3600_000), now, 'en')).to.equal('1d');
    expect(relativeTime(new Date(now - 8 * 86400_000), now, 'en')).to.equal('1w');
    expect(relativeTime(new Date(now - 26 * 3600_000), now, 'fr')).to.equal('1j');
    expect(relativeTime(new Date(now - 10_000), now, 'fr')).to.equal('maintenant');
    expect(relativeTime(new Date(now - 3 * 86400_000), now, 'not a locale!')).to.equal('3d');
  });

  it('registers a tag once and warns once when another version got there first', () => {
    const warn = sinon.stub(console, 'warn');
    try {
      class Other extends HTMLElement {
        static version = '0.0.1';
      }
      customElements.define('notif-test-other', Other);
      NotifElement.define('notif-test-other', class extends NotifElement {});
      NotifElement.define('notif-test-other', class extends NotifElement {});
      expect(warn.callCount).to.equal(1);
      expect(String(warn.firstCall.args[0])).to.contain('0.0.1');
      NotifMessage.define('notif-message');
      expect(customElements.get('notif-message')).to.equal(NotifMessage);
      expect(warn.callCount).to.equal(1);
    } finally {
      warn.restore();
    }
  });
});
