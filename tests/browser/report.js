// report.js - drives the HTML profile report (report --html) in headless Chromium for
// test_report_html_browser.py and reports what the browser shows as JSON; the Python test judges.
//
//   node report.js SPEC.json RESULT.json
//
// SPEC: { "url": "file:///...report.html", "sorts": [COLUMN...], "search": "regex", "shot": "/x.png" }
// With JavaScript: every CSP violation (securitypolicyviolation events, listened to before the page
// loads) and console error is recorded; each column header in "sorts" is clicked twice (real mouse
// clicks) and the column's cells and aria-sort are read after each click; the first method's
// <summary> is clicked and its parents/children table read; a parent/child link is clicked; the
// wall flame graph's frames are read, one is clicked (zoom) and a search is typed into its field.
// Without JavaScript: the same page's tables, and a <summary> still opens its <details>.
// First, the call-tree view (treeView): rows read at first, after opening one with the mouse and
// one with the keyboard, in bottom-up (roots, then opened), for one thread (spec.thread: the
// picker's option), with spec.filter typed; the page's width and wrapped names at each step.
// The window is 1366x768.
"use strict";
const fs = require("fs");
const { launch, openPage, run } = require("./lib");

const ALL = "section#all table.prof";

function column(sel, col) {
  const t = document.querySelector(sel);
  const cells = [...t.tBodies[0].rows].map((r) => {
    const c = r.cells[col];
    const n = c.querySelector(".name");
    return (n || c).textContent;
  });
  const idx = [...t.tBodies[0].rows].map((r) => r.cells[0].textContent);
  return { cells, idx, sort: [...t.tHead.rows[0].cells].map((th) => th.getAttribute("aria-sort")) };
}

function frames(pfx) {
  const svg = document.getElementById(pfx.slice(0, -1));
  const byId = (n) => svg.querySelector(`[id="${pfx}${n}"]`);
  return {
    frames: [...byId("frames").children].map((g) => {
      const r = g.querySelector("rect");
      return { title: g.querySelector("title").textContent, x: r.getAttribute("x"), y: r.getAttribute("y"),
               width: r.getAttribute("width"), hidden: g.classList.contains("hide") };
    }),
    width: svg.width.baseVal.value, matched: byId("matched").textContent,
    unzoomHidden: byId("unzoom").classList.contains("hide"), details: byId("details").textContent,
  };
}

// The call-tree view (section#tree): its rows as the browser shows them, the layout's width,
// and whether a name wraps onto a second line (a name is one line: cut with an ellipsis).
function treeRows() {
  const rows = [...document.querySelectorAll("#pv-rows > tr[role=row]")];
  return rows.map((r) => {
    const c = [...r.cells].map((x) => x.textContent);
    return { level: +r.getAttribute("aria-level"), expanded: r.getAttribute("aria-expanded"),
             name: r.querySelector(".name").textContent, cells: c.slice(1) };
  });
}

function layout() {
  const names = [...document.querySelectorAll("#pv-rows .name, table.prof .name, table.edges .name")]
    .filter((e) => e.getClientRects().length > 0).slice(0, 400);
  const wrapped = names.filter((e) => {
    const fs = parseFloat(getComputedStyle(e).fontSize);
    const lines = new Set([...e.getClientRects()].map((r) => Math.round(r.top))); // an ellipsis splits a line's box
    return lines.size > 1 || e.getBoundingClientRect().height > 1.9 * fs;
  }).map((e) => e.textContent);
  return { scrollWidth: document.documentElement.scrollWidth, names: names.length, wrapped: wrapped.slice(0, 5) };
}

