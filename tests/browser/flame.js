// flame.js - drives flame graphs in headless Chromium for test_flamegraph_browser.py and
// reports what the browser shows as JSON; the Python test judges it.
//
//   node flame.js SPEC.json RESULT.json
//
// SPEC: { "graphs": [ { "url": "file:///...", "svg": "#css selector of the graph's <svg>" | null,
//                       "prefix": "" | "ga-", "click": INDEX, "searches": [ {"term": "...", "ic": false,
//                       "how": "button" | "key", "key": "/" | "F3" | "Control+f"} ], "hover": [INDEX...],
//                       "shot": "/path.png" | null } ] }
// Each graph is opened (graphs with the same url share one page load), the frames are listed as
// it opened and, after Reset zoom if it opened zoomed, as drawn; frame INDEX is clicked (a real mouse click), Reset zoom is clicked, then the zoom is made
// again and undone with Escape. Each search is typed as a user types it: into the search field
// after a click on it, or after its key ("/" by default, with the pointer over the graph), then
// Enter; then the field's clear button. The legend (android palette) and the controls (their
// boxes and colours as drawn) are reported as laid out.
"use strict";
const fs = require("fs");
const { launch, openPage, run } = require("./lib");

// In the page: the graph's frames and the elements the script drives.
function listFrames(sel, pfx) {
  const svg = sel ? document.querySelector(sel) : document.documentElement;
  const byId = (n) => svg.querySelector(`[id="${pfx}${n}"]`);
  const frames = [...byId("frames").children].map((g) => {
    const r = g.querySelector("rect");
    return { title: g.querySelector("title").textContent, x: r.getAttribute("x"), y: r.getAttribute("y"),
             width: r.getAttribute("width"), fill: r.getAttribute("fill"), hidden: g.classList.contains("hide"),
             parent: g.classList.contains("parent"), label: g.querySelector("text").textContent };
  });
  const field = byId("searchfield");
  return { frames, width: svg.width.baseVal.value, unzoomHidden: byId("unzoom").classList.contains("hide"),
           matched: byId("matched").textContent, matchedHidden: byId("matched").classList.contains("hide"),
           searchValue: field ? field.value : null,
           clearHidden: byId("searchclear") ? byId("searchclear").classList.contains("hide") : null,
           focused: document.activeElement === field, details: byId("details").textContent };
}

// In the page: each control as drawn (client box, its box's fill and border, its text's colour,
// the opacity it is drawn with, its text), the search field's input, and the title's box.
function listControls(sel, pfx) {
  const svg = sel ? document.querySelector(sel) : document.documentElement;
  const byId = (n) => svg.querySelector(`[id="${pfx}${n}"]`);
  const box = (e) => { const b = e.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width, h: b.height }; };
  const opacity = (e) => { let o = 1; for (; e && e.nodeType === 1; e = e.parentNode) o *= Number(getComputedStyle(e).opacity); return o; };
  const out = { svg: box(svg), title: box(byId("title")) };
  for (const id of ["search", "ignorecase", "unzoom", "searchclear"]) {
    const e = byId(id);
    if (!e) { out[id] = null; continue; }
    const r = e.localName === "rect" ? e : e.querySelector("rect");
    const t = e.localName === "text" ? e : [...e.querySelectorAll("text")].find((x) => getComputedStyle(x).display !== "none");
    out[id] = { box: box(r || e), fill: r ? getComputedStyle(r).fill : null, stroke: r ? getComputedStyle(r).stroke : null,
                text: t ? t.textContent : "", color: t ? getComputedStyle(t).fill : null, opacity: opacity(r || e),
                shown: getComputedStyle(e).display !== "none" };
  }
  const f = byId("searchfield");
  out.field = f ? { box: box(f), placeholder: f.getAttribute("placeholder"),
                    placeholderColor: getComputedStyle(f, "::placeholder").color, color: getComputedStyle(f).color,
                    opacity: opacity(f) } : null;
  return out;
}

// In the page: the android palette's legend as laid out (client boxes), and the frames' boxes.
function listLegend(sel, pfx) {
  const svg = sel ? document.querySelector(sel) : document.documentElement;
  const legend = svg.querySelector(`[id="${pfx}legend"]`);
  if (!legend) return null;
  const box = (e) => { const b = e.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width, h: b.height }; };
  return { svg: box(svg),
           texts: [...legend.querySelectorAll("text")].map((t) => ({ text: t.textContent, box: box(t),
                                                                     size: getComputedStyle(t).fontSize })),
           rects: [...legend.querySelectorAll("rect")].map((r) => ({ fill: r.getAttribute("fill"), box: box(r) })),
           frames: [...svg.querySelector(`[id="${pfx}frames"]`).children].map((g) => box(g.querySelector("rect"))) };
}

async function state(page, g) { return page.evaluate(listFrames, g.svg, g.prefix); }

