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
      setTimeout(() => location.reload(), 700);
    } catch (e) {
      say(msg, e.message, true);
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
      for (const f of ["imported", "unchanged", "skipped", "failed", "matched", "unlinked", "duplicate"]) {
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

// New import.
const form = document.getElementById("import-form");
if (form) {
  const msg = document.getElementById("import-message");
  const field = (n) => form.elements.namedItem(n);
  const request = (extra) => Object.assign({
    path: field("path").value.trim(), tenant: field("tenant").value.trim(), source: field("source").value.trim(),
    profile: field("profile").value, only: field("only").value ? [field("only").value] : [],
  }, extra || {});

  document.getElementById("inspect").addEventListener("click", async () => {
    say(msg, "Reading the export…");
    try {
      const doc = await post("/api/inspect", request());
      renderInspection(document.getElementById("preview-body"), doc);
      document.getElementById("preview").hidden = false;
      say(msg, doc.problems && doc.problems.length ? "The export has problems: see below." : "A run would plan the files below.");
    } catch (e) { say(msg, e.message, true); }
  });
  document.getElementById("dry-run").addEventListener("click", async () => {
    say(msg, "Dry run: importing into a throwaway copy…");
    try {
      const doc = await post("/api/imports", request({ dry_run: true }));
      renderSummary(document.getElementById("dry-body"), doc);
      document.getElementById("dry-result").hidden = false;
      say(msg, "Dry run " + doc.status + ": nothing was written.");
    } catch (e) { say(msg, e.message, true); }
  });
  document.getElementById("import").addEventListener("click", async () => {
    say(msg, "Planning the run…");
    try {
      const doc = await post("/api/imports", request());
      location.href = doc.url;
    } catch (e) {
      say(msg, e.message + (e.doc && e.doc.live_run ? " — open run " + e.doc.live_run + " from the Runs page." : ""), true);
    }
  });

  // The folder browser.
  const browser = document.getElementById("browser");
  const browse = document.getElementById("browse");
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
    pick.addEventListener("click", () => { field("path").value = doc.path; browser.hidden = true; browse.setAttribute("aria-expanded", "false"); });
    browser.appendChild(pick);
    for (const e of doc.entries) {
      const b = el("button", { type: "button" }, (e.dir ? "📁 " : "📄 ") + e.name);
      b.addEventListener("click", () => {
        if (e.dir) show(e.path);
        else { field("path").value = e.path; browser.hidden = true; browse.setAttribute("aria-expanded", "false"); }
      });
      browser.appendChild(b);
    }
  }
  browse.addEventListener("click", () => {
    const open = browser.hidden;
    browser.hidden = !open;
    browse.setAttribute("aria-expanded", String(open));
    if (open) show(field("path").value);
  });

  // Files dropped onto the page are saved beside the database, privately.
  const drop = document.getElementById("drop");
  drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", async (ev) => {
    ev.preventDefault();
    drop.classList.remove("over");
    const fd = new FormData();
    for (const f of ev.dataTransfer.files) fd.append("file", f, f.name);
    say(msg, "Saving the dropped files…");
    try {
      const doc = await post("/api/uploads", fd);
      field("path").value = doc.path;
      say(msg, "Saved " + doc.files.length + " files; Preview reads them.");
    } catch (e) { say(msg, e.message, true); }
  });
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

function renderSummary(node, s) {
  node.textContent = "";
  const rows = Object.entries(s.kinds).map(([k, c]) => [k, fmt(c.imported), fmt(c.unchanged), fmt(c.skipped), fmt(c.failed)]);
  node.appendChild(table(["kind", "imported", "unchanged", "skipped", "failed"], rows));
  const ul = el("ul");
  for (const n of (s.warnings || []).concat(s.next || [])) ul.appendChild(el("li", {}, n));
  node.appendChild(ul);
}

// The preview of `inspect`: the plan, then per file its columns and first
// rows as they would be mapped, then the problems a run would find.
function renderInspection(node, doc) {
  node.textContent = "";
  node.appendChild(el("h3", {}, "Plan"));
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
      node.appendChild(table(["line", "id", "outcome", "fields"], f.rows.map((r) => [r.line, r.id,
        r.outcome + (r.reason ? ": " + r.reason : ""),
        Object.entries(r.fields).filter(([, v]) => v !== "").map(([k, v]) => k + " " + JSON.stringify(v)).join(" · ")])));
    }
  }
  node.appendChild(el("h3", {}, "Problems"));
  if (!doc.problems.length) node.appendChild(el("p", { class: "ok" }, "None: a run would start, and every task would open its file."));
  else node.appendChild(table(["file", "kind", "problem"], doc.problems.map((p) => [p.file, p.kind, p.error])));
}
