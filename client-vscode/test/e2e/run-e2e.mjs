// End-to-end test in a real VS Code: code-server (installed offline by scripts/install-code-server.sh, cached
// outside the repo) serves the workbench, headless Chromium drives it through playwright-core. The test
// installs the built .vsix, opens a workspace with a sample kernel, and checks that a tritonlens diagnostic,
// its hover and its quick fix appear and work, and (last) the Optimize flow: code lens, verified code action,
// refactor preview, and the saved rewrite passing verification. Screenshots go to <repo>/test-artifacts/vscode-e2e/.
//
// Env: TRITONLENS_E2E_PYTHON (interpreter with tritonlens; default <repo>/.venv/bin/python),
//      TRITONLENS_CODE_SERVER_HOME (default /opt/tritonlens-code-server), CHROMIUM (default /usr/bin/chromium),
//      TRITONLENS_E2E_HEADED=1 to keep chromium visible when a display exists.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const clientDir = resolve(here, '..', '..');
const repo = resolve(clientDir, '..');
const vsix = join(clientDir, 'dist', 'tritonlens.vsix');
const artifacts = join(repo, 'test-artifacts', 'vscode-e2e');
const python = process.env.TRITONLENS_E2E_PYTHON ?? join(repo, '.venv', 'bin', 'python');
const csHome = process.env.TRITONLENS_CODE_SERVER_HOME ?? '/opt/tritonlens-code-server';
const codeServer = join(csHome, 'node_modules', '.bin', 'code-server');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const KERNEL_FILE = 'softmax_kernel.py';
const OPTIMIZE_FILE = 'row_sum.py';
const EXAMPLE_FILE = 'naive_softmax.py';

const started = Date.now();
const log = (msg) => console.log(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);

