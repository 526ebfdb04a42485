#!/usr/bin/env python3
"""tests/manager/serve_cdp.py - drives headless Chromium through the DevTools
protocol (a WebSocket client of a few lines, no module to install) for
test_serve_browser.sh: opens the launch view of a description, waits for its
plan, clicks Launch, follows the launch and waits until the page lands on the
new job's page; fails on any console error, uncaught exception or error the
browser logs (a failed request included).

  serve_cdp.py CHROMIUM URL SCREENSHOT.png TIMEOUT_S [form]
Prints the job's hash route; exit 0, or 1 with the reason on stderr.
With "form", the launch form first: a bad process count and an unknown
host are shown as errors of their fields (nothing saved), then 2 processes
are saved as a new description, whose plan is shown before its Launch is
clicked (its screenshot SCREENSHOT-form.png).
"""
import base64
import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request


class WS:
    def __init__(self, url):
        m = re.match(r'ws://([^:/]+):(\d+)(/.*)', url)
        self.s = socket.create_connection((m.group(1), int(m.group(2))), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(('GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\n'
                        'Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n'
                        'Sec-WebSocket-Version: 13\r\n\r\n'
                        % (m.group(3), m.group(1), m.group(2), key)).encode())
        head = b''
        while b'\r\n\r\n' not in head:
            head += self.s.recv(1)
        if b' 101 ' not in head.split(b'\r\n')[0]:
            raise RuntimeError('no websocket: %r' % head)

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        hdr = bytes([0x81])
        if n < 126:
            hdr += bytes([0x80 | n])
        elif n < 65536:
            hdr += bytes([0x80 | 126]) + struct.pack('>H', n)
        else:
            hdr += bytes([0x80 | 127]) + struct.pack('>Q', n)
        self.s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n):
        b = b''
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise RuntimeError('websocket closed')
            b += c
        return b

    def recv(self):
        msg = b''
        while True:
            h = self._exact(2)
            n = h[1] & 0x7f
            if n == 126:
                n = struct.unpack('>H', self._exact(2))[0]
            elif n == 127:
                n = struct.unpack('>Q', self._exact(8))[0]
            msg += self._exact(n)
            if h[0] & 0x80:
                return msg.decode()