async function treeView(page, spec) {
  const out = { present: await page.evaluate(() => !!document.getElementById("pv-rows") &&
                                                    !document.getElementById("pv").hidden) };
  if (!out.present) return out;
  const settle = () => new Promise((r) => setTimeout(r, 300));
  out.layout = [await page.evaluate(layout)];
  out.initial = await page.evaluate(treeRows);
  // open the first collapsed row with the mouse, the next with the keyboard (ArrowRight)
  const closed = async () => page.$$("#pv-rows > tr[aria-expanded=false]");
  let c = await closed();
  if (c.length) { await c[0].click(); }
  c = await closed();
  if (c.length) { await c[c.length - 1].focus(); await page.keyboard.press("ArrowRight"); }
  out.expanded = await page.evaluate(treeRows);
  out.focused = await page.evaluate(() => { const a = document.activeElement;
                                             return a && a.dataset ? a.dataset.id || null : null; });
  out.layout.push(await page.evaluate(layout));
  // bottom-up: the roots, the first one opened, its first child opened
  await page.click("#pv-bu");
  out.bottomUp = [await page.evaluate(treeRows)];
  for (let i = 0; i < 2; i++) {
    c = await closed();
    if (!c.length) break;
    await c[0].click();
    out.bottomUp.push(await page.evaluate(treeRows));
  }
  out.layout.push(await page.evaluate(layout));
  // one thread, both views
  const opts = await page.$$eval("#pv-thread option", (o) => o.map((x) => [x.value, x.textContent]));
  out.threadOptions = opts;
  if (opts.length > 2) {
    await page.select("#pv-thread", opts[spec.thread || 1][0]);
    out.threadBottomUp = await page.evaluate(treeRows);
    await page.click("#pv-td");
    out.threadTopDown = await page.evaluate(treeRows);
    await page.select("#pv-thread", "-1");
  }
  // the filter, typed, in both views
  await page.click("#pv-td");
  await page.type("#pv-filter", spec.filter);
  await settle();
  out.filterTopDown = await page.evaluate(treeRows);
  await page.click("#pv-bu");
  c = await closed();
  if (c.length) await c[0].click();
  out.filterBottomUp = await page.evaluate(treeRows);
  out.layout.push(await page.evaluate(layout));
  await page.click("#pv-td");
  if (spec.shot) await page.screenshot({ path: spec.shot.replace(/\.png$/, "-tree.png") });
  return out;
}

