// crmimport desktop: the mapping editor (Profiles › Suggest a profile) —
// an export read by POST /api/profiles/suggest, a kind per file and a
// field per column changed from lists, the first rows mapped again after
// every change (POST /api/profiles/preview), the profile saved (POST
// /api/profiles/save) and New import opened with it. Everything here comes
// from an export: it is only ever set as text (textContent, .value), never
// as HTML. It uses app.js's el, post, say and pathPicker, which are
// defined once every deferred script has run.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("editor");
  if (!root) return;
  const kinds = JSON.parse(root.getAttribute("data-kinds"));
  const byKind = Object.fromEntries(kinds.map((k) => [k.kind, k]));
  const form = document.getElementById("suggest-form");
  const pathIn = document.getElementById("path");
  const msg = document.getElementById("suggest-message");
  const draftCard = document.getElementById("draft");
  const nameIn = document.getElementById("draft-name");
  const fileIn = document.getElementById("save-file");
  const overwrite = document.getElementById("save-overwrite");
  const saveB = document.getElementById("save");
  const saveMsg = document.getElementById("save-message");
  const checkBox = document.getElementById("check");
  const goOn = document.getElementById("go-on");
  const goImport = document.getElementById("go-import");
  const filesBox = document.getElementById("files");
  const ROWS = 8;
  const CHOSEN = "chosen in the editor";

  let draft = null;
  let exportPath = "";
  const seq = new Map(); // per file ref: the newest preview asked, so that an older answer is dropped

  pathPicker(pathIn, document.getElementById("browser"), document.getElementById("browse"), document.getElementById("drop"), msg,
    () => suggestNow());
  form.addEventListener("submit", (ev) => { ev.preventDefault(); suggestNow(); });
  if (pathIn.value.trim()) suggestNow();

  async function suggestNow() {
    const path = pathIn.value.trim();
    if (!path) { say(msg, "Give the export's path first: a folder, a zip or a file.", true); return; }
    say(msg, "Reading the export's files and headers…");
    let d;
    try {
      d = await post("/api/profiles/suggest", { paths: [path] });
    } catch (e) { say(msg, e.message, true); return; }
    draft = d;
    exportPath = path;
    const cols = draft.files.reduce((n, f) => n + f.columns.length, 0);
    const placed = draft.files.reduce((n, f) => n + (f.kind ? f.columns.filter((c) => c.field).length : 0), 0);
    say(msg, "Suggested: " + draft.files.length + (draft.files.length === 1 ? " file, " : " files, ") + placed + " of " + cols +
      " columns placed, the others kept in extra. Correct what is wrong below.");
    nameIn.value = draft.name;
    if (!fileIn.value) fileIn.value = draft.name + ".yaml";
    goOn.hidden = true;
    say(saveMsg, "");
    draftCard.hidden = false;
    filesBox.textContent = "";
    draft.files.forEach((f, i) => filesBox.appendChild(fileCard(f, i)));
    let any = false;
    for (const f of draft.files) {
      if (f.kind) { any = true; preview(f); }
    }
    if (!any) showCheck(["no file has a kind: give at least one file the kind it holds"]);
  }

  nameIn.addEventListener("input", () => {
    if (!draft) return;
    const was = draft.name;
    draft.name = nameIn.value.trim();
    if (fileIn.value === was + ".yaml") fileIn.value = draft.name + ".yaml";
    changed(null);
  });

  const sureBadge = (sure, why) => {
    const chosen = why === CHOSEN;
    return el("span", { class: "sure sure-" + (chosen ? "chosen" : (sure || "none")), "data-field": "sure" },
      chosen ? "chosen" : (sure || "not placed"));
  };

  function fieldSelect(f, c, label) {
    const s = el("select", { "data-field": "field", "aria-label": label });
    s.appendChild(el("option", { value: "" }, "extra (kept as it is)"));
    for (const name of (byKind[f.kind] || { fields: [] }).fields) {
      const o = el("option", { value: name }, name);
      if (name === c.field) o.selected = true;
      s.appendChild(o);
    }
    s.disabled = !f.kind;
    return s;
  }

  // One file: its kind, its columns with their fields, and its first rows
  // as mapped.
  function fileCard(f, i) {
    const card = el("section", { class: "card file", "data-ref": f.ref, "aria-labelledby": "file-h-" + i });
    const head = el("div", { class: "file-head" });
    head.appendChild(el("h2", { id: "file-h-" + i, class: "file" }, f.name));
    const kindLabel = el("label", { class: "kind" }, "holds ");
    const ks = el("select", { "data-field": "kind", "aria-label": "kind of " + f.name });
    ks.appendChild(el("option", { value: "" }, "leave out"));
    for (const k of kinds) {
      const o = el("option", { value: k.kind }, k.plural);
      if (k.kind === f.kind) o.selected = true;
      ks.appendChild(o);
    }
    kindLabel.appendChild(ks);
    head.appendChild(kindLabel);
    head.appendChild(sureBadge(f.kind_sure, f.kind_why));
    head.appendChild(el("span", { class: "why", "data-field": "kind-why" }, f.kind_why));
    card.appendChild(head);
    if (f.ref !== f.name) card.appendChild(el("p", { class: "ref file" }, f.ref));

    const t = el("table", { class: "columns" });
    const htr = el("tr");
    for (const h of ["Column", "Field", "How sure", "Why", "Sample values"]) htr.appendChild(el("th", { scope: "col" }, h));
    t.appendChild(el("thead")).appendChild(htr);
    const tb = el("tbody");
    for (const c of f.columns) {
      const tr = el("tr", { "data-column": c.name });
      tr.appendChild(el("th", { scope: "row", class: "colname" }, c.name));
      const td = el("td");
      const s = fieldSelect(f, c, "field of column " + c.name + " of " + f.name);
      s.addEventListener("change", () => {
        c.field = s.value;
        c.why = CHOSEN;
        c.sure = "sure";
        tr.children[2].textContent = "";
        tr.children[2].appendChild(sureBadge(c.sure, c.why));
        tr.children[3].textContent = c.why;
        tr.classList.toggle("extra", !c.field);
        changed(f);
      });
      td.appendChild(s);
      if (c.list) td.appendChild(el("span", { class: "hint" }, " a list (" + c.list + ")"));
      tr.appendChild(td);
      const sureTd = el("td");
      sureTd.appendChild(sureBadge(c.sure, c.why));
      tr.appendChild(sureTd);
      tr.appendChild(el("td", { class: "why" }, c.why || (c.field ? "" : "not placed: kept in extra")));
      const samples = el("td", { class: "samples" });
      for (const v of (c.samples || []).slice(0, 4)) samples.appendChild(el("span", { class: "sample" }, v));
      tr.appendChild(samples);
      tr.classList.toggle("extra", !c.field);
      tb.appendChild(tr);
    }
    t.appendChild(tb);
    card.appendChild(t);
    card.appendChild(el("h3", {}, "First rows as mapped"));
    const pv = el("div", { class: "mapped", "data-field": "preview", "aria-live": "polite" });
    if (!f.kind) pv.appendChild(el("p", { class: "empty" }, "Left out: a run does not read this file. Give it a kind to import it."));
    card.appendChild(pv);

    ks.addEventListener("change", () => {
      f.kind = ks.value;
      f.kind_why = CHOSEN;
      f.kind_sure = "sure";
      const fields = f.kind ? byKind[f.kind].fields : [];
      for (const c of f.columns) {
        if (c.field && !fields.includes(c.field)) {
          c.why = c.field + " is not a field of " + (f.kind ? byKind[f.kind].plural : "a file left out") + ": kept in extra";
          c.field = "";
          c.sure = "";
        }
      }
      const fresh = fileCard(f, i);
      card.replaceWith(fresh);
      fresh.querySelector("select[data-field=kind]").focus();
      changed(f);
    });
    return card;
  }

  // After a change: the first rows of the file mapped again, and Check.
  function changed(f) {
    goOn.hidden = true;
    if (f && f.kind) { preview(f); return; }
    const other = draft.files.find((x) => x.kind);
    if (other) preview(other);
    else showCheck(["no file has a kind: give at least one file the kind it holds"]);
  }

  function showCheck(lines) {
    checkBox.textContent = "";
    if (!lines || !lines.length) {
      checkBox.appendChild(el("p", { class: "ok", "data-field": "check-ok" }, "Check: nothing wrong — the profile can be saved."));
      saveB.disabled = false;
      return;
    }
    checkBox.appendChild(el("p", { class: "error" }, "Check: fix these before saving"));
    const ul = el("ul", { class: "problems" });
    for (const l of lines) ul.appendChild(el("li", { class: "error" }, l));
    checkBox.appendChild(ul);
    saveB.disabled = true;
  }

  function cardOf(f) {
    for (const c of filesBox.querySelectorAll("section.file")) if (c.getAttribute("data-ref") === f.ref) return c;
    return null;
  }

  async function preview(f) {
    const n = (seq.get(f.ref) || 0) + 1;
    seq.set(f.ref, n);
    const card = cardOf(f);
    const box = card && card.querySelector("[data-field=preview]");
    if (box) box.classList.add("busy");
    let doc = null, err = null;
    try {
      doc = await post("/api/profiles/preview", { draft: draft, ref: f.ref, rows: ROWS });
    } catch (e) { err = e; }
    if (seq.get(f.ref) !== n) return; // a newer change asked again
    const now = cardOf(f);
    const into = now && now.querySelector("[data-field=preview]");
    if (!into) return;
    into.classList.remove("busy");
    into.textContent = "";
    if (err) {
      into.appendChild(el("p", { class: "error", "data-field": "preview-error" }, err.message));
      if (err.doc && err.doc.check) showCheck(err.doc.check);
      else saveB.disabled = true;
      return;
    }
    showCheck(doc.check);
    if (!f.kind) return;
    into.appendChild(mappedTable(f, doc));
    into.setAttribute("data-rows", String(doc.rows.length));
  }

  // The rows as mapped: per row its id, the fields the file's columns
  // give, its links, its extra, and why it would fail.
  function mappedTable(f, doc) {
    const wrap = el("div");
    if (doc.problem) wrap.appendChild(el("p", { class: "error", "data-field": "problem" }, "A run would fail this file: " + doc.problem));
    if (!doc.rows.length) {
      if (!doc.problem) wrap.appendChild(el("p", { class: "empty" }, "The file has no rows."));
      return wrap;
    }
    const given = new Set(f.columns.map((c) => c.field).filter((x) => x));
    const fields = doc.fields.filter((x) => x !== "id" && (given.has(x) || doc.rows.some((r) => r.fields[x])));
    const t = el("table", { class: "mapped-rows" });
    const htr = el("tr");
    for (const h of ["Line", "id"].concat(fields, ["Links", "Extra", "Outcome"])) htr.appendChild(el("th", { scope: "col" }, h));
    t.appendChild(el("thead")).appendChild(htr);
    const tb = el("tbody");
    for (const r of doc.rows) {
      const tr = el("tr", { "data-line": String(r.line) });
      if (r.error) tr.classList.add("fails");
      tr.appendChild(el("td", { class: "num" }, r.line));
      tr.appendChild(el("td", { class: "ids", "data-field": "id" }, r.id));
      // A link the profile reads as a list shows under its field too.
      const links = r.links || [];
      const linked = (x) => links.filter((l) => l.field === x).map((l) => l.value).join(" · ");
      for (const x of fields) tr.appendChild(el("td", { "data-field": x }, r.fields[x] || linked(x)));
      tr.appendChild(el("td", { class: "ids" }, links.filter((l) => !fields.includes(l.field)).map((l) => l.field + " " + l.value).join(" · ")));
      const ex = el("td", { class: "extra" });
      for (const [k, v] of Object.entries(r.extra || {})) {
        const d = el("div");
        d.appendChild(el("span", { class: "k" }, k));
        d.append(" " + (typeof v === "string" ? v : JSON.stringify(v)));
        ex.appendChild(d);
      }
      tr.appendChild(ex);
      tr.appendChild(el("td", { "data-field": "outcome", class: r.error ? "error" : "ok" }, r.error ? "fails: " + r.error : "valid"));
      tb.appendChild(tr);
    }
    t.appendChild(tb);
    wrap.appendChild(t);
    return wrap;
  }

  saveB.addEventListener("click", async () => {
    if (!draft) return;
    draft.name = nameIn.value.trim();
    say(saveMsg, "Saving the profile…");
    goOn.hidden = true;
    try {
      const doc = await post("/api/profiles/save", { draft: draft, file: fileIn.value.trim(), overwrite: overwrite.checked, export: exportPath });
      say(saveMsg, "Saved to " + doc.file + ". `crmimport run --profile " + doc.file + "` reads it too.");
      goImport.href = doc.import_url;
      goOn.hidden = false;
    } catch (e) {
      say(saveMsg, e.message + (e.status === 409 ? " (tick “replace a file of that name” to replace it)" : ""), true);
    }
  });
});
