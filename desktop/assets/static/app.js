// crmimport desktop: the little the pages need beyond HTML — live
// progress, the buttons that change something, the New import form. Data
// from exports is only ever set as text (textContent), never as HTML.
"use strict";

const H = { "X-Requested-By": "crmimport" };

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function fmt(n) { return Number(n || 0).toLocaleString("en-US"); }

async function post(url, body) {
  const opts = { method: "POST", headers: Object.assign({}, H), credentials: "same-origin" };
  if (body instanceof FormData) opts.body = body;
  else if (body !== undefined) { opts.body = JSON.stringify(body); opts.headers["Content-Type"] = "application/json"; }
  const res = await fetch(url, opts);
  let doc = null;
  try { doc = await res.json(); } catch (e) { doc = { error: "the server answered " + res.status }; }
  if (!res.ok) throw Object.assign(new Error(doc.error || ("HTTP " + res.status)), { doc: doc, status: res.status });
  return doc;
}

function say(node, text, isError) {
  if (!node) return;
  node.textContent = text;
  node.classList.toggle("error", !!isError);
}

// Buttons that change something: a POST, then the page again.
document.querySelectorAll("button[data-post]").forEach((b) => {
  b.addEventListener("click", async () => {
    const msg = document.querySelector("[data-field=message]");
    b.disabled = true;
    say(msg, b.textContent.trim() + "…");
    try {
      const doc = await post(b.getAttribute("data-post"));
      say(msg, doc.requested ? "Stop requested: the run stops after its current batch." : "Done.");
      // A new run (Apply these changes) opens its own page.
      const next = typeof doc.url === "string" && doc.url.startsWith("/runs/") ? doc.url : null;
      setTimeout(() => { if (next) location.assign(next); else location.reload(); }, 700);
    } catch (e) {
      say(msg, e.message, true);
      b.disabled = false;
    }
  });
});

// A tenant's page (issue 27 item 3): a run over an export the user names —
// doctor's `run --only`, or `resume RUN --from PATH` for a run loaded from a
// dump — whose page then opens.
document.querySelectorAll("form.runover").forEach((f) => {
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const msg = f.querySelector("[data-field=form-message]");
    const b = f.querySelector("button[type=submit]");
    const path = f.elements.namedItem("path").value.trim();
    const d = f.dataset;
    b.disabled = true;
    say(msg, b.textContent.trim() + "…");
    try {
      if (d.do === "resume") {
        const doc = await post("/api/runs/" + d.run + "/resume", { from: path });
        location.assign("/runs/" + doc.run);
        return;
      }
      const doc = await post("/api/imports", { path: path, tenant: d.tenant, source: d.source, profile: d.profile, only: d.kinds ? [d.kinds] : [] });
      location.assign(doc.url);
    } catch (e) {
      say(msg, e.message + (e.doc && e.doc.live_run ? " — run " + e.doc.live_run + " of this tenant is live." : ""), true);
      b.disabled = false;
    }
  });
});

// The four outcomes on a 0–1000 bar, as the server draws them.
function drawBar(svg, c) {
  if (!svg) return;
  const counts = { imported: c.imported, unchanged: c.unchanged, skipped: c.skipped, failed: c.failed };
  const total = counts.imported + counts.unchanged + counts.skipped + counts.failed;
  let x = 0;
  for (const name of ["imported", "unchanged", "skipped", "failed"]) {
    const r = svg.querySelector("rect[data-outcome=" + name + "]");
    const w = total > 0 ? 1000 * counts[name] / total : 0;
    if (r) { r.setAttribute("x", x.toFixed(2)); r.setAttribute("width", w.toFixed(2)); }
    x += w;
  }
}

function setStatus(node, status) {
  if (!node) return;
  node.textContent = "";
  node.appendChild(el("span", { class: "status status-" + status }, status));
}

// The run page of a working run: its state from the database, live.
const runPage = document.querySelector("[data-run-page]");
if (runPage && runPage.getAttribute("data-live") === "true" && window.EventSource) {
  const id = runPage.getAttribute("data-run-page");
  const es = new EventSource("/api/runs/" + id + "/events");
  const onState = (ev) => {
    const st = JSON.parse(ev.data);
    setStatus(runPage.querySelector("h1 [data-field=status]"), st.status);
    const phase = runPage.querySelector("[data-field=phase]");
    if (phase) phase.textContent = st.phase;
    for (const [kind, c] of Object.entries(st.kinds || {})) {
      const row = runPage.querySelector("tr[data-kind=" + kind + "]");
      if (!row) continue;
      for (const f of ["imported", "unchanged", "skipped", "failed", "matched", "unlinked", "unowned", "relinked", "duplicate", "removed", "released", "restored", "cleared"]) {
        const cell = row.querySelector("[data-field=" + f + "]");
        if (cell) cell.textContent = fmt(c[f]);
      }
      drawBar(row.querySelector("svg.bar"), c);
    }
    for (const t of st.tasks || []) {
      const row = runPage.querySelector("tr[data-task='" + t.id + "']");
      if (!row) continue;
      setStatus(row.querySelector("[data-field=status]"), t.status);
      row.querySelector("[data-field=rows]").textContent = fmt(t.rows);
      const p = row.querySelector("[data-field=progress]");
      if (t.percent !== null && t.percent !== undefined) { p.value = t.percent; }
      row.querySelector("[data-field=percent]").textContent = (t.percent === null || t.percent === undefined) ? "—" : Math.round(t.percent) + "%";
      row.querySelector("[data-field=size]").textContent = t.size || "";
      row.querySelector("[data-field=rate]").textContent = t.rate || "";
      row.querySelector("[data-field=left]").textContent = t.left || "";
      row.querySelector("[data-field=note]").textContent = t.note || "";
    }
    if (st.status !== "running") { es.close(); setTimeout(() => location.reload(), 800); }
  };
  for (const kind of ["state", "progress", "status"]) es.addEventListener(kind, onState);
}

