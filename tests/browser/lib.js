// lib.js - headless Chromium for traceconv's browser tests (flame graph, and later
// the HTML report and the web server), driven by puppeteer-core.
//
// Debian's chromium, never a downloaded browser. This machine (and CI) has no
// network: without the flags below Chromium stalls on connections it tries at
// start. As root it needs --no-sandbox. Every launch gets a fresh profile
// directory, removed at close.
//
//   const { launch, openPage } = require("./lib");
//   const browser = await launch();
//   const { page, errors } = await openPage(browser, "file:///tmp/x.svg");
//   ... ; await browser.close();
//
// A test script writes one JSON object (its findings) to the file named by its last
// argument and exits 0; the Python test reads the JSON and judges. An exception exits 1
// with a message.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const puppeteer = require("puppeteer-core");

const CANDIDATES = [process.env.CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser",
                    "/usr/lib/chromium/chromium"].filter(Boolean);

function chromiumPath() {
  const found = CANDIDATES.find((p) => fs.existsSync(p));
  if (!found)
    throw new Error("chromium is not installed (Debian package chromium; scripts/setup.sh test installs it)");
  return found;
}

async function launch(options = {}) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "tc-chromium-"));
  const args = ["--headless", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-quic", "--no-default-browser-check",
                "--disable-extensions", "--disable-dev-shm-usage", `--user-data-dir=${profile}`,
                "--allow-file-access-from-files"];
  if (process.getuid && process.getuid() === 0) args.push("--no-sandbox");
  const browser = await puppeteer.launch({
    executablePath: chromiumPath(), headless: true, args, timeout: 60000,
    defaultViewport: options.viewport || { width: 1280, height: 900 },
  });
  const close = browser.close.bind(browser);
  browser.close = async () => {
    try { await close(); } finally { fs.rmSync(profile, { recursive: true, force: true }); }
  };
  return browser;
}

// A page that records console errors, uncaught exceptions and failed requests.
async function openPage(browser, url) {
  const page = await browser.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => errors.push(`requestfailed: ${r.url()}`));
  if (url) await page.goto(url, { waitUntil: "load", timeout: 60000 });
  return { page, errors };
}

// Run main(args) and write its result as JSON to the last argument; failures exit 1.
function run(main) {
  const args = process.argv.slice(2);
  main(args.slice(0, -1)).then((result) => {
    fs.writeFileSync(args[args.length - 1], JSON.stringify(result) + "\n");
    process.exit(0);
  }, (err) => {
    process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  });
}

module.exports = { launch, openPage, run, chromiumPath };