function fail(msg) {
  console.error(`[e2e] FAIL: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
    srv.on('error', rej);
  });
}

async function waitForHttp(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url, { redirect: 'manual' });
      if (r.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  fail(`code-server did not answer on ${url} within ${timeoutMs / 1000}s`);
}

function prepare() {
  if (!existsSync(vsix)) fail(`${vsix} is missing: run "npm run package" first`);
  const built = statSync(vsix).mtimeMs;
  const stale = readdirSync(join(clientDir, 'src')).filter((f) => statSync(join(clientDir, 'src', f)).mtimeMs > built);
  if (stale.length > 0) fail(`${vsix} is older than src/${stale[0]}: run "npm run package" first`);
  if (!existsSync(python)) fail(`interpreter ${python} is missing (set TRITONLENS_E2E_PYTHON)`);
  const check = spawnSync(python, ['-c', 'import tritonlens.server.cli'], { encoding: 'utf8' });
  if (check.status !== 0) fail(`tritonlens is not importable with ${python}: ${check.stderr}`);
  if (!existsSync(codeServer) || !existsSync(chromiumPath)) {
    log('installing code-server and chromium (cached outside the repo)');
    const r = spawnSync(join(clientDir, 'scripts', 'install-code-server.sh'), { stdio: 'inherit' });
    if (r.status !== 0) fail('install-code-server.sh failed');
  }
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  const root = mkdtempSync(join(tmpdir(), 'tritonlens-e2e-'));
  const ws = join(root, 'workspace');
  mkdirSync(join(ws, '.vscode'), { recursive: true });
  cpSync(join(here, 'workspace', KERNEL_FILE), join(ws, KERNEL_FILE));
  // The project's example, when it exists, fills the Kernels view with a second file.
  const example = join(repo, 'examples', 'naive_softmax.py');
  if (existsSync(example)) cpSync(example, join(ws, 'naive_softmax.py'));
  // A slow first draft in KernelBench form (Model/ModelNew/get_inputs) for the Optimize flow.
  cpSync(join(repo, 'bench', 'reduction', OPTIMIZE_FILE), join(ws, OPTIMIZE_FILE));
  writeFileSync(
    join(ws, '.vscode', 'settings.json'),
    JSON.stringify(
      {
        'tritonlens.interpreter': [python],
        'tritonlens.target': 'both',
        // Optimize runs on the CPU interpreter (verified correct, never timed) with one candidate: bounded for CI.
        'tritonlens.profileBackend': 'interpret',
        'tritonlens.optimizeBudget': 'candidates=1,rounds=1',
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'security.workspace.trust.enabled': false,
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'extensions.ignoreRecommendations': true,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'git.enabled': false,
        'editor.hover.delay': 200,
        'editor.minimap.enabled': false,
        'window.commandCenter': false,
        'workbench.colorTheme': 'Default Light Modern',
        'chat.commandCenter.enabled': false,
        'files.exclude': { '.vscode': true },
      },
      null,
      2,
    ),
  );
  const userData = join(root, 'user-data');
  const extDir = join(root, 'extensions');
  const config = join(root, 'config.yaml');
  writeFileSync(config, 'auth: none\ncert: false\n');
  return { root, ws, userData, extDir, config };
}

// code-server reads its extension gallery from EXTENSIONS_GALLERY: an object without serviceUrl disables the
// gallery, so neither the server nor the workbench asks a marketplace for anything (no traffic off this machine).
const NO_GALLERY_ENV = { ...process.env, EXTENSIONS_GALLERY: '{}' };

/** Only this machine: loopback, or in-page schemes that never leave the browser. */
function isLocalUrl(url) {
  if (/^(data|blob|about|chrome|chrome-extension|vscode-file|vscode-webview):/.test(url)) return true;
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host.endsWith('.localhost');
  } catch {
    return false;
  }
}

function installVsix(env) {
  log(`installing ${vsix}`);
  const r = spawnSync(
    codeServer,
    ['--config', env.config, '--user-data-dir', env.userData, '--extensions-dir', env.extDir, '--install-extension', vsix],
    { encoding: 'utf8', env: NO_GALLERY_ENV },
  );
  log(r.stdout.trim().split('\n').slice(-2).join(' | '));
  if (r.status !== 0) fail(`--install-extension failed: ${r.stderr}`);
}

/** Text of every tritonlens output-channel log file under VS Code's logs folder. */
function readLogs(dir, name = 'tritonlens.log') {
  if (!existsSync(dir)) return '';
  let text = '';
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) text += readLogs(path, name);
    else if (entry.name === name) text += readFileSync(path, 'utf8');
  }
  return text;
}

async function shot(page, name) {
  const path = join(artifacts, `${name}.png`);
  await page.screenshot({ path });
  log(`screenshot ${path}`);
}

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15000 });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
}

async function problemsText(page) {
  await runCommand(page, 'View: Focus Problems');
  const panel = page.locator('.markers-panel');
  await panel.waitFor({ state: 'visible', timeout: 15000 });
  await page.waitForTimeout(500);
  return panel.innerText();
}

/** Run the runner's verification (interpret backend: ModelNew against Model at the task's test shapes) on a file. */
function verifyOnRunner(path) {
  const script = [
    'import json, sys',
    'from tritonlens.ascend_runner.client import LocalRunner',
    'shapes = [{"label": "a", "overrides": {"M": 16, "N": 512}}, {"label": "b", "overrides": {"M": 13, "N": 301}}]',
    'with LocalRunner({"cache": False}) as runner:',
    '    reply = runner.verify("interpret", {"harness": {"mode": "kernelbench", "path": sys.argv[1]}, "seeds": [3], "shapes": shapes})',
    'print(json.dumps(reply, default=str))',
  ].join('\n');
  const r = spawnSync(python, ['-c', script, path], { encoding: 'utf8', timeout: 300000 });
  if (r.status !== 0) fail(`verifying the applied text failed to run: ${r.stderr.slice(-1500)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

/** 9. Optimize kernel from the code lens; apply the verified rewrite in one step; the saved text
 * passes verification on its own. Interpret backend: the offer is "verified correct", never a speed claim. */
async function optimizeFlow(page, env) {
  // Step 5 chose Ascend; the slow draft is a CUDA kernel: back to both platforms (the server re-reads settings).
  const settingsFile = join(env.ws, '.vscode', 'settings.json');
  const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
  writeFileSync(settingsFile, JSON.stringify({ ...settings, 'tritonlens.target': 'both' }, null, 2));
  const original = readFileSync(join(env.ws, OPTIMIZE_FILE), 'utf8');
  const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: OPTIMIZE_FILE }).first();
  await runCommand(page, 'View: Show Explorer');
  await row.waitFor({ timeout: 30000 });
  await row.click();
  await page.locator('.monaco-editor .view-lines', { hasText: 'def row_sum_kernel' }).first().waitFor({ timeout: 30000 });
  const editor = page.locator('.editor-group-container.active .monaco-editor').first();
  const lens = editor.locator('.codelens-decoration a', { hasText: 'tritonlens: optimize' }).first();
  await lens.waitFor({ timeout: 120000 });
  const t0 = Date.now();
  // A lens re-rendered under the pointer (the server refreshes lenses as it learns more) can swallow a click:
  // click again until the run's progress shows, as a user would.
  const running = page.locator('.notification-toast', { hasText: /Optimizing row_sum_kernel/ }).first();
  for (let attempt = 1; ; attempt++) {
    await lens.click();
    if (await running.waitFor({ state: 'visible', timeout: 15000 }).then(() => true, () => false)) break;
    if (await page.locator('.notification-toast', { hasText: /verified rewrite\(s\)/ }).first().isVisible()) break;
    if (attempt === 3) fail('clicking the optimize code lens started no Optimize run (three clicks)');
    log(`the optimize lens click started nothing (attempt ${attempt}); clicking again`);
  }
  log('Optimize kernel started from the code lens');
  const done = page.locator('.notification-toast', { hasText: /verified rewrite\(s\)/ }).first();
  const failed = page.locator('.notification-toast', { hasText: /optimizeKernel failed|no verified|Optimize could not/i }).first();
  for (const deadline = Date.now() + 420000; !(await done.isVisible()); await page.waitForTimeout(1000)) {
    if (await failed.isVisible()) fail(`Optimize kernel failed: ${await failed.innerText()}`);
    if (Date.now() > deadline) fail('Optimize kernel offered no verified rewrite within 420s');
  }
  const message = await done.locator('.notification-list-item-message').first().innerText().catch(() => '');
  log(`Optimize kernel finished in ${((Date.now() - t0) / 1000).toFixed(0)}s: ${message}`);
  await shot(page, '12-optimize-done');
  await done.locator('.codicon-notifications-clear, .codicon-close').first().click().catch(() => undefined);

  // The code action: cursor inside the kernel, Ctrl+. lists the verified rewrite with what was verified.
  await editor.locator('.view-line', { hasText: 'acc = 0.0' }).first().click({ position: { x: 40, y: 5 } });
  await page.keyboard.press('Control+Period');
  const offer = page.locator('.action-widget .monaco-list-row', { hasText: 'Apply verified' }).first();
  await offer.waitFor({ state: 'visible', timeout: 30000 });
  const title = (await offer.innerText()).trim();
  if (!/verified-correct rewrite \(not timed: no speed claim\)/.test(title) || !/max error/.test(title)) {
    fail(`the optimize code action does not state what was verified: ${title}`);
  }
  log(`code action offered: ${title}`);
  await shot(page, '13-optimize-action');
  for (let i = 0; i < 20 && !/\bfocused\b/.test((await offer.getAttribute('class')) ?? ''); i++) {
    await page.keyboard.press('ArrowDown');
  }
  await page.keyboard.press('Enter');

  // A verified rewrite applies in one step (issue 23): no refactor preview with the edit unticked.
  await page.waitForTimeout(1500);
  if (await page.locator('.bulk-edit-panel .buttons .monaco-button', { hasText: /^Apply$/ }).first().isVisible().catch(() => false)) {
    fail('applying the verified rewrite opened the refactor preview instead of applying it');
  }
  await shot(page, '14-optimize-applied-in-one-step');
  log('verified rewrite applied in one step');
  await editor.click({ position: { x: 400, y: 300 } });
  await page.keyboard.press('Control+S');
  let saved = original;
  for (let i = 0; i < 40 && saved === original; i++) {
    await page.waitForTimeout(250);
    saved = readFileSync(join(env.ws, OPTIMIZE_FILE), 'utf8');
  }
  if (saved === original) fail('applying the verified rewrite did not change the saved file');
  const changed = saved.split('\n').findIndex((line, i) => line !== original.split('\n')[i]);
  await page.keyboard.press('Control+G'); // show the first changed line
  await page.locator('.quick-input-widget input').fill(`:${changed + 1}`);
  await page.keyboard.press('Enter');
  await shot(page, '15-optimize-applied');
  const reply = verifyOnRunner(join(env.ws, OPTIMIZE_FILE));
  if (!reply.ok || !reply.result?.passed) fail(`the applied kernel does not pass verification: ${JSON.stringify(reply).slice(0, 1500)}`);
  const checks = reply.result.checks.map((c) => `${c.shape}/seed ${c.seed}: max error ${c.max_abs}`).join(', ');
  log(`the saved rewrite passes verification on its own (${checks})`);
  await rooflineFlow(page, env);
}

/** 10. Profile kernel, then the roofline view beside the editor (issue 23): under interpret the KernelBench task
 * runs at its smallest TEST_SHAPES entry and the chart shows the target's datasheet ceilings, no point placed. */
async function rooflineFlow(page, env) {
  // The cursor into the kernel (the editor may be scrolled anywhere after the rewrite): Go to Line.
  const text = readFileSync(join(env.ws, OPTIMIZE_FILE), 'utf8').split('\n');
  const kernelLine = text.findIndex((l) => l.startsWith('def row_sum_kernel')) + 2;
  await page.keyboard.press('Control+G');
  await page.locator('.quick-input-widget input').fill(`:${kernelLine}`);
  await page.keyboard.press('Enter');
  const t0 = Date.now();
  await runCommand(page, 'tritonlens: Profile kernel');
  const tab = page.locator('.tab', { hasText: `Roofline: ${OPTIMIZE_FILE}` }).first();
  await tab.waitFor({ timeout: 300000 });
  log(`Profile kernel finished and opened the roofline view in ${((Date.now() - t0) / 1000).toFixed(0)}s`);
  let chart = null;
  for (let i = 0; i < 40 && !chart; i++) {
    for (const frame of page.frames()) {
      const text = await frame.locator('svg').first().textContent({ timeout: 200 }).catch(() => null);
      if (text && text.includes('Roofline')) chart = text;
    }
    if (!chart) await page.waitForTimeout(500);
  }
  if (!chart) fail('the roofline view shows no chart');
  if (!/GB\/s/.test(chart) || !/TFLOP\/s/.test(chart)) fail(`the roofline has no ceilings: ${chart.slice(0, 300)}`);
  log(`roofline view: ${chart.replace(/\s+/g, ' ').slice(0, 200)}`);
  const note = page.locator('.notification-toast', { hasText: /smallest TEST_SHAPES entry/ }).first();
  if (await note.isVisible().catch(() => false)) log(`profile said: ${(await note.innerText()).split('\n')[0]}`);
  await shot(page, '16-roofline');
}

/** Opens the bundled example as a user would in a fresh window and times its first squiggle. */
async function firstDiagnostics(page, env, windowReady) {
  const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: EXAMPLE_FILE }).first();
  await row.waitFor({ timeout: 60000 });
  await row.click();
  const opened = Date.now();
  const editor = page.locator('.editor-group-container.active .monaco-editor').first();
  await editor.locator('.view-lines', { hasText: 'def softmax_kernel' }).first().waitFor({ timeout: 30000 });
  await editor.locator('[class*="squiggly-"]').first().waitFor({ state: 'attached', timeout: 120000 });
  const shown = Date.now();
  // Where the time went, from the client's log (its lines carry wall-clock times).
  const logText = readLogs(join(env.userData, 'logs')) + readLogs(join(env.userData, 'logs'), 'remoteexthost.log');
  const stamp = (re) => {
    const line = logText.split('\n').find((l) => re.test(l));
    const t = line && Date.parse(line.slice(0, 23).replace(' ', 'T'));
    return Number.isFinite(t) ? t - windowReady : null;
  };
  // The bundle's own stamps (wall-clock ISO times in the activating line): when its evaluation began and ended.
  const bundleStamp = (re, addTook = false) => {
    const m = logText.match(re);
    const t = m && Date.parse(m[1]) + (addTook ? Number(m[2]) : 0);
    return Number.isFinite(t) ? t - windowReady : null;
  };
  const timing = {
    what: 'fresh code-server window: first diagnostic squiggle of the bundled example (examples/naive_softmax.py)',
    from: 'window ready (.monaco-workbench attached)',
    opened_ms: opened - windowReady,
    first_squiggle_ms: shown - windowReady,
    exthost_started_ms: stamp(/Extension host with pid \d+ started/),
    extension_activated_ms: stamp(/_doActivateExtension tritonlens\.tritonlens/),
    activate_entered_ms: stamp(/tritonlens extension activating/),
    bundle_load_started_ms: bundleStamp(/bundle load began (\S+),/),
    bundle_evaluated_ms: bundleStamp(/bundle load began (\S+), evaluated in (\d+) ms/, true),
    server_spawned_ms: stamp(/Starting tritonlens server/),
    server_process_started_ms: bundleStamp(/server process started at (\S+) as the bundle loaded/) ?? stamp(/Starting tritonlens server/),
    server_started_ms: stamp(/tritonlens server started/),
    limit_ms: 3000,
    cores: (await import('node:os')).cpus().length,
    measured_at: new Date().toISOString(),
  };
  writeFileSync(join(artifacts, 'first-diagnostics.json'), JSON.stringify(timing, null, 2) + '\n');
  log(`first diagnostics of ${EXAMPLE_FILE} ${timing.first_squiggle_ms} ms after window ready (${JSON.stringify(timing)})`);
  await shot(page, '00-first-diagnostics');
  // A measurement on a shared machine: the limit fails the run only when asked (TRITONLENS_E2E_STRICT_LATENCY=1).
  if (timing.first_squiggle_ms > timing.limit_ms) {
    const why = `first diagnostics took ${timing.first_squiggle_ms} ms (limit ${timing.limit_ms} ms)`;
    if (process.env.TRITONLENS_E2E_STRICT_LATENCY === '1') fail(why);
    log(`over the limit: ${why}`);
  }
}