// The runs page: every run's status and counts, refreshed.
const runsTable = document.querySelector("table[data-live-runs]");
if (runsTable) {
  setInterval(async () => {
    try {
      const res = await fetch("/api/runs", { credentials: "same-origin" });
      if (!res.ok) return;
      const doc = await res.json();
      let unknown = false;
      for (const r of doc.runs) {
        const row = runsTable.querySelector("tr[data-run='" + r.run + "']");
        if (!row) { unknown = true; continue; }
        if (String(r.undone_by || 0) !== row.getAttribute("data-undone-by")) { unknown = true; continue; } // undone since: its undo's link
        const partly = (r.partly_undone || []).reduce((n, p) => n + p.count, 0);
        if (String(partly) !== row.getAttribute("data-partly")) { unknown = true; continue; } // records taken back by a cascade since
        const cells = row.querySelectorAll("td");
        setStatus(cells[3], r.interrupted ? "interrupted" : r.status);
        cells[4].textContent = r.phase;
        let t = { imported: 0, unchanged: 0, skipped: 0, failed: 0 };
        for (const c of Object.values(r.kinds)) for (const k of Object.keys(t)) t[k] += c[k];
        cells[5].textContent = fmt(t.imported); cells[6].textContent = fmt(t.unchanged);
        cells[7].textContent = fmt(t.skipped); cells[8].textContent = fmt(t.failed);
        drawBar(cells[9].querySelector("svg.bar"), t);
      }
      if (unknown) location.reload();
    } catch (e) { /* the server went away: the page stays as it is */ }
  }, 2000);
}

