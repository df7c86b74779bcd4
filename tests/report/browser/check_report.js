// Loads a ratchet HTML report in headless Chromium (Debian's /usr/bin/chromium,
// driven through the DevTools protocol by puppeteer-core) and checks it from
// the DOM against the transcript it was made from:
//   node check_report.js --page R.html --transcript T.jsonl --screenshot S.png
//        [--contains TEXT]... [--hostile]
// every host of the transcript's last run has its recap row, timeline row and
// section with its status; every step_end is a timeline bar and a step section
// with its status; the page made no request but for its own file:// document,
// logged no console error and raised no page error; with --hostile, no script
// ran (window.pwned unset, no dialog) and the page holds no <script>/<img>
// element. The timeline is read as drawn: no marker (rung, retry, reconnect,
// reboot) covers a bar's label, and every legend entry and bar label has a
// contrast of 4.5:1 or more against what is behind it (each colour of a
// pattern). Prints one JSON line {ok, load_ms, problems, ...}; exit 0 when ok.
'use strict';
const fs = require('fs');
const path = require('path');
const url = require('url');
const puppeteer = require('puppeteer-core');

function parseArgs(argv) {
  const a = { contains: [], hostile: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--hostile') a.hostile = true;
    else if (k === '--contains') a.contains.push(argv[++i]);
    else if (k.startsWith('--')) a[k.slice(2)] = argv[++i];
    else throw new Error(`unknown argument ${k}`);
  }
  for (const need of ['page', 'transcript', 'screenshot'])
    if (!a[need]) throw new Error(`--${need} is required`);
  return a;
}

