// crmimport desktop: the review grid of a run's failed and skipped
// records (desktop/grid.go, package grid). The server pages: this script
// holds one page of rows, never all of them. A cell's edit is kept in the
// database as soon as it is made (POST /api/runs/ID/grid/edits); bulk
// changes are previewed, then saved (POST …/grid/bulk); Re-import sends
// the edited rows of one file through the ledger (POST …/grid/reimport).
// Data from exports is only ever set as text (textContent, .value), never
// as HTML.
"use strict";
{
  const app = document.getElementById("grid-app");
  if (app) {
    const run = app.getAttribute("data-run");
    const $ = (id) => document.getElementById(id);
    const table = $("grid");
    const thead = table.querySelector("thead");
    const tbody = table.querySelector("tbody");
    const status = $("g-status");
    const progress = $("g-progress");
    const empty = $("g-empty");
    const PAGE = 100;

    const state = {
      mode: "failed", // or "skipped"
      offset: 0,
      total: 0,
      page: null, // the grid's page (GET /api/runs/ID/grid)
      skipKeys: { next: null, prev: null, first: 0 },
      focus: { row: 0, col: 0 },
      editing: null, // { td, input, row, column }
      bulkShown: null, // the request the preview answered
    };

    const plural = (n, one, many) => n.toLocaleString("en-US") + " " + (n === 1 ? one : many);
    const text = (tag, value, cls) => {
      const e = document.createElement(tag);
      if (cls) e.className = cls;
      e.textContent = value;
      return e;
    };

    async function request(method, url, body) {
      const opts = { method: method, headers: { "X-Requested-By": "crmimport" }, credentials: "same-origin" };
      if (body !== undefined) { opts.body = JSON.stringify(body); opts.headers["Content-Type"] = "application/json"; }
      const res = await fetch(url, opts);
      let doc = null;
      try { doc = await res.json(); } catch (e) { doc = { error: "the server answered " + res.status }; }
      if (!res.ok) throw Object.assign(new Error(doc.error || ("HTTP " + res.status)), { doc: doc });
      return doc;
    }

    // The filters, as the API's query names them.
    function filters() {
      const f = {};
      const set = (k, v) => { if (v) f[k] = v; };
      set("file", $("g-file").value);
      set("kind", $("g-kind").value);
      set("reason", $("g-reason").value);
      set("id", $("g-id").value.trim());
      set("value", $("g-value").value);
      if ($("g-has").value) { set("column", $("g-column").value); set("has", $("g-has").value); }
      const sort = $("g-sort").value;
      if (sort.startsWith("column:")) { f.sort = "column"; f.by = sort.slice(7); } else if (sort !== "line") f.sort = sort;
      if ($("g-desc").checked) f.desc = "1";
      return f;
    }

    function fillSelect(sel, options, chosen, first) {
      sel.textContent = "";
      if (first) sel.appendChild(new Option(first[1], first[0]));
      for (const [value, label] of options) sel.appendChild(new Option(label, value));
      sel.value = chosen;
      if (sel.value !== chosen) sel.selectedIndex = 0;
    }

    // ---- Failed rows -------------------------------------------------

    let loading = 0; // the answer that counts: the latest asked
    async function loadFailed() {
      const f = filters();
      const q = new URLSearchParams(f);
      q.set("offset", String(state.offset));
      q.set("limit", String(PAGE));
      const ticket = ++loading;
      const started = Date.now();
      let timer = null;
      if (f.sort === "column" || f.sort === "reason" || f.value || f.has) {
        // A sort by a column, or a search in every cell, reads every row
        // the filters choose: say so while it works.
        const words = f.sort === "column" ? "Sorting by " + f.by : f.sort === "reason" ? "Sorting by reason" : "Searching every row";
        const tick = () => {
          status.textContent = words + "… " + Math.floor((Date.now() - started) / 1000) + " s";
        };
        tick();
        progress.hidden = false;
        timer = setInterval(tick, 250);
      } else {
        status.textContent = "Loading…";
      }
      let p;
      try {
        p = await request("GET", "/api/runs/" + run + "/grid?" + q.toString());
      } catch (e) {
        if (ticket === loading) { status.textContent = e.message; status.classList.add("error"); }
        return;
      } finally {
        if (timer) clearInterval(timer);
        if (ticket === loading) progress.hidden = true;
      }
      if (ticket !== loading) return;
      status.classList.remove("error");
      state.page = p;
      state.total = p.total;
      renderFilters(p);
      renderFailed(p);
      renderPending(p);
    }

    function renderFilters(p) {
      fillSelect($("g-file"), p.files.map((c) => [c.file, c.file + " (" + c.count.toLocaleString("en-US") + ")"]), p.file);
      const kind = $("g-kind").value;
      const kinds = Array.from($("g-kind").options).slice(1).map((o) => o.value);
      const counts = new Map(p.kinds.map((c) => [c.kind, c.count]));
      fillSelect($("g-kind"), kinds.map((k) => [k, counts.has(k) ? k + " (" + counts.get(k).toLocaleString("en-US") + ")" : k]), kind, ["", "every kind"]);
      fillSelect($("g-reason"), p.reasons.map((c) => [c.reason, c.reason + " (" + c.count.toLocaleString("en-US") + ")"]), $("g-reason").value, ["", "every reason"]);
      const cols = p.columns.map((c) => [c, c]);
      fillSelect($("g-column"), cols, $("g-column").value, ["", "—"]);
      fillSelect($("b-column"), cols, $("b-column").value || p.columns[0] || "");
      const sort = $("g-sort").value;
      fillSelect($("g-sort"), [["reason", "reason"], ["source_id", "source id"]].concat(p.columns.map((c) => ["column:" + c, c])), sort, ["line", "file order"]);
    }

    function renderFailed(p) {
      thead.textContent = "";
      tbody.textContent = "";
      const head = document.createElement("tr");
      for (const [label, cls] of [["Line", "num"], ["Kind", ""], ["Source id", ""], ["Reason", "reason"]]) {
        const th = text("th", label, cls);
        th.scope = "col";
        head.appendChild(th);
      }
      for (const c of p.columns) {
        const th = text("th", c, "col");
        th.scope = "col";
        head.appendChild(th);
      }
      const last = text("th", "Re-import", "outcome");
      last.scope = "col";
      head.appendChild(last);
      thead.appendChild(head);
      table.setAttribute("aria-rowcount", String(p.total + 1));
      table.setAttribute("aria-colcount", String(p.columns.length + 5));

      const from = $("b-from");
      fillSelect(from, p.rows.map((r) => [String(r.id), "line " + r.line + " (" + (r.source_id || "no id") + ")"]), from.value, ["0", "every row chosen"]);

      p.rows.forEach((r, i) => {
        const tr = document.createElement("tr");
        tr.setAttribute("data-failure", String(r.id));
        tr.setAttribute("aria-rowindex", String(p.offset + i + 2));
        if (r.pending) tr.classList.add("edited");
        const line = text("td", r.line ? String(r.line) : "", "num");
        tr.appendChild(line);
        tr.appendChild(text("td", r.kind));
        tr.appendChild(text("td", r.source_id, "ids"));
        tr.appendChild(text("td", r.reason, "reason"));
        const asRead = new Map(r.raw.map((c) => [c.name, c.value]));
        const unreadable = asRead.has("(text)");
        p.columns.forEach((col, j) => {
          const td = document.createElement("td");
          td.className = "cell";
          td.setAttribute("role", "gridcell");
          td.setAttribute("data-column", col);
          td.tabIndex = -1;
          if (unreadable) {
            if (j === 0) {
              td.colSpan = p.columns.length;
              td.classList.add("unreadable");
              td.textContent = asRead.get("(text)");
              td.setAttribute("aria-readonly", "true");
              tr.appendChild(td);
            }
            return;
          }
          const edited = Object.prototype.hasOwnProperty.call(r.edits, col);
          const value = edited ? r.edits[col] : (asRead.get(col) || "");
          td.textContent = value;
          if (edited) {
            td.classList.add("edited");
            td.title = "was: " + (asRead.get(col) || "(empty)");
          }
          if (col === r.failing) {
            td.classList.add("failing");
            td.title = (td.title ? td.title + " — " : "") + r.reason;
            td.setAttribute("aria-description", "fails: " + r.reason);
          }
          tr.appendChild(td);
        });
        tr.appendChild(outcomeCell(r));
        tbody.appendChild(tr);
      });
      const shown = p.rows.length;
      empty.hidden = shown > 0;
      if (!shown) empty.textContent = p.files.length ? (p.total ? "No rows past this page: go to the first page." : "No failed rows match.") : "This run has no failed rows with a file to show.";
      status.textContent = shown ? "Rows " + (p.offset + 1).toLocaleString("en-US") + "–" + (p.offset + shown).toLocaleString("en-US") + " of " + plural(p.total, "row", "rows") + " of " + p.file : (p.files.length ? "0 rows" : "");
      pagerButtons(p.offset > 0, p.offset + shown < p.total, true);
      const rows = tbody.rows.length;
      state.focus.row = Math.min(state.focus.row, Math.max(rows - 1, 0));
      setFocus(state.focus.row, state.focus.col, false);
    }

    const outcomeWords = {
      imported: (o, run) => ["imported", "by run " + run + (o.action === "matched" ? ", matched to an existing record" : "")],
      unchanged: (o) => ["unchanged", "already imported" + (o.owner_run ? " by run " + o.owner_run : "")],
      skipped: (o) => ["skipped", o.reason],
      failed: (o) => ["failed again", o.reason],
      pending: () => ["waiting", "the run has not read it yet"],
      "not read": () => ["not read", "the run did not read this row"],
      unknown: (o) => ["unknown", o.reason],
    };

    function outcomeCell(r) {
      const td = document.createElement("td");
      td.className = "fix-outcome";
      td.setAttribute("data-field", "fix");
      let word = "", why = "", cls = "";
      if (r.pending) {
        word = "edited"; why = "waits for Re-import"; cls = "edited";
      } else if (r.outcome) {
        [word, why] = (outcomeWords[r.outcome.outcome] || (() => [r.outcome.outcome, ""]))(r.outcome, r.fix_run);
        cls = "outcome-" + r.outcome.outcome.replace(/\s+/g, "-");
      } else if (r.fix_run) {
        word = "sent"; why = "run " + r.fix_run;
      }
      if (word) {
        td.appendChild(text("span", word, "fix-badge " + cls));
        if (why) td.appendChild(text("span", why, "why"));
        if (r.fix_run) {
          const a = text("a", "run " + r.fix_run, "run-link");
          a.href = "/runs/" + r.fix_run;
          td.appendChild(a);
        }
      }
      return td;
    }

    function renderPending(p) {
      const waiting = p.pending;
      const total = waiting.reduce((n, c) => n + c.count, 0);
      const go = $("r-go");
      if (!total) {
        $("r-waiting").textContent = "No edits wait.";
        go.disabled = true;
        go.textContent = "Re-import";
        $("r-why").textContent = "Nothing to re-import: edit a cell or save a bulk change first.";
        return;
      }
      $("r-waiting").textContent = "Edits wait on " + waiting.map((c) => plural(c.count, "row", "rows") + " of " + c.file).join(", ") + ".";
      const file = waiting.find((c) => c.file === p.file) || waiting[0];
      go.disabled = reimporting;
      go.setAttribute("data-file", file.file);
      go.textContent = "Re-import " + plural(file.count, "row", "rows") + " of " + file.file;
      $("r-why").textContent = reimporting ? "A re-import is working: one run at a time for a tenant." :
        (waiting.length > 1 ? "One file at a time: the others wait for the next re-import." : "");
    }

    function pagerButtons(prev, next, last) {
      $("p-first").disabled = !prev;
      $("p-prev").disabled = !prev;
      $("p-next").disabled = !next;
      $("p-last").disabled = !next || !last;
    }

    // ---- Keyboard: a roving focus over the data cells -----------------

    function cellAt(row, col) {
      const tr = tbody.rows[row];
      if (!tr) return null;
      const cells = tr.querySelectorAll("td.cell");
      return cells[Math.min(col, cells.length - 1)] || null;
    }

    function setFocus(row, col, move) {
      const rows = tbody.rows.length;
      if (!rows) return;
      row = Math.max(0, Math.min(row, rows - 1));
      const width = state.page ? state.page.columns.length : 0;
      col = Math.max(0, Math.min(col, width - 1));
      const td = cellAt(row, col);
      if (!td) return;
      for (const c of tbody.querySelectorAll("td.cell[tabindex='0']")) c.tabIndex = -1;
      td.tabIndex = 0;
      state.focus = { row: row, col: col };
      if (move) td.focus();
    }

    function startEdit(td) {
      if (state.mode !== "failed" || td.classList.contains("unreadable") || state.editing) return;
      const input = document.createElement("input");
      input.type = "text";
      input.className = "cell-input";
      input.spellcheck = false;
      input.value = td.textContent;
      input.setAttribute("aria-label", "New value of " + td.getAttribute("data-column"));
      const was = td.textContent;
      td.textContent = "";
      td.appendChild(input);
      td.classList.add("editing");
      state.editing = { td: td, input: input, was: was };
      input.focus();
      input.select();
    }

    function stopEdit(keep) {
      const e = state.editing;
      if (!e) return null;
      state.editing = null;
      const value = e.input.value;
      e.td.classList.remove("editing");
      e.td.textContent = keep ? value : e.was;
      if (keep && value !== e.was) {
        const tr = e.td.closest("tr");
        saveCell(tr, e.td, value);
      }
      return e.td;
    }

    async function saveCell(tr, td, value) {
      td.classList.add("edited", "saving");
      try {
        await request("POST", "/api/runs/" + run + "/grid/edits", {
          rows: [{ failure: Number(tr.getAttribute("data-failure")), cells: [{ name: td.getAttribute("data-column"), value: value }] }],
        });
        td.classList.remove("saving");
        await loadFailed(); // the row as the database keeps it now
      } catch (e) {
        td.classList.remove("saving");
        td.classList.add("save-failed");
        status.textContent = "Not kept: " + e.message;
        status.classList.add("error");
      }
    }

    tbody.addEventListener("click", (ev) => {
      const td = ev.target.closest("td.cell");
      if (!td || state.editing) return;
      const tr = td.closest("tr");
      setFocus(tr.sectionRowIndex, Array.from(tr.querySelectorAll("td.cell")).indexOf(td), true);
    });
    tbody.addEventListener("dblclick", (ev) => {
      const td = ev.target.closest("td.cell");
      if (td) startEdit(td);
    });

    table.addEventListener("keydown", (ev) => {
      const { row, col } = state.focus;
      if (state.editing) {
        if (ev.key === "Enter") { ev.preventDefault(); stopEdit(true); setFocus(row + 1, col, true); }
        else if (ev.key === "Escape") { ev.preventDefault(); stopEdit(false); setFocus(row, col, true); }
        else if (ev.key === "Tab") { ev.preventDefault(); stopEdit(true); setFocus(row, col + (ev.shiftKey ? -1 : 1), true); }
        return;
      }
      if (!ev.target.closest || !ev.target.closest("td.cell")) return;
      const width = state.page ? state.page.columns.length : 0;
      switch (ev.key) {
        case "ArrowUp": ev.preventDefault(); setFocus(row - 1, col, true); break;
        case "ArrowDown": ev.preventDefault(); setFocus(row + 1, col, true); break;
        case "ArrowLeft": ev.preventDefault(); setFocus(row, col - 1, true); break;
        case "ArrowRight": ev.preventDefault(); setFocus(row, col + 1, true); break;
        case "Home": ev.preventDefault(); setFocus(row, 0, true); break;
        case "End": ev.preventDefault(); setFocus(row, width - 1, true); break;
        case "Tab":
          // Right (left with Shift) along the row, then the next row; out
          // of the grid past its last cell.
          if (!ev.shiftKey && (col < width - 1 || row < tbody.rows.length - 1)) {
            ev.preventDefault();
            if (col < width - 1) setFocus(row, col + 1, true); else setFocus(row + 1, 0, true);
          } else if (ev.shiftKey && (col > 0 || row > 0)) {
            ev.preventDefault();
            if (col > 0) setFocus(row, col - 1, true); else setFocus(row - 1, width - 1, true);
          }
          break;
        case "Enter": case "F2": ev.preventDefault(); startEdit(cellAt(row, col)); break;
      }
    });
    tbody.addEventListener("focusout", (ev) => {
      // Clicking away keeps what was typed, as a spreadsheet does.
      if (state.editing && ev.target === state.editing.input) stopEdit(true);
    });

    // ---- Bulk operations ----------------------------------------------

    function bulkBody(save) {
      const op = $("b-op").value;
      return {
        filters: filters(), op: op, column: $("b-column").value, find: $("b-find").value, replace: $("b-replace").value,
        format: $("b-format").value, value: $("b-value").value, from: Number($("b-from").value || 0),
        encoding: $("b-encoding").value, save: save,
      };
    }

    function showOp() {
      const op = $("b-op").value;
      for (const l of app.querySelectorAll("#bulk [data-op]")) l.hidden = !l.getAttribute("data-op").split(" ").includes(op);
      clearPreview("");
    }

    function clearPreview(why) {
      state.bulkShown = null;
      $("b-save").disabled = true;
      $("b-save").textContent = "Save changes";
      $("b-save-why").textContent = why === "" ? "Preview first: Save keeps exactly what the preview showed." : why;
      $("b-examples").hidden = true;
      $("b-command").hidden = true;
      $("b-message").textContent = "";
    }

    async function bulk(save) {
      const body = bulkBody(save);
      const msg = $("b-message");
      msg.classList.remove("error");
      msg.textContent = save ? "Saving…" : "Reading every row the filters choose…";
      let res;
      try {
        res = await request("POST", "/api/runs/" + run + "/grid/bulk", body);
      } catch (e) {
        msg.textContent = e.message;
        msg.classList.add("error");
        return;
      }
      const ex = $("b-examples");
      const rows = ex.querySelector("tbody");
      rows.textContent = "";
      if (res.instead) {
        msg.textContent = res.instead;
        $("b-command").textContent = res.command || "";
        $("b-command").hidden = !res.command;
        ex.hidden = true;
        $("b-save").disabled = true;
        $("b-save-why").textContent = "Nothing to save: this file's rows cannot be decoded again here.";
        return;
      }
      for (const c of res.examples) {
        const tr = document.createElement("tr");
        tr.appendChild(text("td", c.source_id, "ids"));
        tr.appendChild(text("td", String(c.line), "num"));
        tr.appendChild(text("td", c.before, "before"));
        tr.appendChild(text("td", c.after, "after"));
        rows.appendChild(tr);
      }
      ex.hidden = res.examples.length === 0;
      const left = res.left ? " (" + plural(res.left, "row", "rows") + " left as they are)" : "";
      if (save) {
        clearPreview("Saved. Preview again to change more.");
        msg.textContent = "Saved: " + plural(res.count, "cell", "cells") + " of " + res.column + " changed" + left + ". They wait for Re-import.";
        await loadFailed();
        return;
      }
      msg.textContent = "Preview: " + plural(res.count, "cell", "cells") + " of " + res.column + " would change" + left + (res.examples.length ? "; the first ones below." : ".");
      state.bulkShown = JSON.stringify(bulkBody(false));
      const save_ = $("b-save");
      save_.disabled = res.count === 0;
      save_.textContent = res.count ? "Save " + plural(res.count, "change", "changes") : "Save changes";
      $("b-save-why").textContent = res.count ? "" : "Nothing would change.";
    }

    $("b-op").addEventListener("change", showOp);
    for (const id of ["b-column", "b-find", "b-replace", "b-format", "b-value", "b-from", "b-encoding"]) {
      $(id).addEventListener("input", () => { if (state.bulkShown) clearPreview("The operation changed: preview it again."); });
    }
    $("b-preview").addEventListener("click", () => bulk(false));
    $("b-save").addEventListener("click", () => {
      if (state.bulkShown !== JSON.stringify(bulkBody(false))) { clearPreview("The operation or the filters changed: preview it again."); return; }
      bulk(true);
    });

    // ---- Re-import ------------------------------------------------------

    let reimporting = false;
    $("r-go").addEventListener("click", async () => {
      const file = $("r-go").getAttribute("data-file") || "";
      const msg = $("r-message");
      msg.classList.remove("error");
      reimporting = true;
      $("r-go").disabled = true;
      msg.textContent = "Writing the fix file and planning the run…";
      let doc;
      try {
        doc = await request("POST", "/api/runs/" + run + "/grid/reimport", { file: file });
      } catch (e) {
        reimporting = false;
        msg.textContent = e.message + (e.doc && e.doc.live_run ? " — open run " + e.doc.live_run + " from the Runs page." : "");
        msg.classList.add("error");
        loadFailed();
        return;
      }
      for (;;) {
        let out;
        try {
          out = await request("GET", doc.outcomes);
        } catch (e) {
          msg.textContent = e.message;
          msg.classList.add("error");
          break;
        }
        const counts = {};
        for (const o of out.outcomes) {
          const w = (outcomeWords[o.outcome] || (() => [o.outcome]))(o, out.run)[0];
          counts[w] = (counts[w] || 0) + 1;
        }
        const summary = Object.entries(counts).map(([w, n]) => n + " " + w).join(", ");
        msg.textContent = "";
        msg.append("Run ");
        const a = text("a", String(out.run));
        a.href = out.url;
        msg.appendChild(a);
        msg.append(" " + (out.done ? out.status : "is working") + ": " + summary + (out.done ? "." : "…"));
        if (out.done) break;
        await new Promise((r) => setTimeout(r, 400));
      }
      reimporting = false;
      loadFailed();
    });

    // ---- Skipped records -------------------------------------------------

    // What a skip waits for, in words: the kind its link field names.
    const parentOf = (field) => {
      const f = field.toLowerCase().replace(/_?id$/, "");
      return f === "owner" ? "a user" : (/^[aeiou]/.test(f) ? "an " : "a ") + f;
    };

    async function loadSkipped(key, back) {
      const q = new URLSearchParams();
      const f = filters();
      if (f.kind) q.set("kind", f.kind);
      if (f.id) q.set("id", f.id);
      if (key) q.set(back ? "before" : "after", key.kind + ":" + key.source_id);
      q.set("limit", String(PAGE));
      status.textContent = "Loading…";
      let p;
      try {
        p = await request("GET", "/api/runs/" + run + "/skipped?" + q.toString());
      } catch (e) {
        status.textContent = e.message;
        return;
      }
      state.skipKeys = { next: p.next, prev: p.prev, first: p.first };
      thead.textContent = "";
      tbody.textContent = "";
      const head = document.createElement("tr");
      for (const h of ["Kind", "Source id", "Reason", "Waits for", "Parent it names", "Parent imported since"]) {
        const th = text("th", h);
        th.scope = "col";
        head.appendChild(th);
      }
      thead.appendChild(head);
      for (const s of p.records) {
        const tr = document.createElement("tr");
        tr.setAttribute("data-skip", s.kind + ":" + s.source_id);
        tr.appendChild(text("td", s.kind));
        tr.appendChild(text("td", s.source_id, "ids"));
        tr.appendChild(text("td", s.reason));
        const fields = Object.keys(s.waits_for).sort();
        const waits = document.createElement("td");
        waits.setAttribute("data-field", "waits");
        const names = document.createElement("td");
        names.setAttribute("data-field", "parent");
        if (s.waits_for_nothing) {
          waits.textContent = "nothing a run of this export gives";
        } else {
          waits.textContent = fields.length ? fields.map(parentOf).join(" or ") :
            (s.reason === "not linked to any record" ? "a parent: the record names none" : "—");
        }
        for (const fld of fields) {
          const span = document.createElement("span");
          span.className = "wait";
          span.append(fld + " ");
          span.appendChild(text("code", s.waits_for[fld]));
          names.appendChild(span);
          names.append(" ");
        }
        if (!fields.length) names.textContent = "—";
        tr.appendChild(waits);
        tr.appendChild(names);
        tr.appendChild(text("td", s.ready.length ? s.ready.join(", ") : "—"));
        tbody.appendChild(tr);
      }
      const shown = p.records.length;
      empty.hidden = shown > 0;
      if (!shown) empty.textContent = "No skipped records that this run still owns match.";
      status.textContent = shown ? "Records " + p.first.toLocaleString("en-US") + "–" + (p.first + shown - 1).toLocaleString("en-US") + " of " + plural(p.total, "skipped record", "skipped records") : "0 records";
      pagerButtons(!!p.prev, !!p.next, false);
      $("p-last").disabled = true;
    }

    // ---- Wiring ------------------------------------------------------------

    function load() {
      if (state.mode === "failed") return loadFailed();
      return loadSkipped(null, false);
    }

    function setMode(mode) {
      state.mode = mode;
      $("tab-failed").setAttribute("aria-pressed", String(mode === "failed"));
      $("tab-skipped").setAttribute("aria-pressed", String(mode === "skipped"));
      for (const e of app.querySelectorAll("[data-for=failed]")) e.hidden = mode !== "failed";
      state.offset = 0;
      load();
    }
    $("tab-failed").addEventListener("click", () => setMode("failed"));
    $("tab-skipped").addEventListener("click", () => setMode("skipped"));

    $("grid-filters").addEventListener("submit", (ev) => { ev.preventDefault(); state.offset = 0; clearPreview(""); load(); });
    $("g-file").addEventListener("change", () => {
      $("g-reason").value = ""; $("g-column").value = ""; $("g-sort").value = "line";
      state.offset = 0; clearPreview(""); load();
    });
    for (const id of ["g-kind", "g-reason", "g-sort", "g-desc"]) {
      $(id).addEventListener("change", () => { state.offset = 0; clearPreview(""); load(); });
    }
    $("g-clear").addEventListener("click", () => {
      for (const id of ["g-kind", "g-reason", "g-column"]) $(id).value = "";
      for (const id of ["g-id", "g-value", "g-has"]) $(id).value = "";
      $("g-sort").value = "line";
      $("g-desc").checked = false;
      state.offset = 0; clearPreview(""); load();
    });
    $("p-first").addEventListener("click", () => { if (state.mode === "failed") { state.offset = 0; loadFailed(); } else loadSkipped(null, false); });
    $("p-prev").addEventListener("click", () => {
      if (state.mode === "failed") { state.offset = Math.max(0, state.offset - PAGE); loadFailed(); } else loadSkipped(state.skipKeys.prev, true);
    });
    $("p-next").addEventListener("click", () => {
      if (state.mode === "failed") { state.offset += PAGE; loadFailed(); } else loadSkipped(state.skipKeys.next, false);
    });
    $("p-last").addEventListener("click", () => {
      state.offset = Math.max(0, Math.floor((state.total - 1) / PAGE) * PAGE);
      loadFailed();
    });

    showOp();
    if (new URLSearchParams(location.search).get("of") === "skipped") setMode("skipped"); else load();
  }
}