// New import. Once a path is chosen (typed, picked in the folder browser,
// dropped, chosen or a kept drop used), the page reads the export
// (POST /api/recognise) and proposes a source and a profile, saying why in
// a line — unless the user or the URL gave them — then previews it as
// `inspect` does; a file whose encoding is only guessed brings the
// encoding field. Preview, Dry run and Import read the export first when
// its path changed since.
const form = document.getElementById("import-form");
if (form) {
  const msg = document.getElementById("import-message");
  const field = (n) => form.elements.namedItem(n);
  const recognisedBox = document.getElementById("recognised");
  const encodingBox = document.getElementById("encoding-field");
  // Given: a field the URL filled or the user changed, which a proposal
  // never overwrites.
  const given = {
    source: field("source").hasAttribute("data-given"),
    profile: field("profile").hasAttribute("data-given"),
  };
  field("source").addEventListener("input", () => { given.source = true; });
  field("profile").addEventListener("change", () => { given.profile = true; });
  field("profile_file").addEventListener("input", () => { given.profile = field("profile_file").value.trim() !== ""; });

  // A new tenant is made on purpose, never by a typo (issue 27 item 3): the
  // server refuses a new tenant named like an existing one until the
  // request says new_tenant, which it says once the user chose so below.
  let newTenant = null;
  const request = (extra) => {
    const q = Object.assign({
      path: field("path").value.trim(), tenant: field("tenant").value.trim(), source: field("source").value.trim(),
      // A profile file (the mapping editor's) wins over a built-in name.
      profile: field("profile_file").value.trim() || field("profile").value, only: field("only").value ? [field("only").value] : [],
      update: field("update").checked, // R17: apply changes at the source
      encoding: field("encoding").value, // run --encoding: "" reads each file as guessed
    }, extra || {});
    if (newTenant !== null && q.tenant === newTenant) q.new_tenant = true;
    return q;
  };
  const askBox = document.getElementById("tenant-confirm");
  const useOld = document.getElementById("tenant-use"), makeNew = document.getElementById("tenant-new");
  let again = null;
  // askTenant shows the question for a refusal that names the existing
  // tenant, and keeps what to do once it is answered; false for any other
  // refusal.
  function askTenant(e, redo) {
    if (!e.doc || !e.doc.existing_tenant) return false;
    const typed = field("tenant").value.trim(), existing = e.doc.existing_tenant;
    askBox.querySelector("[data-field=question]").textContent = "“" + typed + "” is not a tenant yet, but “" + existing +
      "” is: the two names differ only in case, spaces, punctuation or character width. Which one is meant?";
    useOld.textContent = "Use “" + existing + "”";
    useOld.dataset.tenant = existing;
    makeNew.textContent = "Create “" + typed + "” as a new tenant";
    makeNew.dataset.tenant = typed;
    again = redo;
    askBox.hidden = false;
    say(msg, "Nothing was written: say which tenant is meant.", true);
    useOld.focus();
    return true;
  }
  const answer = (redo) => { askBox.hidden = true; const f = again; again = null; redo(); if (f) f(); };
  useOld.addEventListener("click", () => answer(() => { field("tenant").value = useOld.dataset.tenant; }));
  makeNew.addEventListener("click", () => answer(() => { newTenant = makeNew.dataset.tenant; }));
  document.getElementById("tenant-cancel").addEventListener("click", () => { askBox.hidden = true; again = null; say(msg, ""); field("tenant").focus(); });

  // The dry run's plan (SPEC §11: a preview and its commit are the same
  // plan): Import carries its digest and files while the form asks for
  // what the dry run did, and then imports that plan or nothing (a file
  // changed since: exit 8, the file named).
  let dried = null;
  // What the export was recognised as, for the path it was read for.
  let known = { path: null, pending: null };
  // Again (quiet) for another tenant, the line stays as it is until the
  // answer comes: a line that changes height under a click moves the
  // button clicked.
  // The form is aria-busy while it reads the export (recognition, a
  // preview it runs by itself): what it shows then may move the buttons.
  let reading = 0;
  const busy = async (f) => {
    if (reading++ === 0) form.setAttribute("aria-busy", "true");
    try { return await f(); } finally { if (--reading === 0) form.removeAttribute("aria-busy"); }
  };
  async function recognise(path, quiet) { return busy(() => recogniseNow(path, quiet)); }
  async function recogniseNow(path, quiet) {
    const tenant = field("tenant").value.trim();
    if (!quiet) {
      recognisedBox.hidden = false;
      recognisedBox.className = "recognised";
      recognisedBox.textContent = "Reading the export to recognise it…";
    }
    let doc;
    try {
      doc = await post("/api/recognise", { paths: [path], tenant: tenant });
    } catch (e) {
      recognisedBox.classList.add("error");
      recognisedBox.textContent = e.message;
      return null;
    }
    showRecognition(doc);
    return doc;
  }
  function showRecognition(doc) {
    recognisedBox.textContent = "";
    recognisedBox.className = "recognised " + (doc.profile ? "fits" : "fits-none");
    if (!doc.profile) {
      recognisedBox.appendChild(el("strong", {}, "No built-in profile reads this export: "));
      recognisedBox.appendChild(el("span", { "data-field": "why" }, doc.why + ". "));
      recognisedBox.appendChild(el("a", { href: doc.editor, id: "open-editor" }, "Map it in the mapping editor"));
      recognisedBox.appendChild(document.createTextNode(", which drafts a profile from its columns."));
      return;
    }
    const p = el("p");
    p.appendChild(el("strong", {}, "Recognised: "));
    p.appendChild(el("span", { "data-field": "why" }, doc.why + "."));
    recognisedBox.appendChild(p);
    const line = el("p", { class: "proposal" });
    if (!given.source) field("source").value = doc.source;
    if (!given.profile) field("profile").value = doc.profile;
    const asGiven = (given.source && field("source").value.trim() !== doc.source) ||
      (given.profile && (field("profile_file").value.trim() || field("profile").value) !== doc.profile);
    line.appendChild(document.createTextNode("Proposed: source "));
    line.appendChild(el("code", { "data-field": "source" }, doc.source));
    line.appendChild(document.createTextNode(" (" + doc.source_why + "), profile "));
    line.appendChild(el("code", { "data-field": "profile" }, doc.profile));
    line.appendChild(document.createTextNode(asGiven ? ". The form keeps what was given; " : ". Change either below if it is not so."));
    if (asGiven) {
      const use = el("button", { type: "button", id: "use-proposal" }, "Use the proposal");
      use.addEventListener("click", () => {
        field("source").value = doc.source; field("profile").value = doc.profile; field("profile_file").value = "";
        given.source = false; given.profile = false;
        showRecognition(doc);
      });
      line.appendChild(use);
    }
    recognisedBox.appendChild(line);
  }
  // read makes sure the export at the path is recognised (once per path),
  // and answers its recognition, or null.
  async function read() {
    const path = field("path").value.trim();
    if (!path) return null;
    if (known.path !== path) {
      // Another export: what the page showed of the last one goes.
      known = { path: path, pending: recognise(path) };
      encodingBox.hidden = true;
      field("encoding").value = "";
      dried = null;
      document.getElementById("dry-result").hidden = true;
      document.getElementById("dry-body").textContent = "";
      document.getElementById("preview").hidden = true;
    }
    return known.pending;
  }

  // Previews may overlap (one on a path chosen, one clicked): the newest
  // asked is the one shown.
  let previews = 0;
  async function preview(auto) { return busy(() => previewNow(auto)); }
  async function previewNow(auto) {
    const mine = ++previews;
    if (!auto) say(msg, "Reading the export…");
    try {
      await read();
      const doc = await post("/api/inspect", request());
      if (mine !== previews) return;
      renderInspection(document.getElementById("preview-body"), doc);
      showEncoding(doc);
      document.getElementById("preview").hidden = false;
      // A preview of a path just chosen tells nothing in the form's
      // message, which may speak of something else by then.
      if (!auto) say(msg, doc.problems && doc.problems.length ? "The export has problems: see below." : "A run would plan the files below.");
    } catch (e) { if (mine === previews && !auto) say(msg, e.message, true); }
  }
  // The encoding field, when a file's encoding is only guessed (or one
  // was chosen): the guess, per file, and what it means.
  function showEncoding(doc) {
    const guessed = doc.files.filter((f) => f.encoding_guessed);
    const chosen = field("encoding").value;
    if (!guessed.length && !chosen) { encodingBox.hidden = true; return; }
    const why = document.getElementById("encoding-why");
    why.textContent = "";
    const seen = new Set();
    for (const f of guessed) {
      if (seen.has(f.name)) continue; // a file of two kinds is read once
      seen.add(f.name);
      const p = el("p", { "data-file": f.name });
      p.appendChild(el("strong", {}, f.name));
      p.appendChild(document.createTextNode(" is read as " + f.encoding + ", a guess: " + f.encoding_why + ". " + encodingMeans(f)));
      why.appendChild(p);
    }
    if (guessed.length) field("encoding").options[0].textContent = "as guessed, file by file (" + guessed.map((f) => f.encoding + " for " + f.name).filter((v, i, a) => a.indexOf(v) === i).join(", ") + ")";
    why.appendChild(el("p", {}, chosen ? "Every text file of the export is read as " + chosen + " (run --encoding " + chosen + "), in the dry run and the import; Preview shows its rows so." :
      "If names in the rows below read wrong (Ã© for é, ? for ñ), choose the export's encoding: it applies to every text file of the export, in the dry run and the import (run --encoding)."));
    encodingBox.hidden = false;
  }
  function encodingMeans(f) {
    if (f.encoding === "windows-1252") return "Windows-1252 is what Excel on a Western European or American Windows saves as CSV: é, ß, ñ, € and curly quotes one byte each.";
    if (/neither/.test(f.encoding_why)) return "Rows holding bytes that are not UTF-8 would fail: choose the file's encoding.";
    return "The rows holding bytes that are not UTF-8 would fail alone: if the file is in another encoding, choose it.";
  }
  field("encoding").addEventListener("change", () => { dried = null; preview(true); });

  field("path").addEventListener("change", async () => {
    const doc = await read();
    if (doc && doc.profile) preview(true);
  });
  // The source proposed follows the tenant typed: its earlier runs with
  // the profile name the source its records are kept under.
  field("tenant").addEventListener("change", async () => {
    const path = field("path").value.trim();
    if (!path || given.source || known.path !== path) return;
    known = { path: path, pending: recognise(path, true) };
  });

  document.getElementById("inspect").addEventListener("click", () => preview(false));
  document.getElementById("dry-run").addEventListener("click", async () => {
    const section = document.getElementById("dry-result");
    const body = document.getElementById("dry-body");
    const bar = document.getElementById("dry-progress");
    say(msg, "Dry run: importing into a throwaway copy…");
    dried = null;
    await read();
    const asked = request();
    body.textContent = "";
    section.hidden = false;
    bar.hidden = false;
    bar.setAttribute("data-steps", "0");
    showProgress(bar, { stage: "planning" });
    try {
      const doc = await dryRun(asked, (p) => showProgress(bar, p));
      renderSummary(body, doc, asked.update);
      if (doc.plan) dried = { asked: JSON.stringify(asked), plan: doc.plan, files: doc.plan_files || [] };
      body.setAttribute("data-plan", doc.plan || "");
      say(msg, "Dry run " + doc.status + ": nothing was written." + (doc.plan ? " Import now imports exactly this plan, or nothing if a file changes first." : ""));
    } catch (e) {
      if (!askTenant(e, () => document.getElementById("dry-run").click())) {
        body.appendChild(el("p", { class: "error" }, e.message));
        say(msg, e.message, true);
      }
    }
    bar.hidden = true;
    section.scrollIntoView({ block: "start" }); // at once: a smooth scroll would move the buttons under a click
  });
  document.getElementById("import").addEventListener("click", async () => {
    say(msg, "Planning the run…");
    await read();
    const asked = request();
    const confirm = dried && dried.asked === JSON.stringify(asked) ? { plan: dried.plan, plan_files: dried.files } : {};
    try {
      const doc = await post("/api/imports", Object.assign(asked, confirm));
      location.href = doc.url;
    } catch (e) {
      if (askTenant(e, () => document.getElementById("import").click())) return;
      let words = e.message + (e.doc && e.doc.live_run ? " — open run " + e.doc.live_run + " from the Runs page." : "");
      if (e.doc && e.doc.exit_code === 8) { dried = null; words += " (Dry run shows the plan as it is now.)"; }
      say(msg, words, true);
    }
  });

  const uploads = keptUploads(document.getElementById("uploads-body"), document.getElementById("uploads-message"), field("path"));
  pathPicker(field("path"), document.getElementById("browser"), document.getElementById("browse"), document.getElementById("drop"), msg,
    (doc) => { say(msg, "Saved " + doc.files.length + (doc.files.length === 1 ? " file" : " files") + "."); uploads(); },
    document.getElementById("pick"));
  if (field("path").value.trim()) read(); // a path the URL gave
}