class Page:
    def __init__(self, ws):
        self.ws, self.id, self.problems = ws, 0, []

    def call(self, method, **params):
        self.id += 1
        self.ws.send(json.dumps({'id': self.id, 'method': method, 'params': params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get('id') == self.id:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error']))
                return m.get('result', {})
            self.event(m)

    def event(self, m):
        meth, p = m.get('method'), m.get('params', {})
        if meth == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert', 'warning'):
            self.problems.append('console.%s: %s' % (p['type'], [a.get('value') for a in p.get('args', [])]))
        elif meth == 'Runtime.exceptionThrown':
            self.problems.append('exception: %s' % p['exceptionDetails'].get('text'))
        elif meth == 'Log.entryAdded' and p['entry'].get('level') == 'error':
            self.problems.append('log: %s %s' % (p['entry'].get('text'), p['entry'].get('url', '')))

    def js(self, expr):
        r = self.call('Runtime.evaluate', expression=expr, returnByValue=True)
        return r.get('result', {}).get('value')

    def wait(self, expr, timeout):
        end = time.time() + timeout
        while time.time() < end:
            v = self.js(expr)
            if v:
                return v
            time.sleep(0.2)
        raise RuntimeError('timed out waiting for %s' % expr)


def form(page, shot):
    """The launch form: two refusals shown on their fields, then a copy
    with 2 processes saved and planned (the page on its launch view)."""
    q = "document.querySelector"
    page.wait("!!" + q + "('#f-np')", 30)
    page.js(q + "('#f-np').value = '0'; " + q + "('#lf').requestSubmit()")
    msg = page.wait("document.body.dataset.formError === 'processes' && "
                    + q + "('.field-err[data-field=\"processes\"]').textContent", 30)
    if 'whole number' not in msg:
        raise RuntimeError('bad process count shown as %r' % msg)
    page.js(q + "('#f-np').value = '2'; " + q + "('#f-addhost').click(); "
            "[...document.querySelectorAll('#f-hosts .h-name')].pop().value = 'ghost'; "
            + q + "('#lf').requestSubmit()")
    msg = page.wait("document.body.dataset.formError === 'host' && "
                    + q + "('.field-err[data-field=\"host\"]').textContent", 30)
    if 'unknown host' not in msg:
        raise RuntimeError('unknown host shown as %r' % msg)
    page.js("[...document.querySelectorAll('#f-hosts tr[data-host=\"\"]')].forEach(t => t.remove()); "
            + q + "('#lf').requestSubmit()")
    page.wait("location.hash.startsWith('#/launch/') && location.hash.includes('?from=') && "
              "document.body.dataset.ready === '1' && " + q + "('#saved-from') && "
              + q + "('#go') && !" + q + "('#go').disabled && " + q + "('#f-np').value === '2'", 60)
    png = page.call('Page.captureScreenshot', format='png')['data']
    with open(shot.replace('.png', '-form.png'), 'wb') as f:
        f.write(base64.b64decode(png))


def main():
    chromium, url, shot, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    prof = tempfile.mkdtemp(prefix='tapestry-cdp-')
    proc = subprocess.Popen([chromium, '--headless', '--no-sandbox', '--disable-gpu',
                             '--user-data-dir=' + prof, '--remote-debugging-port=0',
                             '--window-size=1400,1200', 'about:blank'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:
            m = re.search(r'DevTools listening on (ws://\S+)', line)
            if m:
                break
        # keep reading its messages, or a full pipe would stop it
        threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
        port = re.match(r'ws://[^:]+:(\d+)/', m.group(1)).group(1)
        targets = json.load(urllib.request.urlopen('http://127.0.0.1:%s/json/list' % port))
        page = Page(WS([t for t in targets if t['type'] == 'page'][0]['webSocketDebuggerUrl']))
        for d in ('Runtime', 'Log', 'Page'):
            page.call(d + '.enable')
        page.call('Page.navigate', url=url)
        page.wait("document.body && document.body.dataset.ready === '1' && "
                  "document.querySelector('#go') && !document.querySelector('#go').disabled", 60)
        if len(sys.argv) > 5 and sys.argv[5] == 'form':
            form(page, shot)
        page.js("document.querySelector('#go').click()")
        page.wait("location.hash.startsWith('#/run/')", 30)
        job = page.wait("location.hash.startsWith('#/job/') && document.body.dataset.ready === '1'"
                        " && document.querySelector('#tl-status') && "
                        "document.querySelector('#tl-status').dataset.lanes && location.hash", timeout)
        try:
            page.wait("!!document.querySelector('[data-x=\"/report/@events\"]')", 60)
        except RuntimeError:
            sys.exit("no report figures: %s / %s" % (page.js("document.querySelector('#job-figs').innerHTML"), page.js("document.querySelector('#errors').textContent")))
        png = page.call('Page.captureScreenshot', format='png')['data']
        with open(shot, 'wb') as f:
            f.write(base64.b64decode(png))
        errors = page.js('document.body.dataset.errors')
        if errors:
            page.problems.append('the page shows %s error(s): %s' % (errors, page.js("document.querySelector('#errors').textContent")))
        if len(sys.argv) > 5 and sys.argv[5] == 'form':
            # the two refusals the form was made to show: Chromium logs each
            page.problems = [p for p in page.problems
                             if not ('status of 400' in p and p.endswith('/io.xml/edit'))]
        if page.problems:
            sys.exit('\n'.join(page.problems))
        print(job)
    finally:
        proc.terminate()
        proc.wait()
        subprocess.run(['rm', '-rf', prof])


main()