async function main() {
  const env = prepare();
  installVsix(env);
  const port = await freePort();
  const csLog = [];
  const cs = spawn(
    codeServer,
    [
      '--config', env.config,
      '--bind-addr', `127.0.0.1:${port}`,
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--user-data-dir', env.userData,
      '--extensions-dir', env.extDir,
      env.ws,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: NO_GALLERY_ENV },
  );
  cs.stdout.on('data', (d) => csLog.push(String(d)));
  cs.stderr.on('data', (d) => csLog.push(String(d)));
  let browser;
  try {
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60000);
    log(`code-server up on port ${port}`);
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: process.env.TRITONLENS_E2E_HEADED !== '1',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    page.on('pageerror', (e) => log(`page error: ${e.message}`));
    const offMachine = [];
    page.on('request', (r) => {
      if (!isLocalUrl(r.url())) offMachine.push(r.url());
    });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(env.ws)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 120000 });
    const windowReady = Date.now();
    log('workbench loaded');

    // 0. A fresh window: the bundled example's first diagnostics, timed from window ready (issue 23: <= 3 s).
    await firstDiagnostics(page, env, windowReady);
    if (process.env.TRITONLENS_E2E_FIRST_ONLY === '1') {
      log('PASS (first diagnostics only)');
      return;
    }

    // Open the kernel from the Explorer.
    const fileRow = page.locator('.explorer-folders-view .monaco-list-row', { hasText: KERNEL_FILE });
    await fileRow.first().waitFor({ timeout: 60000 });
    await fileRow.first().click();
    await page.locator('.monaco-editor .view-lines', { hasText: 'def softmax_kernel' }).first().waitFor({ timeout: 30000 });
    log('kernel opened');

    // 1. The diagnostic: an error squiggle and TL101 in the Problems panel.
    const editor = page.locator('.editor-group-container.active .monaco-editor').first();
    const squiggle = editor.locator('.squiggly-error').first();
    await squiggle.waitFor({ state: 'attached', timeout: 120000 });
    log('diagnostic squiggle shown');
    const problems = await problemsText(page);
    if (!problems.includes('TL101')) fail(`Problems panel lacks TL101:\n${problems}`);
    if (!/tritonlens/.test(problems)) fail(`Problems panel entries do not name tritonlens as source:\n${problems}`);
    log('Problems panel lists TL101 from tritonlens');
    await shot(page, '01-diagnostics');

    // 2. The hover: the rule's explanation over the squiggled parameter.
    await editor.click({ position: { x: 400, y: 400 } }); // focus the editor, away from the parameter
    const target = editor.locator('.view-line', { hasText: 'def softmax_kernel' }).first();
    const box = await target.boundingBox();
    const paramX = await target.evaluate((el) => {
      // x of "BLOCK_SIZE" within the line, from the rendered text spans
      const text = el.textContent ?? '';
      const idx = text.indexOf('BLOCK_SIZE');
      const range = document.createRange();
      let seen = 0;
      for (const span of el.querySelectorAll('span > span')) {
        const t = span.textContent ?? '';
        if (seen + t.length > idx && span.firstChild) {
          range.setStart(span.firstChild, Math.max(0, idx - seen) + 2);
          range.setEnd(span.firstChild, Math.max(0, idx - seen) + 3);
          const r = range.getBoundingClientRect();
          return r.x;
        }
        seen += t.length;
      }
      return null;
    });
    if (!box || paramX === null) fail('could not locate BLOCK_SIZE in the kernel signature');
    const hx = paramX;
    const hy = box.y + box.height / 2;
    await page.mouse.move(hx - 30, hy);
    await page.mouse.move(hx, hy, { steps: 5 });
    const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'TL101' }).first();
    await hover.waitFor({ state: 'visible', timeout: 30000 });
    const hoverText = await hover.innerText();
    if (!/constexpr/i.test(hoverText)) fail(`hover does not explain the rule:\n${hoverText}`);
    log(`hover shown: ${hoverText.split('\n')[0]}`);
    await shot(page, '02-hover');

    // 3. The quick fix: put the cursor on the parameter, Ctrl+. and apply "Annotate ... as tl.constexpr".
    await page.mouse.move(hx, hy + 200);
    await page.keyboard.press('Escape');
    await page.mouse.click(hx, hy);
    await page.keyboard.press('Control+Period');
    const fixItem = page.locator('.action-widget .monaco-list-row', { hasText: 'constexpr' }).first();
    await fixItem.waitFor({ state: 'visible', timeout: 30000 });
    log(`quick fix offered: ${(await fixItem.innerText()).trim()}`);
    await shot(page, '03-quick-fix');
    // The action list sits behind a pointer shield: choose the fix with the keyboard, as a user would.
    for (let i = 0; i < 12 && !/\bfocused\b/.test((await fixItem.getAttribute('class')) ?? ''); i++) {
      await page.keyboard.press('ArrowDown');
    }
    await page.keyboard.press('Enter');
    await page
      .locator('.monaco-editor .view-lines', { hasText: 'BLOCK_SIZE: tl.constexpr' })
      .first()
      .waitFor({ timeout: 30000 });
    log('quick fix applied: BLOCK_SIZE: tl.constexpr');
    // The TL101 diagnostic goes away once the server re-triages the edited text.
    let after = '';
    for (let i = 0; i < 30; i++) {
      after = await problemsText(page);
      if (!after.includes('TL101')) break;
      await page.waitForTimeout(1000);
    }
    if (after.includes('TL101')) fail(`TL101 still reported after the fix:\n${after}`);
    log('TL101 cleared after the fix');
    await shot(page, '04-after-fix');

    // 3b. "Not here": Ignore TL135 on its line writes the ignore comment and the finding goes (issue 23).
    // The menu lists the code actions of the diagnostics published when it opens: after the fix above the file is
    // diagnosed again, so wait for TL135 to be back, and reopen the menu if it opened before the new list.
    for (let i = 0; i < 30 && !(await problemsText(page)).includes('TL135'); i++) await page.waitForTimeout(1000);
    const ignoreItem = page.locator('.action-widget .monaco-list-row', { hasText: 'Ignore TL135 on this line' }).first();
    for (let attempt = 0; ; attempt++) {
      await editor.locator('.view-line', { hasText: 'y = num / den' }).first().click({ position: { x: 60, y: 5 } });
      await page.keyboard.press('Control+Period');
      try {
        await ignoreItem.waitFor({ state: 'visible', timeout: 10000 });
        break;
      } catch (error) {
        if (attempt === 2) throw error;
        await page.keyboard.press('Escape');
      }
    }
    await shot(page, '04b-ignore-action');
    for (let i = 0; i < 12 && !/\bfocused\b/.test((await ignoreItem.getAttribute('class')) ?? ''); i++) {
      await page.keyboard.press('ArrowDown');
    }
    await page.keyboard.press('Enter');
    await editor.locator('.view-lines', { hasText: 'tritonlens: ignore[TL135]' }).first().waitFor({ timeout: 30000 });
    let afterIgnore = '';
    for (let i = 0; i < 30; i++) {
      afterIgnore = await problemsText(page);
      if (!afterIgnore.includes('TL135')) break;
      await page.waitForTimeout(1000);
    }
    if (afterIgnore.includes('TL135')) fail(`TL135 still reported after "Ignore TL135 on this line":\n${afterIgnore}`);
    log('Ignore TL135 on this line: comment written, TL135 gone from Problems');
    await shot(page, '04c-after-ignore');

    // 4. The client's own UI: status bar item and the Kernels view.
    const status = page.locator('.statusbar-item', { hasText: 'tritonlens' }).first();
    await status.waitFor({ timeout: 15000 });
    log(`status bar: ${(await status.innerText()).trim()}`);
    await runCommand(page, 'Explorer: Focus on Triton kernels View');
    const kernelsView = page.locator('.pane', { hasText: 'Triton kernels' }).last();
    await kernelsView.locator('.monaco-list-row', { hasText: 'softmax_kernel' }).first().waitFor({ timeout: 30000 });
    log('Kernels view lists softmax_kernel');
    await shot(page, '05-kernels-view');

    // 5. Select target: the quick pick writes the workspace setting (the server re-reads it without a restart).
    await runCommand(page, 'tritonlens: Select target');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Huawei Ascend NPUs' }).first().waitFor({ timeout: 15000 });
    await page.locator('.quick-input-widget input').fill('ascend');
    await page.waitForTimeout(300);
    await page.keyboard.press('Enter');
    const settingsFile = join(env.ws, '.vscode', 'settings.json');
    let chosen;
    for (let i = 0; i < 20 && chosen !== 'ascend'; i++) {
      await page.waitForTimeout(250);
      chosen = JSON.parse(readFileSync(settingsFile, 'utf8'))['tritonlens.target'];
    }
    if (chosen !== 'ascend') fail(`Select target did not update tritonlens.target (got ${chosen})`);
    log('Select target wrote tritonlens.target = ascend');

    // 6. Show IR beside the source. The IR itself needs the server's tritonlens/ir and a runner environment;
    // without them the view must still open and say why.
    await editor.locator('.view-line', { hasText: 'offs = tl.arange' }).first().click({ position: { x: 40, y: 5 } });
    await runCommand(page, 'tritonlens: Show IR');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'ttgir' }).first().waitFor({ timeout: 30000 });
    await page.locator('.quick-input-widget input').fill('ttgir');
    await page.keyboard.press('Enter');
    const irTab = page.locator('.tab', { hasText: 'softmax_kernel.ttgir' }).first();
    await irTab.waitFor({ timeout: 120000 });
    const groups = await page.locator('.editor-group-container').count();
    if (groups < 2) fail('Show IR did not open beside the source');
    const irEditor = page
      .locator('.editor-group-container', { has: page.locator('.tab', { hasText: 'softmax_kernel.ttgir' }) })
      .locator('.monaco-editor')
      .first();
    const irText = (await irEditor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ');
    if (!irText.trim()) fail('the IR view is empty');
    if (irText.includes('tritonlens could not produce')) {
      // Honest about it: no runner environment here, so only the view's error path was exercised.
      log(`IR view opened; the server gave no IR: ${irText.split('\n').slice(0, 3).join(' ')}`);
    } else {
      // The cursor is on `offs = tl.arange(...)`: its make_range must be on screen and highlighted.
      if (!irText.includes('tt.make_range')) fail(`the IR of the cursor line is not revealed:\n${irText.slice(0, 800)}`);
      // Decorations are applied after the text arrives: wait for them rather than sampling once.
      const marks = irEditor.locator('.view-overlays [class*="ced-"]');
      await marks.first().waitFor({ timeout: 15000 }).catch(() => {});
      const highlighted = await marks.count();
      if (highlighted === 0) fail('no IR lines are highlighted for the cursor line');
      log(`IR view shows ttgir with ${highlighted} highlighted line(s) for the cursor line`);
      await shot(page, '07-ir-view');
      // Following the cursor: move to the tl.store line and expect its IR to be revealed.
      await editor.locator('.view-line', { hasText: 'tl.store(out_ptr' }).first().click({ position: { x: 40, y: 5 } });
      await irEditor.locator('.view-lines', { hasText: 'tt.store' }).waitFor({ timeout: 15000 });
      log('IR view followed the cursor to tl.store');
    }
    await shot(page, '08-ir-follows-cursor');

    // 7. Analyze kernel from the palette: arguments come from the cursor, progress shows in a notification.
    await editor.locator('.view-line', { hasText: 'mask = offs < n_cols' }).first().click({ position: { x: 40, y: 5 } });
    await runCommand(page, 'tritonlens: Analyze kernel');
    const toast = page.locator('.notification-toast', { hasText: /Analyzing softmax_kernel|compiling/ }).first();
    const sawProgress = await toast.waitFor({ state: 'visible', timeout: 10000 }).then(() => true, () => false);
    if (sawProgress) {
      await shot(page, '09-analyze-progress');
      // While the work runs the status bar says so (it follows $/progress).
      const busy = page.locator('.statusbar-item', { hasText: /tritonlens: (analyzing|profiling)/ }).first();
      const sawBusy = await busy.waitFor({ timeout: 5000 }).then(() => true, () => false);
      log(`status bar while analyzing: ${sawBusy ? 'shows analyzing' : 'did not show analyzing'}`);
      if (!sawBusy && (await toast.isVisible())) fail('the status bar did not show the running analysis');
    }
    await toast.waitFor({ state: 'hidden', timeout: 180000 }).catch(() => undefined);
    const errors = await page.locator('.notification-toast', { hasText: /failed|not offer|Open a Python/ }).count();
    if (errors > 0) fail(`Analyze kernel reported an error: ${await page.locator('.notification-toast').first().innerText()}`);
    log(`Analyze kernel finished without error${sawProgress ? ' (progress notification seen)' : ' (too fast to see its progress)'}`);
    await page.waitForTimeout(1000); // the code lens refreshes with the compiler's summary
    // The answer told the client whether the runner was reachable: the status bar's tooltip says so.
    const statusItem = page.locator('.statusbar-item', { hasText: 'tritonlens' }).first();
    await statusItem.hover();
    // The runner line names the compile target the analysis used (the IR target follows the platform setting,
    // which this test set to ascend above), so any target name is accepted here.
    const tip = page.locator('.monaco-hover, .custom-hover, .workbench-hover', { hasText: /Runner \S+:/ }).first();
    await tip.waitFor({ state: 'visible', timeout: 15000 });
    const tipText = await tip.innerText();
    if (!/Runner \S+: (reachable|unreachable)/.test(tipText)) fail(`status tooltip lacks the runner: ${tipText}`);
    log(`status bar tooltip: ${tipText.replace(/\n/g, ' | ')}`);
    await shot(page, '10-after-analyze');

    // 8. Restart server: the old server stops and a new one starts with the same interpreter.
    await runCommand(page, 'tritonlens: Restart server');
    await runCommand(page, 'tritonlens: Show log');
    // The output view is virtualized (only visible lines are in the DOM): count starts in the channel's log file.
    let starts = 0;
    for (let i = 0; i < 60 && starts < 2; i++) {
      await page.waitForTimeout(500);
      starts = (readLogs(join(env.userData, 'logs')).match(/tritonlens server started/g) ?? []).length;
    }
    if (starts < 2) fail('the log does not show the server starting again after Restart server');
    log('Restart server started a new server');
    await shot(page, '11-log');
    await optimizeFlow(page, env);

    // No request left this machine (the gallery points at nothing; see NO_GALLERY_ENV).
    if (offMachine.length > 0) fail(`the workbench made requests off this machine:\n${[...new Set(offMachine)].join('\n')}`);
    const galleryUrl = await page.evaluate(() => {
      const meta = document.getElementById('vscode-workbench-web-configuration');
      const settings = meta && JSON.parse(meta.getAttribute('data-settings') ?? '{}');
      return settings?.productConfiguration?.extensionsGallery?.serviceUrl ?? null;
    });
    if (galleryUrl) fail(`code-server still has an extension gallery: ${galleryUrl}`);
    log('no traffic off this machine; no extension gallery');
    log('PASS');
  } catch (err) {
    process.exitCode = 1;
    console.error(err);
    const pages = browser?.contexts().flatMap((c) => c.pages()) ?? [];
    if (pages[0]) await pages[0].screenshot({ path: join(artifacts, 'failure.png') }).catch(() => undefined);
    writeFileSync(join(artifacts, 'code-server.log'), csLog.join(''));
    log(`code-server log: ${join(artifacts, 'code-server.log')}`);
  } finally {
    await browser?.close().catch(() => undefined);
    try {
      process.kill(-cs.pid, 'SIGTERM'); // code-server and its extension host, started here as one group
    } catch {
      // already gone
    }
    const extLogs = join(env.userData, 'logs');
    if (existsSync(extLogs)) cpSync(extLogs, join(artifacts, 'vscode-logs'), { recursive: true });
    if (process.env.TRITONLENS_E2E_KEEP !== '1') rmSync(env.root, { recursive: true, force: true });
  }
}

await main().catch((err) => {
  console.error(err.message ?? err);
  process.exitCode = 1;
});