// dryRun posts a dry run that answers its progress as JSON Lines (POST
// /api/imports with dry_run and progress) and tells each to progress;
// it answers the summary, or throws the error the last line holds.
async function dryRun(asked, progress) {
  const res = await fetch("/api/imports", { method: "POST", credentials: "same-origin",
    headers: Object.assign({ "Content-Type": "application/json" }, H), body: JSON.stringify(Object.assign({}, asked, { dry_run: true, progress: true })) });
  if (!res.ok) {
    let doc = null;
    try { doc = await res.json(); } catch (e) { doc = { error: "the server answered " + res.status }; }
    throw Object.assign(new Error(doc.error || ("HTTP " + res.status)), { doc: doc, status: res.status });
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  let last = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buf += dec.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      const doc = JSON.parse(line);
      if (doc.progress) progress(doc.progress);
      else last = doc;
    }
    if (done) break;
  }
  if (!last) throw new Error("the dry run ended without a summary: see the terminal that runs crmimport ui");
  if (last.error) throw Object.assign(new Error(last.error), { doc: last });
  return last;
}

// showProgress shows how far a dry run has come.
function showProgress(node, p) {
  const bar = node.querySelector("progress");
  const words = node.querySelector("span");
  node.setAttribute("data-steps", String(Number(node.getAttribute("data-steps") || 0) + 1));
  if (p.stage === "planning") {
    bar.removeAttribute("value");
    words.textContent = "Planning: reading and fingerprinting the export's files…";
    return;
  }
  if (p.percent !== null && p.percent !== undefined) bar.value = p.percent; else bar.removeAttribute("value");
  words.textContent = "Phase " + p.phase + " · " + p.kind + " from " + p.file + " · " + fmt(p.records) + " records read · " +
    (p.percent !== null && p.percent !== undefined ? Math.round(p.percent) + "% of the export · " : "") + p.done + " of " + p.tasks + " tasks done";
}

function bytes(n) {
  if (n < 1024) return fmt(n) + " bytes";
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KiB";
  if (n < 1024 * 1024 * 1024) return (n / 1024 / 1024).toFixed(1) + " MiB";
  return (n / 1024 / 1024 / 1024).toFixed(1) + " GiB";
}

