import { expect } from '@open-wc/testing';
import { SseLineParser, type SseItem } from '../../src/store/freshness/sse-lines.ts';

// The stream's parser on its own: text in, events and retries out, as the HTML standard reads an
// event stream. No server, no DOM.

/** What `pieces`, pushed one after the other into one parser, complete. */
function parse(...pieces: string[]): SseItem[] {
  const parser = new SseLineParser();
  return pieces.flatMap((piece) => parser.push(piece));
}

const event = (data: string, id?: string, name = 'message'): SseItem => ({ type: 'event', event: name, data, id });

describe('SseLineParser', () => {
  it('reads an event at the blank line that ends it, not before', () => {
    const parser = new SseLineParser();
    expect(parser.push('data: {"count":1}\n')).to.deep.equal([]);
    expect(parser.push('\n')).to.deep.equal([event('{"count":1}')]);
  });

  it('joins several data lines with a line feed into one event', () => {
    expect(parse('data: first\ndata: second\ndata:third\n\n')).to.deep.equal([event('first\nsecond\nthird')]);
  });

  it('takes one space after the colon away, and no more', () => {
    expect(parse('data:  two spaces\n\n')).to.deep.equal([event(' two spaces')]);
  });

  it('keeps the last id from event to event, and ignores an id holding NUL', () => {
    expect(parse('id: 7\ndata: a\n\ndata: b\n\nid: 8\0\ndata: c\n\nid: 9\ndata: d\n\n')).to.deep.equal([
      event('a', '7'),
      event('b', '7'),
      event('c', '7'),
      event('d', '9'),
    ]);
  });

  it('reads retry: in digits only, at once', () => {
    expect(parse('retry: 1000\n')).to.deep.equal([{ type: 'retry', milliseconds: 1000 }]);
    expect(parse('retry: 1e3\nretry: -5\nretry: 10 s\nretry:\n\n')).to.deep.equal([]);
  });

  it('ignores comments, unknown fields and blank lines without data', () => {
    expect(parse(':\n\n: heartbeat\nfoo: bar\n\n\ndata: x\n\n')).to.deep.equal([event('x')]);
  });

  it('names the event with event:, message otherwise', () => {
    expect(parse('event: count\ndata: 1\n\ndata: 2\n\n')).to.deep.equal([event('1', undefined, 'count'), event('2')]);
  });

  it('reads a field without a colon as that field with an empty value', () => {
    expect(parse('data\ndata\n\n')).to.deep.equal([event('\n')]);
  });

  it('ends lines at CRLF, CR and LF alike', () => {
    expect(parse('data: a\r\ndata: b\rdata: c\n\r\n')).to.deep.equal([event('a\nb\nc')]);
  });

  it('waits for the next piece when one ends between CR and LF', () => {
    expect(parse('data: a\r', '\ndata: b\r', '\n\r', '\n')).to.deep.equal([event('a\nb')]);
  });

  it('reads lines cut anywhere across pieces', () => {
    const text = 'retry: 1000\n\nid: 1\ndata: {"id":"1","count":2}\n\n: ping\n\nid: 2\ndata: {"id":"2"}\n\n';
    const whole = parse(text);
    for (let cut = 1; cut < text.length; cut++) expect(parse(text.slice(0, cut), text.slice(cut)), `cut at ${cut}`).to.deep.equal(whole);
    expect(whole).to.deep.equal([{ type: 'retry', milliseconds: 1000 }, event('{"id":"1","count":2}', '1'), event('{"id":"2"}', '2')]);
  });

  it('ends lines only at CR and LF: U+2028 and U+2029 are text', () => {
    expect(parse('data: a\u2028retry: 0\u2029b\n\n')).to.deep.equal([event('a\u2028retry: 0\u2029b')]);
  });
});
