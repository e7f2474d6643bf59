// crmimport desktop: the mapping editor (Profiles › Suggest a profile) —
// an export read by POST /api/profiles/suggest, a kind per file and a
// field per column changed from lists, the first rows mapped again after
// every change (POST /api/profiles/preview), the profile saved (POST
// /api/profiles/save) and New import opened with it. A column's field
// comes with how it is read: a link by id or by name, a date's format (the
// draft's question asked as a choice), a value map, a multi-value
// separator and id prefixes shown. A workbook whose sheets hold different
// kinds is a card per sheet, previewed by its sheet. Everything here comes
// from an export: it is only ever set as text (textContent, .value), never
// as HTML. It uses app.js's el, post, say and pathPicker, which are
// defined once every deferred script has run.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("editor");
  if (!root) return;
  const kinds = JSON.parse(root.getAttribute("data-kinds"));
  const dateFormats = JSON.parse(root.getAttribute("data-date-formats"));
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
  const seq = new Map(); // per file: the newest preview asked, so that an older answer is dropped
  const listWas = new WeakMap(); // a list link's separator, while it is read by name
  const keyOf = (f) => f.ref + "\u0000" + (f.sheet || ""); // a workbook's sheets share a ref

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

  const linkOf = (f, field) => field && f.kind ? (byKind[f.kind].links || {})[field] : undefined;
  const isDate = (f, field) => !!field && !!f.kind && (byKind[f.kind].dates || []).includes(field);

  // How a column's field is read, below its list: a link by id or by
  // name (or by id prefix, shown), a date's format (the draft's question
  // asked as a choice), a multi-value separator, a value map. done is
  // told after a choice.
  function howOf(f, c, into, fieldSel, done) {
    const label = " of column " + c.name + " of " + f.name;
    if (c.question) {
      const q = el("div", { class: "question", role: "group", "aria-label": "question" + label, "data-field": "question" });
      q.appendChild(el("span", { class: "q-mark", "aria-hidden": "true" }, "?"));
      q.appendChild(el("p", {}, c.question.charAt(0).toUpperCase() + c.question.slice(1)));
      const row = el("label", { class: "inline" }, "Its dates are written ");
      const qs = el("select", { "data-field": "date-answer", "aria-label": "answer: date format" + label });
      qs.appendChild(el("option", { value: "" }, c.date_format ? "another way…" : "choose…"));
      for (const d of c.date_choices || []) qs.appendChild(el("option", { value: d }, d));
      if (c.date_format && !(c.date_choices || []).includes(c.date_format)) qs.appendChild(el("option", { value: c.date_format }, c.date_format));
      qs.value = c.date_format || "";
      qs.addEventListener("change", () => {
        c.date_format = qs.value;
        if (qs.value && !c.field && c.date_field) { c.field = c.date_field; fieldSel.value = c.field; }
        done();
      });
      row.appendChild(qs);
      q.appendChild(row);
      if (c.date_format && c.field) q.appendChild(el("p", { class: "answered", "data-field": "answered" }, "Answered: " + c.field + " written " + c.date_format + "."));
      into.appendChild(q);
    } else if (isDate(f, c.field)) {
      const row = el("label", { class: "inline" }, "dates written ");
      const ds = el("select", { "data-field": "date-format", "aria-label": "date format" + label });
      ds.appendChild(el("option", { value: "" }, "ISO 8601, or the file's formats"));
      const offered = [];
      for (const d of [].concat(c.date_format ? [c.date_format] : [], c.date_choices || [], f.date_formats || [], dateFormats)) {
        if (!offered.includes(d)) { offered.push(d); ds.appendChild(el("option", { value: d }, d)); }
      }
      ds.value = c.date_format || "";
      ds.addEventListener("change", () => { c.date_format = ds.value; done(); });
      row.appendChild(ds);
      into.appendChild(row);
    }
    const parent = linkOf(f, c.field);
    if (parent && c.prefixes && Object.keys(c.prefixes).length) {
      const words = Object.entries(c.prefixes).sort().map(([p, k]) => p + "… " + k).join(", ");
      into.appendChild(el("span", { class: "hint", "data-field": "prefixes" }, "by id prefix: " + words));
    } else if (parent) {
      const row = el("label", { class: "inline" }, "a " + parent + "’s ");
      const bs = el("select", { "data-field": "by", "aria-label": "link by" + label });
      bs.appendChild(el("option", { value: "id" }, "id"));
      bs.appendChild(el("option", { value: "name" }, "name"));
      bs.value = c.by_name ? "name" : "id";
      bs.addEventListener("change", () => {
        c.by_name = bs.value === "name";
        if (c.by_name && c.list) { listWas.set(c, c.list); c.list = ""; }
        if (!c.by_name && listWas.has(c)) { c.list = listWas.get(c); listWas.delete(c); }
        done();
      });
      row.appendChild(bs);
      into.appendChild(row);
      if (c.by_name) into.appendChild(el("span", { class: "hint", "data-field": "by-name" }, "looked up among the export’s " + byKind[parent].plural + " by their exact name"));
      if (c.list) into.appendChild(el("span", { class: "hint", "data-field": "list" }, "a list of ids (" + (c.list === "json" ? "a JSON array" : "joined by “" + c.list + "”") + ")"));
    }
    if (c.multi && c.field && !parent) {
      into.appendChild(el("span", { class: "hint", "data-field": "multi" }, "several values joined by “" + c.multi + "”: the first gives " + c.field + ", the whole is kept in extra"));
    }
    const closed = f.kind && c.field ? (byKind[f.kind].values || {})[c.field] : null;
    if (closed) into.appendChild(valueMap(f, c, closed, done));
  }

  // A field's value map: each of the column's values, and the field's
  // value it gives (or itself, as written).
  function valueMap(f, c, closed, done) {
    const box = el("div", { class: "value-map", "data-field": "map" });
    const values = c.values || [];
    if (!values.length) {
      box.appendChild(el("p", { class: "hint" }, "Too many different values to map here: write the map in the profile file (map:)."));
      return box;
    }
    box.appendChild(el("p", { class: "hint" }, "Its values, as " + c.field + ":"));
    const t = el("table", { class: "value-map" });
    const tb = el("tbody");
    for (const v of values) {
      const tr = el("tr", { "data-value": v });
      tr.appendChild(el("th", { scope: "row", class: "sample" }, v));
      tr.appendChild(el("td", { class: "arrow", "aria-hidden": "true" }, "→"));
      const td = el("td");
      const ms = el("select", { "aria-label": c.field + " of the value " + v + " of column " + c.name });
      ms.appendChild(el("option", { value: "" }, "as written"));
      for (const x of closed) ms.appendChild(el("option", { value: x }, x));
      ms.value = (c.map || {})[v] || "";
      ms.addEventListener("change", () => {
        c.map = Object.assign({}, c.map || {});
        if (ms.value) c.map[v] = ms.value; else delete c.map[v];
        done();
      });
      td.appendChild(ms);
      tr.appendChild(td);
      tb.appendChild(tr);
    }
    t.appendChild(tb);
    box.appendChild(t);
    return box;
  }

  // One file: its kind, its columns with their fields, and its first rows
  // as mapped.
  function fileCard(f, i) {
    const card = el("section", { class: "card file", "data-ref": f.ref, "data-sheet": f.sheet || "", "aria-labelledby": "file-h-" + i });
    const head = el("div", { class: "file-head" });
    const h = el("h2", { id: "file-h-" + i, class: "file" }, f.name);
    if (f.sheet) {
      h.appendChild(el("span", { class: "sep", "aria-hidden": "true" }, " › "));
      h.appendChild(el("span", { class: "sheet", "data-field": "sheet", title: "a sheet of the workbook, read as a file of its own" }, "sheet " + f.sheet));
    }
    head.appendChild(h);
    const kindLabel = el("label", { class: "kind" }, "holds ");
    const ks = el("select", { "data-field": "kind", "aria-label": "kind of " + f.name + (f.sheet ? ", sheet " + f.sheet : "") });
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
      const td = el("td", { class: "field" });
      const s = fieldSelect(f, c, "field of column " + c.name + " of " + f.name);
      const how = el("div", { class: "how" });
      const chosen = () => {
        c.why = CHOSEN;
        c.sure = "sure";
        tr.children[2].textContent = "";
        tr.children[2].appendChild(sureBadge(c.sure, c.why));
        tr.children[3].textContent = c.why;
        tr.classList.toggle("extra", !c.field);
      };
      const redraw = () => { how.textContent = ""; howOf(f, c, how, s, () => { chosen(); redraw(); changed(f); }); };
      s.addEventListener("change", () => {
        c.field = s.value;
        if (!linkOf(f, c.field)) c.by_name = false;
        chosen();
        redraw();
        changed(f);
      });
      td.appendChild(s);
      redraw();
      td.appendChild(how);
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

  // After a change: the first rows of the file mapped again, then those of
  // the others (a file's links and duplicates depend on the other files'
  // records), and Check.
  function changed(f) {
    goOn.hidden = true;
    const read = draft.files.filter((x) => x.kind);
    if (!read.length) { showCheck(["no file has a kind: give at least one file the kind it holds"]); return; }
    if (f && f.kind) preview(f);
    for (const x of read) if (x !== f) preview(x);
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
    for (const c of filesBox.querySelectorAll("section.file")) {
      if (c.getAttribute("data-ref") === f.ref && c.getAttribute("data-sheet") === (f.sheet || "")) return c;
    }
    return null;
  }

  async function preview(f) {
    const key = keyOf(f);
    const n = (seq.get(key) || 0) + 1;
    seq.set(key, n);
    const card = cardOf(f);
    const box = card && card.querySelector("[data-field=preview]");
    if (box) box.classList.add("busy");
    let doc = null, err = null;
    try {
      doc = await post("/api/profiles/preview", { draft: draft, ref: f.ref, sheet: f.sheet || "", rows: ROWS });
    } catch (e) { err = e; }
    if (seq.get(key) !== n) return; // a newer change asked again
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
    hintLinks(f, now, doc);
  }

  // A link read by id none of whose values in the rows shown resolves: its
  // column says so, and that a name is read by name.
  function hintLinks(f, card, doc) {
    for (const c of f.columns) {
      const parent = linkOf(f, c.field);
      const tr = Array.from(card.querySelectorAll("table.columns tr[data-column]")).find((x) => x.getAttribute("data-column") === c.name);
      const how = tr && tr.querySelector(".how");
      if (!how) continue;
      const old = how.querySelector("[data-field=by-hint]");
      if (old) old.remove();
      if (!parent || c.by_name || (c.prefixes && Object.keys(c.prefixes).length)) continue;
      const withValue = doc.rows.filter((r) => r.outcome !== "failed" && ((r.unlinked || []).some((l) => l.field === c.field) || r.fields[c.field]));
      const open = withValue.filter((r) => (r.unlinked || []).some((l) => l.field === c.field));
      if (withValue.length && open.length === withValue.length) {
        // An owner the export's users do not give is unowned, and a users
        // file whose id is the owner as written completes it (run --users).
        const text = c.field === "owner_id"
          ? "None of its values shown is the id of one of the export’s users: the records import unowned, the value kept. Give the owners with a users file (id: the owner as written here, email, name), or read them by name if the export has its users"
          : "None of its values shown is the id of one of the export’s " + byKind[parent].plural + ": if they are names, read them by name";
        how.appendChild(el("span", { class: "hint warn", "data-field": "by-hint" }, text));
      }
    }
  }

  // The rows as mapped: per row its id, the fields the file's columns
  // give, its links (an unlinked one marked), its extra, and what a run
  // makes of it.
  function mappedTable(f, doc) {
    const wrap = el("div");
    if (doc.problem) wrap.appendChild(el("p", { class: "error", "data-field": "problem" }, "A run would fail this file: " + doc.problem));
    if (!doc.rows.length) {
      if (!doc.problem) wrap.appendChild(el("p", { class: "empty" }, "The file has no rows."));
      return wrap;
    }
    // As a run counts them: an owner that does not resolve is unowned, not unlinked.
    const unlinked = doc.rows.filter((r) => r.outcome === "imported" && (r.unlinked || []).some((l) => l.field !== "owner_id")).length;
    const counts = el("p", { class: "counts", "data-field": "counts" });
    counts.append((doc.rows.length === 1 ? "Its first row" : "Its first " + doc.rows.length + " rows") + ", as a run would count them: ");
    const part = (cls, text) => counts.appendChild(el("span", { class: "count " + cls }, text));
    part("imported", doc.imported + " imported" + (unlinked ? " (" + unlinked + " unlinked)" : ""));
    counts.append(" · ");
    part("failed", doc.failed + " failed");
    counts.append(" · ");
    part("skipped", doc.skipped + " skipped");
    wrap.appendChild(counts);
    const given = new Set(f.columns.map((c) => c.field).filter((x) => x));
    const fields = doc.fields.filter((x) => x !== "id" && (given.has(x) || doc.rows.some((r) => r.fields[x])));
    const t = el("table", { class: "mapped-rows" });
    const htr = el("tr");
    for (const h of ["Line", "id"].concat(fields, ["Links", "Extra", "Outcome"])) htr.appendChild(el("th", { scope: "col" }, h));
    t.appendChild(el("thead")).appendChild(htr);
    const tb = el("tbody");
    for (const r of doc.rows) {
      const tr = el("tr", { "data-line": String(r.line), "data-outcome": r.outcome });
      tr.classList.add(r.outcome);
      tr.appendChild(el("td", { class: "num" }, r.line));
      tr.appendChild(el("td", { class: "ids", "data-field": "id" }, r.id));
      // A link the profile reads as a list or a name shows under its
      // field too; one that does not resolve is marked.
      const links = r.links || [];
      const open = r.unlinked || [];
      const linked = (x) => links.filter((l) => l.field === x).map((l) => l.value).join(" · ");
      for (const x of fields) {
        const td = el("td", { "data-field": x }, r.fields[x] || linked(x));
        if (isDate(f, x) || x === "amount") td.classList.add("nowrap");
        if (open.some((l) => l.field === x)) {
          td.classList.add("unlinked");
          td.appendChild(el("span", { class: "badge unlinked", "data-field": "unlinked", title: "no " + x.replace(/_id$/, "") + " of the export has it: imported without the link, the value kept in extra" }, x === "owner_id" ? "unowned" : "unlinked"));
        }
        tr.appendChild(td);
      }
      tr.appendChild(el("td", { class: "ids" }, links.filter((l) => !fields.includes(l.field)).map((l) => l.field + " " + l.value).join(" · ")));
      const ex = el("td", { class: "extra" });
      for (const [k, v] of Object.entries(r.extra || {})) {
        const d = el("div");
        d.appendChild(el("span", { class: "k" }, k));
        d.append(" " + (typeof v === "string" ? v : JSON.stringify(v)));
        ex.appendChild(d);
      }
      tr.appendChild(ex);
      const words = { imported: "imported", failed: "fails: ", skipped: "skipped: " };
      tr.appendChild(el("td", { "data-field": "outcome", class: "outcome " + r.outcome }, (words[r.outcome] || r.outcome) + (r.outcome === "imported" ? "" : (r.reason || ""))));
      tb.appendChild(tr);
    }
    t.appendChild(tb);
    const scroll = el("div", { class: "scroll" });
    scroll.appendChild(t);
    wrap.appendChild(scroll);
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
