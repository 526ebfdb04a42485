#!/usr/bin/env python3
"""tests/manager/serve_dom.py - checks on a page of `tapestry serve` as
headless Chromium dumped it (--dump-dom). Used by test_serve_browser.sh.

  serve_dom.py DOM ready           the page finished (body data-ready="1")
                                   and showed no error (no body data-errors)
  serve_dom.py DOM report XML      every element with data-x="/report/..."
                                   shows exactly that attribute of XML
                                   (tapestry report --xml); prints the count
  serve_dom.py DOM attr ID NAME    prints attribute NAME of the element ID
  serve_dom.py DOM count ATTR      prints how many elements carry ATTR
Exit 0, or 1 with the reason on stderr.
"""
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.body = {}
        self.ids = {}
        self.stack = []      # open elements: [attrs, text parts]
        self.cells = []      # (data-x, text) of closed elements
        self.attr_count = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in a:
            self.attr_count[k] = self.attr_count.get(k, 0) + 1
        if tag == 'body':
            self.body = a
        if 'id' in a:
            self.ids[a['id']] = a
        if tag in ('br', 'img', 'input', 'link', 'meta'):
            return
        self.stack.append([tag, a, []])

    def handle_endtag(self, tag):
        while self.stack:
            t, a, text = self.stack.pop()
            if 'data-x' in a:
                self.cells.append((a['data-x'], ''.join(text).strip()))
            if self.stack:
                self.stack[-1][2].extend(text)
            if t == tag:
                break

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][2].append(data)


def xpath_attr(root, path):
    """/report/stream[2]/@events -> the attribute, or None"""
    parts = path.strip('/').split('/')
    if parts[0] != root.tag:
        return None
    node = root
    for p in parts[1:-1]:
        name, idx = (p.split('[') + ['1]'])[:2]
        kids = [k for k in node if k.tag == name]
        i = int(idx.rstrip(']')) - 1
        if i >= len(kids):
            return None
        node = kids[i]
    return node.get(parts[-1].lstrip('@'))


def main():
    page = Page()
    with open(sys.argv[1], encoding='utf-8') as f:
        page.feed(f.read())
    what = sys.argv[2]
    if what == 'ready':
        if page.body.get('data-errors'):
            sys.exit('the page shows %s error(s)' % page.body['data-errors'])
        if page.body.get('data-ready') != '1':
            sys.exit('the page did not finish (data-ready=%r)' % page.body.get('data-ready'))
    elif what == 'report':
        root = ET.parse(sys.argv[3]).getroot()
        bad = [(x, t, xpath_attr(root, x)) for x, t in page.cells if xpath_attr(root, x) != t]
        for x, t, want in bad[:10]:
            print('%s: page %r, report %r' % (x, t, want), file=sys.stderr)
        if bad or not page.cells:
            sys.exit(1)
        print(len(page.cells))
    elif what == 'attr':
        print(page.ids.get(sys.argv[3], {}).get(sys.argv[4], ''))
    elif what == 'count':
        print(page.attr_count.get(sys.argv[3], 0))


main()