async function element(page, g, what) {
  const handle = await page.evaluateHandle((sel, pfx, w) => {
    const svg = sel ? document.querySelector(sel) : document.documentElement;
    if (typeof w === "number") return svg.querySelector(`[id="${pfx}frames"]`).children[w].querySelector("rect");
    return svg.querySelector(`[id="${pfx}${w}"]`);
  }, g.svg, g.prefix, what);
  return handle.asElement();
}

async function driveGraph(page, g) {
  // the state the graph opened in (zoomed on main's tower when the writer marked it), then
  // every frame as drawn, after Reset zoom when it opened zoomed
  const opened = await state(page, g);
  if (g.shot && !opened.unzoomHidden) await page.screenshot({ path: g.shot.replace(/\.png$/, "-opened.png"), fullPage: true });
  if (!opened.unzoomHidden) await (await element(page, g, "unzoom")).click();
  const out = { opened, before: await state(page, g), legend: await page.evaluate(listLegend, g.svg, g.prefix),
                controls: await page.evaluate(listControls, g.svg, g.prefix) };
  if (g.click !== undefined && g.click !== null) {
    await (await element(page, g, g.click)).click();
    out.zoomed = await state(page, g);
    out.zoomedControls = await page.evaluate(listControls, g.svg, g.prefix);
    if (g.shot) await page.screenshot({ path: g.shot.replace(/\.png$/, "-zoomed.png"), fullPage: true });
    await (await element(page, g, "unzoom")).click();
    out.unzoomed = await state(page, g);
    await (await element(page, g, g.click)).click(); // again, undone with the key this time
    await page.keyboard.press("Escape");
    out.escaped = await state(page, g);
    if (!out.escaped.unzoomHidden) await (await element(page, g, "unzoom")).click(); // a graph Escape left zoomed
  }
  out.searches = [];
  for (const s of g.searches || []) {
    if (s.ic) await (await element(page, g, "ignorecase")).click();
    if (s.how === "key") {
      await (await element(page, g, "title")).click(); // the field (focused by a clear) lets go of the keys
      const frame = await element(page, g, 0); // keys go to the graph under the pointer
      await frame.hover();
      const keys = (s.key || "/").split("+"); // "Control+f": the modifier held
      for (const k of keys.slice(0, -1)) await page.keyboard.down(k);
      await page.keyboard.press(keys[keys.length - 1]);
      for (const k of keys.slice(0, -1).reverse()) await page.keyboard.up(k);
    } else {
      await (await element(page, g, "search")).click();
    }
    const focused = (await state(page, g)).focused;
    await page.keyboard.type(s.term);
    await page.keyboard.press("Enter");
    const found = await state(page, g);
    if (g.shot && !out.searches.length) await page.screenshot({ path: g.shot.replace(/\.png$/, "-search.png") });
    await (await element(page, g, "searchclear") || await element(page, g, "search")).click(); // the field's clear button
    const reset = await state(page, g);
    if (s.ic) await (await element(page, g, "ignorecase")).click();
    out.searches.push({ term: s.term, ic: !!s.ic, key: s.how === "key" ? s.key || "/" : null, focused, found, reset });
  }
  // a control from the keyboard: the ignore-case toggle focused, Enter, then Space back
  const ic = await element(page, g, "ignorecase");
  const icOn = async () => page.evaluate((e) => e.classList.contains("show"), ic);
  await page.evaluate((e) => e.focus(), ic); // an SVG element: focus() in the page
  await page.keyboard.press("Enter");
  out.icByKey = [await icOn()];
  await page.keyboard.press(" ");
  out.icByKey.push(await icOn());
  out.hovers = [];
  for (const i of g.hover || []) {
    await (await element(page, g, i)).hover();
    out.hovers.push({ index: i, details: (await state(page, g)).details });
  }
  if (g.shot) await page.screenshot({ path: g.shot, fullPage: true });
  out.after = await state(page, g);
  return out;
}

async function main(args) {
  const spec = JSON.parse(fs.readFileSync(args[0], "utf8"));
  const browser = await launch({ viewport: { width: 1300, height: 1000 } });
  const results = [];
  try {
    const pages = new Map();
    for (const g of spec.graphs) {
      if (!pages.has(g.url)) {
        const p = await openPage(browser, g.url);
        p.page.on("dialog", (d) => d.dismiss()); // a prompt() (a graph without a search field) answers nothing
        pages.set(g.url, p);
      }
      const { page, errors } = pages.get(g.url);
      const res = await driveGraph(page, g);
      res.pwned = await page.evaluate(() => [typeof window.pwned, document.querySelectorAll("img").length,
                                             document.querySelectorAll("script").length]);
      res.errors = errors.slice();
      results.push(res);
    }
  } finally {
    await browser.close();
  }
  return { results };
}

run(main);