// ago says how long ago an instant (RFC 3339) was: "4 minutes ago".
function ago(at) {
  const t = Date.parse(at || "");
  if (isNaN(t)) return "unknown";
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  const n = (v, one) => v + " " + one + (v === 1 ? "" : "s") + " ago";
  if (s < 60) return "just now";
  if (s < 3600) return n(Math.floor(s / 60), "minute");
  if (s < 86400) return n(Math.floor(s / 3600), "hour");
  return n(Math.floor(s / 86400), "day");
}

// The drops kept in the uploads folder (GET /api/uploads): each with its
// age, files, the runs that read them, Use (its folder becomes the path) and
// Delete, which asks once more, naming what goes and which runs read it,
// before it posts. Returns the function that reads the list again.
function keptUploads(node, msg, input) {
  async function load() {
    let doc;
    try {
      const res = await fetch("/api/uploads", { credentials: "same-origin" });
      doc = await res.json();
      if (!res.ok) throw new Error(doc.error || ("HTTP " + res.status));
    } catch (e) { say(msg, e.message, true); return; }
    node.textContent = "";
    if (!doc.uploads.length) { node.appendChild(el("p", { class: "notice" }, "No dropped files are kept.")); return; }
    const t = table(["saved", "files", "size", "read by", ""], []);
    t.classList.add("uploads");
    const tb = t.querySelector("tbody");
    for (const u of doc.uploads) {
      const row = el("tr", { "data-upload": u.name });
      const saved = el("td", { class: "age" });
      saved.appendChild(el("time", { datetime: u.saved_at || "", title: (u.saved_at || "").replace("T", " ").replace("Z", " UTC") }, ago(u.saved_at)));
      row.appendChild(saved);
      row.appendChild(el("td", { class: "file" }, u.files.map((f) => f.name).join(", ") || "(empty)"));
      row.appendChild(el("td", { class: "num" }, bytes(u.size)));
      const runs = el("td");
      u.runs.forEach((r, i) => {
        if (i) runs.appendChild(document.createTextNode(", "));
        runs.appendChild(el("a", { href: "/runs/" + r.run }, "run " + r.run));
        runs.appendChild(document.createTextNode(" (" + (r.interrupted ? "interrupted" : r.status) + ")"));
      });
      if (!u.runs.length) runs.textContent = "no run";
      row.appendChild(runs);
      const acts = el("td", { class: "upload-actions" });
      const use = el("button", { type: "button", "data-use": u.name }, "Use");
      use.addEventListener("click", () => { input.value = u.path; input.dispatchEvent(new Event("change")); say(msg, "The path is " + u.path + "."); });
      const del = el("button", { type: "button", "data-delete": u.name }, "Delete");
      const busy = u.runs.find((r) => r.status === "running");
      if (busy) { del.disabled = true; del.title = "run " + busy.run + " is running on these files: stop it first"; }
      let armed = false;
      del.addEventListener("click", async () => {
        if (!armed) {
          armed = true;
          del.classList.add("danger");
          del.textContent = "Delete " + u.files.length + (u.files.length === 1 ? " file" : " files") + "?";
          const later = u.runs.map((r) => "run " + r.run).join(", ");
          say(msg, "Click again to delete " + bytes(u.size) + " from " + u.path + (later ? "; " + later + " read them and could not be resumed after" : "") + ".");
          return;
        }
        del.disabled = true;
        try {
          const d = await post("/api/uploads/" + encodeURIComponent(u.name) + "/delete");
          say(msg, "Deleted " + d.files + (d.files === 1 ? " file" : " files") + " (" + bytes(d.size) + ") from " + d.path + ".");
          if (input.value === u.path) input.value = "";
          load();
        } catch (e) { say(msg, e.message, true); del.disabled = false; }
      });
      acts.appendChild(use);
      acts.appendChild(del);
      row.appendChild(acts);
      tb.appendChild(row);
    }
    node.appendChild(t);
  }
  load();
  return load;
}

// The folder browser and the drop zone beside a path field (New import,
// the mapping editor), and the file picker beside it when there is one
// (pick, an <input type=file>: New import): a folder or file picked, or
// the folder the dropped or chosen files were saved in (privately: beside
// the database, or in the user's configuration folder for a server's),
// becomes its value.
function pathPicker(input, browser, browse, drop, msg, dropped, pick) {
  const close = () => { browser.hidden = true; browse.setAttribute("aria-expanded", "false"); };
  async function show(path) {
    const res = await fetch("/api/files?path=" + encodeURIComponent(path || ""), { credentials: "same-origin" });
    const doc = await res.json();
    if (!res.ok) { say(msg, doc.error, true); return; }
    browser.textContent = "";
    browser.appendChild(el("div", { class: "here" }, doc.path));
    const up = el("button", { type: "button" }, "↑ " + doc.parent);
    up.addEventListener("click", () => show(doc.parent));
    browser.appendChild(up);
    const pick = el("button", { type: "button" }, "✓ Use this folder");
    pick.addEventListener("click", () => { input.value = doc.path; close(); input.dispatchEvent(new Event("change")); });
    browser.appendChild(pick);
    for (const e of doc.entries) {
      const b = el("button", { type: "button" }, (e.dir ? "📁 " : "📄 ") + e.name);
      b.addEventListener("click", () => {
        if (e.dir) show(e.path);
        else { input.value = e.path; close(); input.dispatchEvent(new Event("change")); }
      });
      browser.appendChild(b);
    }
  }
  browse.addEventListener("click", () => {
    const open = browser.hidden;
    browser.hidden = !open;
    browse.setAttribute("aria-expanded", String(open));
    if (open) show(input.value);
  });

  drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  async function upload(files) {
    const fd = new FormData();
    for (const f of files) fd.append("file", f, f.name);
    say(msg, "Saving the files…");
    try {
      const doc = await post("/api/uploads", fd);
      input.value = doc.path;
      dropped(doc);
      input.dispatchEvent(new Event("change"));
    } catch (e) { say(msg, e.message, true); }
  }
  drop.addEventListener("drop", (ev) => {
    ev.preventDefault();
    drop.classList.remove("over");
    upload(ev.dataTransfer.files);
  });
  if (pick) {
    pick.addEventListener("change", () => {
      if (pick.files.length) upload(pick.files);
      pick.value = ""; // the same files chosen again upload again
    });
    // The drop zone, reached by the keyboard, opens the picker.
    drop.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); pick.click(); }
    });
  }
}

