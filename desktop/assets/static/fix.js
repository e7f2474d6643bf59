// crmimport desktop: Failed records — a failed row's cells edited in
// place, the edited rows of one file re-imported by a run of their own
// (POST /api/runs/ID/fix), and what became of each row, polled until that
// run ends (GET /api/runs/NEW/fix-outcomes). Data from exports is only
// ever set as text (textContent, .value), never as HTML.
"use strict";
{
  const section = document.querySelector("[data-fix-run]");
  if (section) {
    const run = section.getAttribute("data-fix-run");
    const button = document.getElementById("fix-reimport");
    const msg = document.getElementById("fix-message");
    const runLine = document.getElementById("fix-run");
    const rows = Array.from(document.querySelectorAll("table.failed tbody tr[data-failure]"));
    let busy = false; // a fix run of this page works: R13 admits no other for the tenant

    const say = (text, isError) => {
      msg.textContent = text;
      msg.classList.toggle("error", !!isError);
    };
    const plural = (n, one, many) => n + " " + (n === 1 ? one : many);
    const cells = (tr) => Array.from(tr.querySelectorAll("textarea[data-cell]"));
    const changed = (tr) => cells(tr).filter((c) => c.value !== c.defaultValue);
    const outcomeCell = (tr) => tr.querySelector("[data-field=fix]");

    function mark(tr, word, cls) {
      const cell = outcomeCell(tr);
      cell.textContent = "";
      const badge = document.createElement("span");
      badge.className = "fix-badge " + cls;
      badge.textContent = word;
      cell.appendChild(badge);
      return cell;
    }

    // The edited rows, grouped by file in the table's order; the button
    // re-imports the first file's.
    function edited() {
      const byFile = new Map();
      for (const tr of rows) {
        if (!changed(tr).length) continue;
        const f = tr.getAttribute("data-file");
        if (!byFile.has(f)) byFile.set(f, []);
        byFile.get(f).push(tr);
      }
      return byFile;
    }

    let hinted = false; // the message says which edits wait
    function refresh() {
      for (const tr of rows) {
        const n = changed(tr);
        for (const c of cells(tr)) c.classList.toggle("edited", n.includes(c));
        const was = tr.classList.contains("edited");
        tr.classList.toggle("edited", n.length > 0);
        if (n.length > 0 && !tr.hasAttribute("data-sent")) mark(tr, "edited", "edited");
        else if (n.length === 0 && was && !tr.hasAttribute("data-sent")) outcomeCell(tr).textContent = "";
      }
      const byFile = edited();
      const files = Array.from(byFile.keys());
      if (hinted && (busy || files.length < 2)) { say(""); hinted = false; }
      const why = document.getElementById("fix-why");
      if (!files.length) {
        button.disabled = true;
        button.textContent = "Re-import fixed rows";
        if (why) why.textContent = busy ? "A re-import is running: wait for it to end." : "Nothing to re-import yet: correct a value in the table below first.";
        return;
      }
      const first = byFile.get(files[0]);
      button.disabled = busy;
      if (why) why.textContent = busy ? "A re-import is running: wait for it to end." : "";
      button.textContent = "Re-import " + plural(first.length, "fixed row", "fixed rows") + " of " + files[0];
      if (!busy && files.length > 1) {
        say("One file at a time: the edits of " + files.slice(1).join(", ") + " wait for the next re-import.");
        hinted = true;
      }
    }

    for (const tr of rows) {
      for (const c of cells(tr)) {
        c.addEventListener("input", () => { tr.removeAttribute("data-sent"); refresh(); });
      }
    }

    async function request(method, url, body) {
      const opts = { method: method, headers: { "X-Requested-By": "crmimport" }, credentials: "same-origin" };
      if (body !== undefined) { opts.body = JSON.stringify(body); opts.headers["Content-Type"] = "application/json"; }
      const res = await fetch(url, opts);
      let doc = null;
      try { doc = await res.json(); } catch (e) { doc = { error: "the server answered " + res.status }; }
      if (!res.ok) throw Object.assign(new Error(doc.error || ("HTTP " + res.status)), { doc: doc });
      return doc;
    }

    function showRun(doc, file, n) {
      runLine.textContent = "";
      runLine.append("Run ");
      const a = document.createElement("a");
      a.href = doc.url;
      a.textContent = String(doc.run);
      runLine.appendChild(a);
      runLine.append(" re-imports " + plural(n, "row", "rows") + " of " + file + ": ");
      const st = document.createElement("span");
      st.className = "status status-" + doc.status;
      st.setAttribute("data-field", "fix-status");
      st.textContent = doc.status;
      runLine.appendChild(st);
      runLine.hidden = false;
    }

    const words = {
      imported: (o, run) => ["imported", "by run " + run + (o.action === "matched" ? ", matched to an existing record" : "")],
      unchanged: (o) => ["unchanged", "already imported" + (o.owner_run ? " by run " + o.owner_run : "")],
      skipped: (o) => ["skipped", o.reason],
      failed: (o) => ["failed again", o.reason],
      pending: () => ["waiting", "the run has not read it yet"],
    };

    function showOutcomes(doc, sent) {
      const counts = {};
      for (const o of doc.outcomes) {
        const tr = sent.get(o.failure);
        if (!tr) continue;
        const [word, why] = (words[o.outcome] || (() => [o.outcome, ""]))(o, doc.run);
        const cell = mark(tr, word, "outcome-" + o.outcome.replace(/\s+/g, "-"));
        if (why) {
          const p = document.createElement("span");
          p.className = "why";
          p.textContent = why;
          cell.appendChild(p);
        }
        tr.setAttribute("data-outcome", o.outcome);
        counts[word] = (counts[word] || 0) + 1;
      }
      const st = runLine.querySelector("[data-field=fix-status]");
      if (st) { st.textContent = doc.status; st.className = "status status-" + doc.status; }
      return Object.entries(counts).map(([w, n]) => n + " " + w).join(", ");
    }

    async function follow(doc, file, sent) {
      let end = null;
      for (;;) {
        let out;
        try {
          out = await request("GET", doc.outcomes);
        } catch (e) {
          end = [e.message, true];
          break;
        }
        const summary = showOutcomes(out, sent);
        if (out.done) {
          for (const tr of sent.values()) {
            if (tr.getAttribute("data-outcome") === "imported" || tr.getAttribute("data-outcome") === "unchanged") {
              // In the ledger now: its cells are what was imported.
              for (const c of cells(tr)) { c.defaultValue = c.value; c.readOnly = true; }
              tr.classList.remove("edited");
            }
          }
          end = ["Run " + out.run + " " + out.status + ": " + summary + ".", false];
          break;
        }
        say("Run " + out.run + " is working: " + summary + "…");
        await new Promise((r) => setTimeout(r, 500));
      }
      busy = false;
      refresh();
      say(end[0] + (hinted ? " " + msg.textContent : ""), end[1]);
    }

    button.addEventListener("click", async () => {
      const byFile = edited();
      const file = Array.from(byFile.keys())[0];
      if (!file) return;
      const trs = byFile.get(file);
      const body = {
        file: file,
        rows: trs.map((tr) => ({
          failure: Number(tr.getAttribute("data-failure")),
          cells: changed(tr).map((c) => ({ name: c.getAttribute("data-cell"), value: c.value })),
        })),
      };
      busy = true;
      button.disabled = true;
      say("Writing the fix file and planning the run…");
      let doc;
      try {
        doc = await request("POST", "/api/runs/" + run + "/fix", body);
      } catch (e) {
        busy = false;
        refresh();
        say(e.message + (e.doc && e.doc.live_run ? " — open run " + e.doc.live_run + " from the Runs page." : ""), true);
        return;
      }
      const sent = new Map();
      for (const tr of trs) {
        tr.setAttribute("data-sent", "");
        sent.set(Number(tr.getAttribute("data-failure")), tr);
        mark(tr, "waiting", "outcome-pending");
      }
      showRun(doc, file, trs.length);
      follow(doc, file, sent);
    });

    refresh();
  }
}