async function withScript(browser, spec) {
  const out = {};
  const page = await browser.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => errors.push(`requestfailed: ${r.url()}`));
  await page.evaluateOnNewDocument(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation",
      (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`));
  });
  await page.goto(spec.url, { waitUntil: "load", timeout: 60000 });
  out.tree = await treeView(page, spec);
  out.first = await page.evaluate(column, ALL, 0);
  out.buttons = await page.evaluate(() => document.querySelectorAll("table.prof th button").length);
  out.sorts = [];
  for (const col of spec.sorts) {
    const clicks = [];
    for (let i = 0; i < 2; i++) {
      const b = await page.$(`${ALL} > thead th:nth-child(${col + 1}) button`);
      await b.click();
      clicks.push(await page.evaluate(column, ALL, col));
    }
    out.sorts.push({ col, clicks });
  }
  // back to the report order (index ascending), then open the first method
  const idx = await page.$(`${ALL} > thead th:nth-child(1) button`);
  await idx.click();
  await idx.click();
  out.reordered = await page.evaluate(column, ALL, 0);
  const summary = await page.$(`${ALL} > tbody > tr:first-child > td.m > details > summary`);
  out.openedBefore = await page.evaluate((s) => s.parentElement.open, summary);
  await summary.click();
  out.opened = await page.evaluate((s) => {
    const d = s.parentElement, t = d.querySelector("table.edges");
    return { open: d.open, visible: !!t && t.getBoundingClientRect().height > 0,
             scrollWidth: document.documentElement.scrollWidth,
             rows: t ? [...t.rows].map((r) => [...r.cells].map((c) => c.textContent)) : [] };
  }, summary);
  // a link in the lists leads to that method's row, opened: the first row whose lists have one
  const n = await page.evaluate((sel) => [...document.querySelector(sel).tBodies[0].rows]
    .findIndex((r) => r.querySelector("table.edges a.to")), ALL);
  if (n >= 0) {
    const row = `${ALL} > tbody > tr:nth-child(${n + 1})`;
    if (n > 0) await (await page.$(`${row} > td.m > details > summary`)).click();
    const link = await page.$(`${row} table.edges a.to`);
    const target = await page.evaluate((a) => a.getAttribute("href").slice(1), link);
    await link.click();
    out.link = await page.evaluate((id) => {
      const r = document.getElementById(id), d = r && r.querySelector("td.m > details");
      return { id, found: !!r, open: !!d && d.open, hash: location.hash };
    }, target);
  }
  out.threadsOpen = await page.evaluate(() => [...document.querySelectorAll("details.thread")].map((d) => d.open));
  // the wall flame graph: as it opened (zoomed on main's tower when that is a sliver; then Reset
  // zoom), a zoom on a frame, a search
  out.flameOpened = await page.evaluate(frames, "fg-wall-");
  if (!out.flameOpened.unzoomHidden) await (await page.$('[id="fg-wall-unzoom"]')).click();
  out.flame = await page.evaluate(frames, "fg-wall-");
  if (spec.click !== undefined) {
    const rect = await page.evaluateHandle((i) =>
      document.querySelector('[id="fg-wall-frames"]').children[i].querySelector("rect"), spec.click);
    await rect.asElement().click();
    out.zoomed = await page.evaluate(frames, "fg-wall-");
  }
  const unzoom = await page.$('[id="fg-wall-unzoom"]');
  if (spec.click !== undefined) await unzoom.click();
  await (await page.$('[id="fg-wall-search"]')).click(); // the search field: typed into, as a user does
  await page.keyboard.type(spec.search);
  await page.keyboard.press("Enter");
  out.searched = await page.evaluate(frames, "fg-wall-");
  if (spec.shot) await page.screenshot({ path: spec.shot, fullPage: false });
  out.csp = await page.evaluate(() => window.__csp);
  out.pwned = await page.evaluate(() => [typeof window.pwned, document.querySelectorAll("img").length,
                                         document.querySelectorAll("script:not([type='application/json'])").length,
                                         document.querySelectorAll("script[type='application/json']").length]);
  out.errors = errors;
  await page.close();
  return out;
}

async function withoutScript(browser, spec) {
  const { page, errors } = await openPage(browser);
  await page.setJavaScriptEnabled(false);
  await page.goto(spec.url, { waitUntil: "load", timeout: 60000 });
  const out = await page.evaluate((sel) => {
    const t = document.querySelector(sel);
    return { rows: t ? t.tBodies[0].rows.length : 0, visible: !!t && t.getBoundingClientRect().height > 100,
             buttons: document.querySelectorAll("th button").length,
             threads: document.querySelectorAll("details.thread table.prof").length };
  }, ALL);
  const summary = await page.$(`${ALL} > tbody > tr:first-child > td.m > details > summary`);
  await summary.click();
  out.opened = await page.evaluate((s) => {
    const t = s.parentElement.querySelector("table.edges");
    return s.parentElement.open && !!t && t.getBoundingClientRect().height > 0;
  }, summary);
  if (spec.shot) await page.screenshot({ path: spec.shot.replace(/\.png$/, "-nojs.png") });
  out.errors = errors;
  await page.close();
  return out;
}

// spec.openingOnly: the tab the page opens on and the rows it shows then (report --html --reverse).
async function opening(browser, spec) {
  const page = await browser.newPage();
  await page.goto(spec.url, { waitUntil: "load", timeout: 60000 });
  const out = { tab: await page.evaluate(() => {
    const t = document.querySelector("[role=tab][aria-selected=true]");
    return t ? t.id : null;
  }), rows: await page.evaluate(treeRows) };
  await page.close();
  return out;
}

// --callers: the section's rows as drawn (the name cut to its column, the whole in the text) and
// whether the page still fits the window
async function callers(browser, spec) {
  const page = await browser.newPage();
  await page.goto(spec.url, { waitUntil: "load", timeout: 60000 });
  const out = await page.evaluate(() => {
    const rows = [...document.querySelectorAll("#callers tbody tr")].map((tr) => {
      const m = tr.querySelector("td.m"), box = m.getBoundingClientRect();
      return { cells: [...tr.children].map((td) => td.textContent), nameWidth: box.width,
               cut: m.scrollWidth > m.clientWidth, right: tr.getBoundingClientRect().right };
    });
    return { rows, scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth };
  });
  if (spec.shot) await (await page.$("#callers")).screenshot({ path: spec.shot });
  await page.close();
  return out;
}

async function main(args) {
  const spec = JSON.parse(fs.readFileSync(args[0], "utf8"));
  const browser = await launch({ viewport: { width: 1366, height: 768 } }); // a common laptop screen
  try {
    if (spec.openingOnly) return { opening: await opening(browser, spec) };
    if (spec.callersOnly) return { callers: await callers(browser, spec) };
    return { js: await withScript(browser, spec), nojs: await withoutScript(browser, spec) };
  } finally {
    await browser.close();
  }
}

run(main);