function table(headers, rows) {
  const t = el("table");
  const tr = el("tr");
  for (const h of headers) tr.appendChild(el("th", { scope: "col" }, h));
  t.appendChild(el("thead")).appendChild(tr);
  const tb = el("tbody");
  for (const r of rows) {
    const row = el("tr");
    for (const c of r) row.appendChild(el("td", {}, c));
    tb.appendChild(row);
  }
  t.appendChild(tb);
  return t;
}

// renderSummary shows a dry run's summary in the run page's columns: per
// kind, in plan order, the four outcomes on their bar and in numbers, then
// matched, unlinked, unowned (when any), relinked and duplicate. A dry run
// that found changes at the source (R17, SPEC §11) adds what its plan
// would update (without --update: what --update would), how many records
// are outdated, in conflict and deleted since; excluded rows show when
// there are any. Its warnings and what next follow.
function renderSummary(node, s, update) {
  node.textContent = "";
  const would = s.would_update || {};
  const order = JSON.parse(document.getElementById("dry-result").getAttribute("data-kinds") || "[]");
  const kinds = order.filter((k) => s.kinds[k.kind]);
  const any = (f) => kinds.some((k) => (f === "would_update" ? would[k.kind] : s.kinds[k.kind][f]) > 0);
  const changed = any("would_update") || any("updated") || any("outdated") || any("conflict") || any("deleted_since");
  const cols = [["imported", "Imported", "imported"], ["unchanged", "Unchanged", "unchanged"], ["skipped", "Skipped", "skipped"],
    ["failed", "Failed", "failed"], ["matched", "Matched"], ["unlinked", "Unlinked"]]
    .concat(any("unowned") ? [["unowned", "Unowned"]] : [], [["relinked", "Relinked"], ["duplicate", "Duplicate"]])
    .concat(changed ? [["would_update", update ? "Would update" : "--update would"], ["outdated", "Outdated"], ["conflict", "Conflict"], ["deleted_since", "Deleted since"]] : [])
    .concat(any("excluded") ? [["excluded", "Excluded"]] : []);
  const t = el("table", { class: "outcomes dry-outcomes" });
  const hr = el("tr");
  hr.appendChild(el("th", { scope: "col" }, "Kind"));
  hr.appendChild(el("th", { scope: "col", class: "barcol" }, "Outcomes"));
  for (const [, head, outcome] of cols) hr.appendChild(el("th", { scope: "col", class: "num" + (outcome ? " " + outcome : "") }, head));
  t.appendChild(el("thead")).appendChild(hr);
  const tb = t.appendChild(el("tbody"));
  for (const k of kinds) {
    const c = s.kinds[k.kind];
    const row = el("tr", { "data-kind": k.kind });
    row.appendChild(el("th", { scope: "row" }, k.plural));
    row.appendChild(el("td", { class: "barcol" })).appendChild(outcomeBar(c));
    for (const [f] of cols) row.appendChild(el("td", { class: "num", "data-field": f }, fmt(f === "would_update" ? (would[k.kind] || 0) : c[f])));
    tb.appendChild(row);
  }
  node.appendChild(el("p", { class: "legend", "aria-hidden": "true" })).append(...legendKeys());
  node.appendChild(t);
  const ul = el("ul", { class: "dry-next" });
  for (const n of (s.warnings || [])) ul.appendChild(el("li", { class: "warning" }, n));
  for (const n of (s.next || [])) ul.appendChild(el("li", {}, n));
  if (ul.childElementCount) node.appendChild(ul);
}

// outcomeBar is the four outcomes' bar, as the run page draws it.
function outcomeBar(c) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [k, v] of Object.entries({ class: "bar", viewBox: "0 0 1000 18", preserveAspectRatio: "none", role: "img", width: "100%", height: "18" })) svg.setAttribute(k, v);
  const names = ["imported", "unchanged", "skipped", "failed"];
  svg.setAttribute("aria-label", names.map((n) => fmt(c[n]) + " " + n).join(", "));
  for (const n of names) {
    const r = document.createElementNS(ns, "rect");
    r.setAttribute("class", n); r.setAttribute("data-outcome", n); r.setAttribute("y", "0"); r.setAttribute("height", "18");
    svg.appendChild(r);
  }
  drawBar(svg, c);
  return svg;
}

// legendKeys are the four outcomes' swatches and names, as the run page's
// legend shows them.
function legendKeys() {
  const out = [];
  for (const n of ["imported", "unchanged", "skipped", "failed"]) {
    out.push(el("span", { class: "sw " + n }));
    out.push(document.createTextNode(n + " "));
  }
  return out;
}

