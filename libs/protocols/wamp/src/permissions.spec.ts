import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Permissions } from './permissions.js';

describe('role permissions', () => {
  it('the first matching rule decides; no match denies', () => {
    const p = new Permissions([
      { uri: 'com.app.admin', match: 'prefix', allow: [] },
      { uri: 'com.app.echo', match: 'exact', allow: ['call'] },
      { uri: 'com.app..status', match: 'wildcard', allow: ['subscribe'] },
      { uri: 'com.app.', match: 'prefix', allow: ['publish', 'subscribe'] },
    ]);
    assert.equal(p.allowsEverything, false);
    assert.equal(p.allows('call', 'com.app.echo'), true);
    assert.equal(p.allows('register', 'com.app.echo'), false);
    assert.equal(p.allows('call', 'com.app.admin.reset'), false);
    assert.equal(p.allows('subscribe', 'com.app.admin.x'), false);
    assert.equal(p.allows('subscribe', 'com.app.pump1.status'), true);
    assert.equal(p.allows('publish', 'com.app.pump1.status'), false, 'the wildcard rule came first');
    assert.equal(p.allows('publish', 'com.app.news'), true);
    assert.equal(p.allows('publish', 'org.other'), false);
    // Cached answers stay the same.
    assert.equal(p.allows('publish', 'com.app.news'), true);
    assert.equal(p.allows('publish', 'org.other'), false);
  });

  it("a first rule allowing everything on prefix '' is the open role", () => {
    const open = new Permissions([
      { uri: '', match: 'prefix', allow: ['call', 'register', 'publish', 'subscribe'] },
    ]);
    assert.equal(open.allowsEverything, true);
    assert.equal(open.allows('register', 'anything.at.all'), true);
    const none = new Permissions([]);
    assert.equal(none.allowsEverything, false);
    assert.equal(none.allows('call', 'a'), false);
  });
});
