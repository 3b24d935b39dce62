import { expect } from '@open-wc/testing';
import { navigationIndex } from '../../src/internal/list-navigation.ts';

// The index arithmetic the feed's list and tabs share (each widget has its own key handler).

describe('navigationIndex', () => {
  const list = { orientation: 'vertical', wrap: false } as const;
  const tabs = { orientation: 'horizontal', wrap: true } as const;

  it('moves down and up a list, and stops at its ends', () => {
    expect(navigationIndex('ArrowDown', 0, 3, list)).to.equal(1);
    expect(navigationIndex('ArrowUp', 1, 3, list)).to.equal(0);
    expect(navigationIndex('ArrowUp', 0, 3, list)).to.equal(undefined);
    expect(navigationIndex('ArrowDown', 2, 3, list)).to.equal(undefined);
  });

  it('goes to the first and last with Home and End', () => {
    expect(navigationIndex('Home', 2, 3, list)).to.equal(0);
    expect(navigationIndex('End', 0, 3, list)).to.equal(2);
    expect(navigationIndex('End', 0, 0, list)).to.equal(undefined);
  });

  it('wraps around a tab list with the horizontal arrows', () => {
    expect(navigationIndex('ArrowRight', 1, 2, tabs)).to.equal(0);
    expect(navigationIndex('ArrowLeft', 0, 2, tabs)).to.equal(1);
    expect(navigationIndex('ArrowRight', 0, 3, tabs)).to.equal(1);
  });

  it('leaves other keys, and the other orientation\'s arrows, alone', () => {
    expect(navigationIndex('ArrowLeft', 1, 3, list)).to.equal(undefined);
    expect(navigationIndex('ArrowDown', 0, 2, tabs)).to.equal(undefined);
    expect(navigationIndex('Enter', 0, 2, tabs)).to.equal(undefined);
  });

  it('starts a list from its first item when no item holds the focus', () => {
    expect(navigationIndex('ArrowDown', -1, 3, list)).to.equal(0);
  });
});
