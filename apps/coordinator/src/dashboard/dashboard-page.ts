import { DASHBOARD_SCRIPT } from './dashboard-script.js';

/** What the server knows about the token the page request carried. */
export type PageAuth = 'ok' | 'missing' | 'rejected' | 'forbidden';

const STYLES = `
:root { --bg:#f6f7f9; --card:#fff; --ink:#1f2933; --muted:#6b7785; --line:#e3e7ec;
  --ok:#15803d; --warn:#b45309; --bad:#b91c1c; --info:#1d4ed8; --none:#e5e7eb; }
* { box-sizing:border-box; }
body { margin:0; font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  background:var(--bg); color:var(--ink); }
header { display:flex; align-items:baseline; gap:16px; padding:12px 24px; background:#111827; color:#f9fafb; }
header h1 { margin:0; font-size:17px; letter-spacing:.3px; }
header .meta { color:#cbd5e1; font-size:12px; }
header a { color:#93c5fd; margin-left:auto; }
main { padding:16px 24px 32px; display:grid; gap:16px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 16px; overflow-x:auto; }
h2 { margin:0 0 8px; font-size:14px; }
h3 { margin:12px 0 6px; font-size:13px; color:var(--muted); font-weight:600; }
table { border-collapse:collapse; width:100%; }
th,td { padding:4px 8px; border-bottom:1px solid var(--line); text-align:left; white-space:nowrap; }
th { font-weight:600; color:var(--muted); font-size:12px; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
.cards { display:flex; gap:12px; flex-wrap:wrap; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:8px 16px; min-width:120px; }
.card b { display:block; font-size:20px; }
.card span { color:var(--muted); font-size:12px; }
table.matrix { width:auto; }
table.matrix th.num { text-align:center; }
table.matrix td.cell { text-align:center; font-weight:600; min-width:110px; border:2px solid var(--card); border-radius:4px; }
table.matrix td.cell.zero { background:var(--none); color:var(--muted); }
table.matrix td.cell.absent { background:repeating-linear-gradient(45deg,#f3f4f6,#f3f4f6 4px,#fff 4px,#fff 8px); color:#c0c6cd; font-weight:400; }
.badge { display:inline-block; padding:0 7px; border-radius:9px; font-size:11px; font-weight:600; background:var(--none); color:var(--ink); }
.badge.ok,.badge.loaded,.badge.completed,.badge.alive { background:#dcfce7; color:var(--ok); }
.badge.active,.badge.pending,.badge.queued { background:#dbeafe; color:var(--info); }
.badge.refused,.badge.superseded { background:#fef3c7; color:var(--warn); }
.badge.failed,.badge.dead { background:#fee2e2; color:var(--bad); }
.badge.emulated { background:#ede9fe; color:#6d28d9; }
.classes { margin:0 0 8px; } .chip { display:inline-block; margin-right:6px; padding:1px 8px; border-radius:9px; background:var(--none); font-size:12px; font-family:ui-monospace,monospace; }
.bar { position:relative; width:110px; height:14px; background:var(--none); border-radius:7px; overflow:hidden; display:inline-block; vertical-align:middle; }
.bar i { position:absolute; inset:0 auto 0 0; background:#60a5fa; }
.bar em { position:relative; font-style:normal; font-size:10px; padding-left:6px; }
.muted { color:var(--muted); }
.stale { color:var(--warn); font-weight:600; }
.mono { font-family:ui-monospace,SFMono-Regular,Menlo,monospace; font-size:12px; }
button.thumb { padding:0; border:1px solid var(--line); border-radius:4px; background:none; cursor:pointer; line-height:0; }
button.thumb[aria-expanded=true] { outline:2px solid var(--info); }
img.thumb { height:40px; width:auto; border-radius:3px; background:var(--none); }
tr.strip-row td { background:#f9fafb; white-space:normal; }
.strip { display:flex; gap:8px; flex-wrap:wrap; margin:6px 0; }
.strip figure { margin:0; text-align:center; font-size:11px; color:var(--muted); }
img.strip { height:96px; width:auto; display:block; border-radius:3px; background:var(--none); }
.samples button.chip { border:0; cursor:pointer; font:inherit; font-size:12px; }
.samples button.chip.picked { background:#dbeafe; color:var(--info); }
#banner { display:none; background:#fee2e2; color:var(--bad); border:1px solid #fecaca; border-radius:8px; padding:8px 12px; }
#login { display:none; max-width:420px; margin:64px auto; background:var(--card); border:1px solid var(--line); border-radius:8px; padding:20px 24px; }
#login input { width:100%; padding:6px 8px; margin:8px 0; font:inherit; }
#login button { padding:6px 14px; font:inherit; }
#login .error { color:var(--bad); }
html[data-view=login] #login { display:block; }
html[data-view=login] main, html[data-view=login] header .meta, html[data-view=login] header a { display:none; }
`;

const LOGIN_MESSAGES: Readonly<Record<PageAuth, string>> = {
  ok: '',
  missing: '',
  rejected: 'That token was not accepted.',
  forbidden: 'That token does not grant the viewer role.',
};

/**
 * The dashboard page: one self-contained document (inline CSS and script, no external assets)
 * that polls the JSON API every 2 s. The same document serves as the token form.
 */
export function renderDashboardPage(
  auth: PageAuth,
  nonce: string,
  components: readonly string[] = [],
): string {
  const message = LOGIN_MESSAGES[auth];
  const componentList = components.join(' ').replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en" data-view="${auth === 'ok' ? 'dashboard' : 'login'}" data-auth="${auth}" data-components="${componentList}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>flowfleet dashboard</title>
<style nonce="${nonce}">${STYLES}</style>
</head>
<body>
<header>
  <h1>flowfleet</h1>
  <span class="meta" id="status">loading…</span>
  <a href="/queues" id="queues-link">lane queues (bull-board) →</a>
</header>
<form id="login" method="get" action="/">
  <h2>Sign in</h2>
  <p class="muted">Enter the viewer (or trainer) token. It is kept in this tab only.</p>
  <p class="error" id="login-error">${message}</p>
  <input type="password" name="token" autocomplete="off" required aria-label="token">
  <button type="submit">Open dashboard</button>
</form>
<main>
  <div id="banner" role="alert"></div>
  <div class="cards" id="cards"></div>
  <section><h2>Capability matrix <span class="muted">(live workers per cell)</span></h2><div id="matrix"></div></section>
  <section><h2>Workers</h2><div id="workers"></div></section>
  <section><h2>Lanes</h2><div id="lanes"></div></section>
  <section><h2>Weight versions</h2><div id="weights"></div></section>
  <section><h2>Recent rollouts</h2><div id="rollouts"></div></section>
</main>
<script nonce="${nonce}">${DASHBOARD_SCRIPT}</script>
</body>
</html>
`;
}

/**
 * The Content-Security-Policy of the page: its own inline style and script, same-origin fetch,
 * and images from blob: URLs (the frames it fetched with its token).
 */
export function dashboardCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data: blob:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
