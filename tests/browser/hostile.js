// hostile.js - opens outputs that carry hostile names (test_hostile_markup_browser.py) in
// headless Chromium with the Content-Security-Policy bypassed (a page's CSP must not be what
// keeps a name from running) and reports what the browser made of each, as JSON.
//
//   node hostile.js SPEC.json RESULT.json
//
// SPEC: { "pages": [ { "url": "file:///...html" | "http://...", "wait": ms } ] }
// Per page and per frame of it: window.pwned (every payload sets it), the elements a payload
// would create (img, iframe, object, embed), every script element (its src, class, "type=application/json" for a data block, or "inline"),
// every on* attribute, and the text of each script.trace-data block (the HTML parser's cut).
"use strict";
const fs = require("fs");
const { launch, run } = require("./lib");

function look() {
  const all = [...document.querySelectorAll("*")];
  // the one element a flame graph's script makes itself: its search field's <foreignObject>
  // (one <input>, in the graph's search box), never a name's
  const ownField = (e) => e.localName === "foreignObject" && e.parentNode && e.parentNode.closest &&
    e.parentNode.closest("svg[data-tc-flame]") && /search$/.test(e.parentNode.id || "") &&
    e.childElementCount === 1 && e.firstElementChild.localName === "input" &&
    e.firstElementChild.id === e.parentNode.id + "field";
  return {
    url: location.href,
    pwned: typeof window.pwned === "undefined" ? null : String(window.pwned),
    made: all.filter((e) => ["img", "object", "embed", "image", "foreignObject"].includes(e.localName) && !ownField(e))
      .map((e) => e.outerHTML.slice(0, 200)),
    scripts: [...document.querySelectorAll("script")].map((s) =>
      s.getAttribute("src") || (s.getAttribute("class") ? `.${s.getAttribute("class")}`
        : s.getAttribute("type") === "application/json" ? "type=application/json" : "inline")),
    on: all.flatMap((e) => [...e.attributes].filter((a) => a.name.toLowerCase().startsWith("on"))
      .map((a) => `${e.localName}.${a.name}`)),
    blocks: [...document.querySelectorAll("script.trace-data")].map((s) => s.textContent),
    iframes: document.querySelectorAll("iframe").length,
  };
}

async function main(args) {
  const spec = JSON.parse(fs.readFileSync(args[0], "utf8"));
  const browser = await launch();
  const out = [];
  try {
    for (const p of spec.pages) {
      const page = await browser.newPage();
      await page.setBypassCSP(true);
      const errors = [];
      page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
      await page.goto(p.url, { waitUntil: "load", timeout: 60000 });
      await new Promise((r) => setTimeout(r, p.wait || 300)); // a failed image's onerror, a timer
      const frames = [];
      for (const f of page.frames()) {
        try {
          frames.push(await f.evaluate(look));
        } catch (e) {
          frames.push({ url: f.url(), error: String(e) });
        }
      }
      out.push({ url: p.url, frames, errors });
      await page.close();
    }
  } finally {
    await browser.close();
  }
  return { pages: out };
}

run(main);