// The preview of `inspect`: the plan, then per file its columns and first
// rows as they would be mapped, then the problems a run would find.
function renderInspection(node, doc) {
  node.textContent = "";
  node.appendChild(el("h3", {}, "Plan"));
  if (doc.tenant) {
    const counts = ["new", "unchanged", "outdated", "conflict", "deleted_since"].filter((w) => (doc.ledger || {})[w]).map((w) => doc.ledger[w] + " " + w.replace("_", " "));
    node.appendChild(el("p", { class: "notice", id: "inspect-ledger" }, "Compared with the ledger of tenant " + doc.tenant + ": " +
      (counts.length ? "of the rows shown, " + counts.join(", ") : "no row shown is a record to compare") + "."));
  }
  node.appendChild(table(["phase", "kind", "file", "format", "encoding", "size"],
    doc.files.map((f) => [f.phase, f.kind, f.name, f.format, f.encoding + (f.encoding_why ? " (" + f.encoding_why + ")" : ""), fmt(f.size) + " bytes"])));
  if (doc.left_out.length) {
    node.appendChild(el("h3", {}, "Left out"));
    node.appendChild(table(["file", "why"], doc.left_out.map((l) => [l.name, l.reason])));
  }
  for (const w of doc.warnings) node.appendChild(el("p", { class: "warning" }, w));
  for (const n of doc.notices) node.appendChild(el("p", { class: "notice" }, n));
  for (const f of doc.files) {
    node.appendChild(el("h3", {}, f.name + " — " + f.kind));
    if (f.problem) node.appendChild(el("p", { class: "error" }, f.problem));
    if (f.columns.length) {
      node.appendChild(table(["column", "gives"], f.columns.map((c) => [c.name,
        (c.field || "a link") + (c.link && c.link.kind ? " → " + c.link.kind : "") + (c.extra_name ? " (" + c.extra_name + ")" : "")])));
    }
    if (f.rows.length) {
      const heads = ["line", "id", "outcome"].concat(doc.tenant ? ["ledger of " + doc.tenant] : [], ["fields"]);
      node.appendChild(table(heads, f.rows.map((r) => [r.line, r.id, r.outcome + (r.reason ? ": " + r.reason : "")].concat(
        doc.tenant ? [ledgerWord(r)] : [],
        [Object.entries(r.fields).filter(([, v]) => v !== "").map(([k, v]) => k + " " + JSON.stringify(v)).join(" · ")]))));
    }
  }
  node.appendChild(el("h3", {}, "Problems"));
  if (!doc.problems.length) node.appendChild(el("p", { class: "ok" }, "None: a run would start, and every task would open its file."));
  else node.appendChild(table(["file", "kind", "problem"], doc.problems.map((p) => [p.file, p.kind, p.error])));
}

// ledgerWord says what an inspected row is to the tenant's ledger (R17):
// new, unchanged, outdated with the fields changed at the source, in
// conflict with the fields edited by hand since import, deleted since.
function ledgerWord(r) {
  switch (r.ledger) {
    case "outdated": return "outdated: " + (r.changed || []).join(", ") + " changed at the source (" +
      (r.applicable ? "--update would update it" : "--update would not write it: a row found, not made, or a record now invalid") + ")";
    case "conflict": return "conflict: " + (r.changed || []).join(", ") + " changed at the source, " + (r.edited || []).join(", ") + " edited by hand since import";
    case "deleted_since": return "deleted in the source since import";
    default: return r.ledger || "";
  }
}