// The last run of the transcript: its hosts (targets, then any seen), each
// host's host_end status and its steps' step_end statuses, in order.
function expected(transcriptPath) {
  const lines = fs.readFileSync(transcriptPath, 'utf8').split('\n');
  let run = null;
  for (const line of lines) {
    let e;
    try { e = JSON.parse(line); } catch (_) { continue; }  // a cut last line
    if (e.event === 'run_start') run = { hosts: new Map(), ended: false, targets: e.targets || [] };
    if (!run) continue;
    const host = (h) => {
      if (!run.hosts.has(h)) run.hosts.set(h, { status: '', steps: [] });
      return run.hosts.get(h);
    };
    if (e.event === 'run_start') for (const t of run.targets) host(t);
    if (e.event === 'step_end') host(e.host).steps.push({ id: e.step, status: e.status });
    if (e.event === 'host_end') host(e.host).status = e.status;
    if (e.event === 'run_end') run.ended = true;
  }
  if (!run) throw new Error(`${transcriptPath}: no run_start`);
  return run;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const want = expected(args.transcript);
  const pageUrl = url.pathToFileURL(path.resolve(args.page)).href;
  const problems = [];
  const requests = [], consoleErrors = [], dialogs = [];
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // root in CI: no sandbox; nothing else is loaded than the local page
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let result;
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 800 });
    await page.setRequestInterception(true);
    page.on('request', (r) => {
      requests.push(r.url());
      if (r.url() === pageUrl) r.continue(); else r.abort();
    });
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (err) => consoleErrors.push(`page error: ${err.message}`));
    page.on('dialog', async (d) => { dialogs.push(`${d.type()}: ${d.message()}`); await d.dismiss(); });
    const t0 = Date.now();
    await page.goto(pageUrl, { waitUntil: 'load', timeout: 20000 });
    const loadMs = Date.now() - t0;
    const dom = await page.evaluate(() => {
      const text = (el) => (el ? el.textContent.trim() : null);
      const hosts = {};
      for (const tr of document.querySelectorAll('#recap tr[data-host]'))
        hosts[tr.dataset.host] = { recap: text(tr.querySelector('.badge')), rows: 0, bars: 0, steps: [] };
      for (const row of document.querySelectorAll('#timeline .row[data-host]')) {
        const h = hosts[row.dataset.host];
        if (!h) continue;
        h.rows++;
        h.bars = row.querySelectorAll('.bar').length;
        h.barStatuses = [...row.querySelectorAll('.bar')].map((b) => b.className.replace('bar ', ''));
      }
      for (const sec of document.querySelectorAll('section.host[data-host]')) {
        const h = hosts[sec.dataset.host];
        if (!h) continue;
        h.section = text(sec.querySelector('h3 .badge'));
        h.steps = [...sec.querySelectorAll('details.step')].map((d) => ({
          id: d.dataset.step, status: d.dataset.status, badge: text(d.querySelector('summary .badge')) }));
      }
      return {
        hosts,
        chain: document.getElementById('chain') && document.getElementById('chain').dataset.chain,
        exitStatus: text(document.getElementById('exit-status')),
        cut: !!document.getElementById('cut'),
        scripts: document.querySelectorAll('script').length,
        imgs: document.querySelectorAll('img').length,
        handlers: [...document.querySelectorAll('*')].filter((el) =>
          [...el.attributes].some((a) => a.name.startsWith('on'))).length,
        pwned: typeof window.pwned !== 'undefined' ? String(window.pwned) : null,
        bodyText: document.body.textContent,  // closed <details> too
        navMs: performance.getEntriesByType('navigation')[0].loadEventEnd,
      };
    });
    // The timeline as drawn: markers beside labels, never over them; text readable.
    const drawn = await page.evaluate(() => {
      const out = { marks: 0, labels: 0, overlaps: [], texts: 0, lowContrast: [], minContrast: null };
      const area = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
                             Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
      for (const row of document.querySelectorAll('#timeline .row')) {
        // A label shows only inside its bar (overflow hidden): its visible part.
        const labels = [...row.querySelectorAll('.bar .label')].map((l) => {
          const r = l.getBoundingClientRect(), b = l.parentElement.getBoundingClientRect();
          return { text: l.textContent, rect: { left: Math.max(r.left, b.left), right: Math.min(r.right, b.right),
                                                top: Math.max(r.top, b.top), bottom: Math.min(r.bottom, b.bottom) } };
        });
        out.labels += labels.length;
        for (const m of row.querySelectorAll('.mark')) {
          out.marks++;
          const mr = m.getBoundingClientRect();
          for (const l of labels)
            if (area(mr, l.rect) > 0) out.overlaps.push(`${m.textContent} (${m.title}) over the label "${l.text}"`);
        }
      }
      // WCAG 2 contrast of an element's text against each colour behind it.
      const colors = (str) => [...str.matchAll(/rgba?\(([^)]*)\)/g)].map((m) => {
        const v = m[1].split(',').map(Number);
        return { r: v[0], g: v[1], b: v[2], a: v.length > 3 ? v[3] : 1 };
      });
      const lum = (c) => {
        const f = (x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); };
        return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
      };
      const contrast = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
      const behind = (el) => {
        for (let e = el; e; e = e.parentElement) {
          const cs = getComputedStyle(e);
          const pattern = cs.backgroundImage !== 'none' ? colors(cs.backgroundImage) : [];
          if (pattern.length) return pattern;
          const bg = colors(cs.backgroundColor)[0];
          if (bg && bg.a > 0) return [bg];
        }
        return [{ r: 255, g: 255, b: 255, a: 1 }];
      };
      for (const el of document.querySelectorAll('#timeline .legend .key, #timeline .legend .mk, #timeline .bar .label')) {
        if (!el.textContent.trim()) continue;
        out.texts++;
        const fg = colors(getComputedStyle(el).color)[0];
        const c = Math.min(...behind(el).map((bg) => contrast(fg, bg)));
        out.minContrast = out.minContrast === null ? c : Math.min(out.minContrast, c);
        if (c < 4.5) out.lowContrast.push(`"${el.textContent.trim()}" ${c.toFixed(2)}:1`);
      }
      return out;
    });
    for (const o of drawn.overlaps) problems.push(`timeline: marker ${o}`);
    for (const t of drawn.lowContrast) problems.push(`timeline: text below 4.5:1 contrast: ${t}`);
    if (drawn.texts === 0) problems.push('timeline: no legend entry or bar label found');
    // Every host and step of the transcript, with its status, in three places.
    for (const [name, h] of want.hosts) {
      const d = dom.hosts[name];
      if (!d) { problems.push(`host ${name}: no recap row`); continue; }
      const status = h.status || 'no host_end';
      if (d.recap !== status) problems.push(`host ${name}: recap says ${d.recap}, transcript ${status}`);
      if (d.rows !== 1) problems.push(`host ${name}: ${d.rows} timeline rows`);
      if ((h.status || 'no host_end recorded') !== d.section) problems.push(`host ${name}: section says ${d.section}`);
      const ended = d.steps.filter((s) => s.status !== '');
      if (ended.length !== h.steps.length)
        problems.push(`host ${name}: ${ended.length} ended steps on the page, ${h.steps.length} in the transcript`);
      h.steps.forEach((s, k) => {
        const p = ended[k];
        if (!p || p.id !== s.id || p.status !== s.status || p.badge !== s.status)
          problems.push(`host ${name} step ${k}: page ${JSON.stringify(p)}, transcript ${JSON.stringify(s)}`);
        if (!d.barStatuses || !d.barStatuses.includes(`st-${s.status}`))
          problems.push(`host ${name} step ${s.id}: no ${s.status} bar on the timeline`);
      });
      if (d.bars !== d.steps.length) problems.push(`host ${name}: ${d.bars} bars for ${d.steps.length} steps`);
    }
    for (const name of Object.keys(dom.hosts))
      if (!want.hosts.has(name)) problems.push(`host ${name} is on the page, not in the transcript`);
    if (!want.ended && !dom.cut) problems.push('the run has no run_end but the page does not say it is cut');
    const others = requests.filter((r) => r !== pageUrl);
    if (others.length) problems.push(`requests beyond the page itself: ${others.join(' ')}`);
    if (requests.length !== 1) problems.push(`${requests.length} requests (want exactly the page)`);
    if (consoleErrors.length) problems.push(`console errors: ${consoleErrors.join(' | ')}`);
    if (dialogs.length) problems.push(`dialogs: ${dialogs.join(' | ')}`);
    if (dom.scripts) problems.push(`${dom.scripts} <script> elements`);
    if (args.hostile) {
      if (dom.pwned !== null) problems.push(`a script ran: window.pwned = ${dom.pwned}`);
      if (dom.imgs) problems.push(`${dom.imgs} <img> elements`);
      if (dom.handlers) problems.push(`${dom.handlers} elements with an on* attribute`);
    }
    for (const t of args.contains)
      if (!dom.bodyText.includes(t)) problems.push(`the page text lacks ${JSON.stringify(t)}`);
    await page.screenshot({ path: args.screenshot, fullPage: !!process.env.FULL_PAGE });
    result = { ok: problems.length === 0, load_ms: loadMs, nav_load_ms: Math.round(dom.navMs),
               hosts: Object.keys(dom.hosts).length, chain: dom.chain, exit_status: dom.exitStatus,
               requests: requests.length, marks: drawn.marks, labels: drawn.labels,
               min_contrast: drawn.minContrast === null ? null : Number(drawn.minContrast.toFixed(2)), problems };
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(result));
  process.exit(result.ok ? 0 : 1);
}

main().catch((err) => {
  console.log(JSON.stringify({ ok: false, problems: [`error: ${err && err.stack ? err.stack : err}`] }));
  process.exit(1);
});
