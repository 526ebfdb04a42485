#!/usr/bin/env python3
"""tests/manager/serve_timeline.py - the timeline of `tapestry serve`'s job
page as headless Chromium dumped it (--dump-dom), checked against the job's
events as the API gives them one by one (GET .../timeline?w=4096 of the
whole job, every lane in "events" mode), not against the index's running
totals that the page's answers come from. Used by test_serve_browser.sh.

  serve_timeline.py DOM EVENTS.json find NAME
      the call the search landed on (#tl-found data-i) is the first, in
      (start, number) order, whose name holds NAME (any case), and
      data-matches counts them all
  serve_timeline.py DOM EVENTS.json range
      the selection's profile (#tl-profile, its data-t0/data-t1): per call,
      the calls that start in it or are under its start, their time cut at
      its edges
  serve_timeline.py DOM EVENTS.json ticks
      the tick labels (#tl-status data-ticks) are distinct; prints them
Exit 0 (printing what was checked), or 1 with the reason on stderr.
"""
import json
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = {}
        self.rows = []       # [call, calls, ns] of #tl-profile
        self.row = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if 'id' in a:
            self.ids[a['id']] = a
        if tag == 'tr' and 'data-call' in a:
            self.row = [a['data-call'], None, None]
            self.rows.append(self.row)
        if tag == 'td' and self.row is not None:
            if a.get('data-k') == 'ns':
                self.row[2] = int(a['data-v'])
            self.cell = a.get('data-k')

    def handle_data(self, data):
        if self.row is not None and getattr(self, 'cell', None) == 'calls' and data.strip():
            self.row[1] = int(data)
            self.cell = None


def events(path):
    d = json.load(open(path))
    names = d['names']
    out = []
    for lane in d['lanes']:
        if lane['mode'] != 'events':
            sys.exit('lane %d is not given event by event: the job is too big for this check' % lane['lane'])
        for i, s, e, t, c in lane['ev']:
            out.append((i, s, e, names[str(t)]))
    return out


def main():
    page = Page()
    page.feed(open(sys.argv[1], encoding='utf-8').read())
    evs = events(sys.argv[2])
    what = sys.argv[3]
    if what == 'find':
        q = sys.argv[4].lower()
        hits = sorted((s, i) for i, s, e, n in evs if q in n.lower())
        f = page.ids.get('tl-found', {})
        if not hits:
            sys.exit('no event holds %r: nothing to check' % q)
        want = (str(hits[0][1]), str(len(hits)))
        got = (f.get('data-i'), f.get('data-matches'))
        if got != want:
            sys.exit('search %r: page at event %s of %s matches, the events say %s of %s' % (q, *got, *want))
        print('first %r: event %s at %d ns, %d matches' % (q, want[0], hits[0][0], len(hits)))
    elif what == 'range':
        p = page.ids.get('tl-profile')
        if not p:
            sys.exit('no selection profile on the page')
        t0, t1 = int(p['data-t0']), int(p['data-t1'])
        want = {}
        for i, s, e, n in evs:
            if s > t1 or (s < t0 and e <= t0):
                continue
            k = want.setdefault(n, [0, 0])
            k[0] += 1
            k[1] += min(e, t1) - max(s, t0)
        got = {n: [c, ns] for n, c, ns in page.rows}
        if got != want:
            for n in sorted(set(got) | set(want)):
                if got.get(n) != want.get(n):
                    print('%s: page %s, events %s' % (n, got.get(n), want.get(n)), file=sys.stderr)
            sys.exit('the selection [%d, %d] differs' % (t0, t1))
        print('[%d, %d]: %d calls, %d names' % (t0, t1, sum(c for c, _ in want.values()), len(want)))
    elif what == 'ticks':
        ticks = page.ids.get('tl-status', {}).get('data-ticks', '').split('|')
        if len(ticks) < 2 or len(set(ticks)) != len(ticks):
            sys.exit('tick labels not distinct: %s' % ticks)
        print('|'.join(ticks))


main()