// Undo (R16): the button shows what `undo RUN --dry-run` shows, asks for a
// confirmation naming the counts, then follows to the undo's own page,
// where it shows live like any run. A refusal because of dependents lists
// them and offers --cascade, with a second confirmation naming what it
// takes back too. The confirmation carries the preview's plan (its digest
// and parts): if another run changed the plan meanwhile, the server takes
// nothing back (exit 8) and the dialog shows the plan as it is now, with
// what changed, to confirm again.
const undoButton = document.getElementById("undo");
const undoDialog = document.getElementById("undo-dialog");
if (undoButton && undoDialog) {
  const body = document.getElementById("undo-body");
  const msg = document.getElementById("undo-message");
  const confirmB = document.getElementById("undo-confirm");
  const cascadeB = document.getElementById("undo-cascade");
  const url = undoButton.getAttribute("data-undo");
  const run = undoButton.getAttribute("data-run");
  // The kinds children first, as an undo takes them back, with their
  // plurals: the server's table of kinds (canon), not a list of the page's.
  const undoKinds = JSON.parse(undoButton.getAttribute("data-kinds"));
  const plurals = Object.fromEntries(undoKinds.map((k) => [k.kind, k.plural]));
  const childrenFirst = undoKinds.map((k) => k.kind);
  let cascade = false;
  let shown = null; // the preview being confirmed

  async function preview(withCascade) {
    const res = await fetch(url + (withCascade ? "?cascade=1" : ""), { credentials: "same-origin" });
    let doc = null;
    try { doc = await res.json(); } catch (e) { doc = { error: "the server answered " + res.status }; }
    return { ok: res.ok, doc: doc };
  }
  function totals(p) {
    const t = { removed: 0, released: 0, restored: 0, cleared: 0 };
    for (const c of Object.values(p.kinds || {})) for (const k of Object.keys(t)) t[k] += c[k] || 0;
    return t;
  }
  // What the undo does, in words: only the parts that are not zero.
  function inWords(t) {
    const parts = [];
    if (t.removed) parts.push("removes " + fmt(t.removed) + (t.removed === 1 ? " row" : " rows") + " with " + (t.removed === 1 ? "its slot" : "their slots"));
    if (t.released) parts.push("releases " + fmt(t.released) + " matched " + (t.released === 1 ? "slot" : "slots") + " (the matched rows stay)");
    if (t.restored) parts.push("restores " + fmt(t.restored) + (t.restored === 1 ? " skip" : " skips") + " to the state before the run (with the row made over it, if any)");
    if (t.cleared) parts.push("clears " + fmt(t.cleared) + " of its own " + (t.cleared === 1 ? "skip" : "skips"));
    if (parts.length < 2) return parts.join("");
    return parts.slice(0, -1).join(", ") + " and " + parts[parts.length - 1];
  }
  function dependentsTable(deps) {
    const t = table(["run", "source", "kind", "how", "records", "for example"], []);
    const tb = t.querySelector("tbody");
    for (const d of deps) {
      const row = el("tr", { "data-dependent-run": d.run, "data-dependent-kind": d.kind });
      row.appendChild(el("td")).appendChild(el("a", { href: "/runs/" + d.run }, "run " + d.run));
      row.appendChild(el("td", {}, d.source));
      row.appendChild(el("td", {}, plurals[d.kind] || d.kind));
      row.appendChild(el("td", {}, d.how === "matched" ? "matched its rows" : "link to its rows"));
      row.appendChild(el("td", { class: "num" }, fmt(d.count)));
      row.appendChild(el("td", { class: "ids" }, (d.examples || []).join(", ")));
      tb.appendChild(row);
    }
    t.classList.add("dependents");
    return t;
  }
  function reset() {
    body.textContent = "";
    say(msg, "");
    confirmB.hidden = true;
    cascadeB.hidden = true;
    confirmB.disabled = false;
  }
  function showPreview(p) {
    reset();
    shown = p;
    const t = totals(p);
    const kinds = childrenFirst.filter((k) => p.kinds && p.kinds[k]);
    const tab = table(["kind", "removed", "released", "restored", "cleared"],
      kinds.map((k) => [plurals[k], fmt(p.kinds[k].removed), fmt(p.kinds[k].released), fmt(p.kinds[k].restored), fmt(p.kinds[k].cleared)]));
    tab.classList.add("undo-preview");
    tab.querySelectorAll("tbody tr").forEach((tr, i) => tr.setAttribute("data-kind", kinds[i]));
    body.appendChild(el("p", {}, "Tenant " + p.tenant + " · source " + p.source + " · " + fmt(p.total) + " records to take back. Nothing is written until you confirm."));
    body.appendChild(tab);
    body.appendChild(el("p", { class: "legend" }, "removed: rows the run created, with their slots · released: slots it matched (the rows stay) · restored: skips given back the state they had before the run · cleared: its own skips, deleted"));
    if (p.dependents && p.dependents.length) {
      body.appendChild(el("h3", {}, "Taken back too (--cascade)"));
      body.appendChild(dependentsTable(p.dependents));
    }
    for (const n of p.notices || []) body.appendChild(el("p", { class: "warning" }, n));
    let words = "The undo of run " + run + " " + inWords(t) + ".";
    if (p.cascade && p.dependents && p.dependents.length) {
      const also = p.dependents.map((d) => fmt(d.count) + " " + (plurals[d.kind] || d.kind) + " of run " + d.run + (d.how === "matched" ? " (matched slots)" : ""));
      words += " With --cascade it takes back too " + also.join(", ") + ": records that other runs wrote.";
    }
    body.appendChild(el("p", { class: "confirm-words", id: "undo-words" }, words));
    body.appendChild(el("p", { class: "legend", id: "undo-plan", "data-plan": p.plan }, "Plan " + p.plan.slice(0, 12) + "…: the undo takes back exactly this, or nothing if another run changes it before you confirm."));
    confirmB.textContent = (p.cascade ? "Undo run " + run + " with --cascade" : "Undo run " + run) + " — take back " + fmt(p.total) + (p.total === 1 ? " record" : " records");
    confirmB.hidden = false;
    confirmB.focus();
  }
  function showDependents(doc) {
    reset();
    body.appendChild(el("p", { class: "error", id: "undo-refused" }, "Run " + run + " cannot be undone alone: records of other runs depend on its rows."));
    body.appendChild(dependentsTable(doc.dependents));
    body.appendChild(el("p", {}, "--cascade takes these records back too (the records, not their whole runs), with the same precision. The next step shows what it would take back, before anything is written."));
    cascadeB.textContent = "Take these back too (--cascade)…";
    cascadeB.hidden = false;
    cascadeB.focus();
  }

  undoButton.addEventListener("click", async () => {
    cascade = false;
    reset();
    say(msg, "Reading what the undo would take back…");
    undoDialog.showModal();
    const r = await preview(false);
    if (r.ok) showPreview(r.doc);
    else if (r.doc.dependents && r.doc.dependents.length) showDependents(r.doc);
    else say(msg, r.doc.error, true);
  });
  cascadeB.addEventListener("click", async () => {
    say(msg, "Reading what the undo would take back with --cascade…");
    const r = await preview(true);
    if (!r.ok) { say(msg, r.doc.error, true); return; }
    cascade = true;
    showPreview(r.doc);
  });
  confirmB.addEventListener("click", async () => {
    confirmB.disabled = true;
    say(msg, "Planning the undo…");
    try {
      const doc = await post(url, { cascade: cascade, plan: shown.plan, parts: shown.parts });
      location.href = doc.url;
    } catch (e) {
      if (e.doc && e.doc.exit_code === 8) {
        // The plan changed since this preview: nothing was taken back.
        // Show the plan as it is now, and why, to confirm again.
        const r = await preview(cascade);
        if (r.ok) showPreview(r.doc);
        else if (r.doc.dependents && r.doc.dependents.length) showDependents(r.doc);
        else reset();
        say(msg, e.message, true);
        return;
      }
      say(msg, e.message, true);
      confirmB.disabled = false;
    }
  });
  document.getElementById("undo-cancel").addEventListener("click", () => undoDialog.close());
}
