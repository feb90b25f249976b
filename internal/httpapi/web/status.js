// Home-Index status page (/status): polls /api/status and /api/failed, renders them, and sends the
// operator's actions (retry, pause, resume) as JSON POSTs. Every string from the API reaches
// the page as text nodes (filenames are user data): no HTML is ever built from strings.
"use strict";

(function () {
  const REFRESH_MS = 3000;
  const SEARCH_DELAY_MS = 250;

  const $ = (id) => document.getElementById(id);
  let timer = 0;
  let inFlight = false;
  let again = false;
  let searchTimer = 0;
  let searchSeq = 0;

  const { el, num } = window.homeIndexDOM; // dom.js

  // duration formats seconds as "45s", "3m20s", "2h05m", "3d4h".
  function duration(s) {
    if (s === null || s === undefined || !isFinite(s)) return "—";
    s = Math.max(0, Math.round(s));
    if (s < 60) return s + "s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + "m" + String(s % 60).padStart(2, "0") + "s";
    const h = Math.floor(m / 60);
    if (h < 48) return h + "h" + String(m % 60).padStart(2, "0") + "m";
    return Math.floor(h / 24) + "d" + (h % 24) + "h";
  }

  // seconds formats a short measured time: "12 ms", "3.4s", then as duration.
  function seconds(s) {
    if (s === null || s === undefined || !isFinite(s)) return "—";
    if (s < 1) return Math.round(s * 1000) + " ms";
    if (s < 10) return s.toFixed(1) + "s";
    return duration(s);
  }

  function ago(iso) {
    const t = Date.parse(iso);
    if (!t) return "—";
    const s = (Date.now() - t) / 1000;
    return s < 2 ? "just now" : duration(s) + " ago";
  }

  function bytes(n) {
    if (n === null || n === undefined) return "—";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + " " + units[i];
  }

  // when is a time of day for today's events, else date and time (stable between refreshes).
  function when(iso) {
    const t = Date.parse(iso);
    if (!t) return "—";
    const d = new Date(t);
    return d.toDateString() === new Date().toDateString() ? d.toLocaleTimeString() : d.toLocaleString();
  }

  function say(text, kind) {
    const m = $("message");
    m.textContent = text;
    m.className = "message " + (kind || "info");
    m.hidden = !text;
  }

  async function getJSON(path) {
    const r = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store" });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || r.status + " " + r.statusText);
    return body;
  }

  // post sends what the CLI sends: a JSON body, same origin (the POST guard lets it through).
  async function post(path, payload) {
    const r = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(payload),
      credentials: "same-origin",
    });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || r.status + " " + r.statusText);
    return body;
  }

  // replaceRows swaps a tbody's rows for new ones, keeping every row that did not change (so a
  // refresh neither loses a text selection nor swaps a button under the pointer), and keeping
  // keyboard focus on the button with the same data-key when its row did change.
  function replaceRows(tbody, rows) {
    const old = [...tbody.children];
    const kept = rows.map((r, i) => (old[i] && old[i].isEqualNode(r) ? old[i] : r));
    if (kept.length === old.length && kept.every((r, i) => r === old[i])) return;
    const active = document.activeElement;
    const key = active && tbody.contains(active) ? active.getAttribute("data-key") : null;
    tbody.replaceChildren(...kept);
    if (key && !tbody.contains(active)) {
      const same = tbody.querySelector('[data-key="' + CSS.escape(key) + '"]');
      if (same) same.focus();
    }
  }

  function cell(field, text, cls) {
    return el("td", { "data-field": field, class: cls }, text);
  }

  function renderHeader(st) {
    $("version").textContent = st.version ? st.version : "";
    const p = $("pipeline");
    const labels = { off: "no modules", starting: "starting", active: "running", redis_down: "Redis down" };
    p.textContent = labels[st.pipeline.state] || st.pipeline.state;
    p.setAttribute("data-state", st.pipeline.state);
    p.title = st.pipeline.reason ? st.pipeline.reason + (st.pipeline.since ? " (since " + when(st.pipeline.since) + ")" : "") : "";
    const why = $("pipeline-reason");
    if (why) {
      why.textContent = p.title;
      why.hidden = !p.title;
    }
    p.className = "badge " + (st.pipeline.state === "active" ? "ok" : st.pipeline.state === "redis_down" ? "bad" : "warn");
    $("updated").textContent = "updated " + new Date(Date.parse(st.generated_at) || Date.now()).toLocaleTimeString();
  }

  function renderOverview(st) {
    const items = [
      ["documents", "Documents", num(st.documents.live)],
      ["files", "Files", num(st.documents.files)],
      ["retired", "Retired", num(st.documents.retired)],
      ["index-lag", "Index lag", num(st.index.index_pending)],
      ["quarantined", "Quarantined", num(st.quarantine.count)],
      ["uptime", "Up", duration((Date.now() - Date.parse(st.started_at)) / 1000)],
    ];
    $("overview").replaceChildren(...items.map(([id, label, value]) =>
      el("div", { class: "stat" }, el("dt", {}, label), el("dd", { "data-testid": "stat-" + id }, value))));

    const sync = st.sync;
    const parts = [];
    if (sync.running && sync.progress) {
      const p = sync.progress;
      parts.push(el("span", { class: "line", "data-testid": "sync-progress" }, el("strong", {}, "Syncing: "),
        num(p.walked) + " files walked, " + num(p.hashed) + (p.to_hash ? " of " + num(p.to_hash) : "") +
        " hashed, " + p.mb_per_s.toFixed(1) + " MB/s, ETA " + p.eta + "."));
    }
    if (sync.last) {
      const l = sync.last;
      const s = l.stats || {};
      parts.push(el("span", { class: "line", "data-testid": "sync-last" }, el("strong", {}, "Last sync: "),
        ago(l.finished) + " (" + (l.reason || "sync") + ", took " + seconds(l.duration_seconds) + "): " +
        num(s.walked) + " walked, " + num(s.added) + " added, " + num(s.modified) + " modified, " +
        num(s.deleted) + " deleted" + (s.errors ? ", " + num(s.errors) + " errors" : "") + ".",
        l.error ? el("span", { class: "bad-text" }, " Error: " + l.error) : null));
    } else if (!sync.running) {
      parts.push("No sync has finished yet.");
    }
    $("sync").replaceChildren(...parts);

    const errs = st.errors || [];
    $("errors").replaceChildren(...errs.map((e) => el("li", {}, e)));
    $("errors").hidden = errs.length === 0;
  }

  function renderModules(st) {
    const rows = st.modules.map((m) => {
      const backlog = m.waiting + (m.recovering || 0) + m.queued + m.in_flight + m.merging;
      const total = backlog + m.done + m.parked;
      const state = m.paused ? "paused" : backlog > 0 ? "working" : "idle";
      const btn = el("button", {
        type: "button", class: "small secondary", "data-testid": m.paused ? "resume" : "pause",
        "data-key": "pause:" + m.name, "aria-label": (m.paused ? "Resume " : "Pause ") + m.name,
      }, m.paused ? "Resume" : "Pause");
      btn.addEventListener("click", () => act(btn, m.paused ? "/api/resume" : "/api/pause", { module: m.name },
        (r) => (r.paused ? "Paused " : "Resumed ") + r.module + "."));
      const progress = el("progress", { max: Math.max(total, 1), value: m.done, "aria-label": m.name + " progress" });
      return el("tr", { "data-testid": "module-row", "data-module": m.name, "data-state": state },
        el("th", { scope: "row", "data-field": "name" }, m.name,
          el("span", { class: "badge small " + (m.paused ? "warn" : backlog > 0 ? "busy" : "ok"), "data-field": "state" }, state)),
        el("td", { class: "progress-cell" }, progress,
          el("span", { class: "muted" }, total ? Math.floor((100 * m.done) / total) + "%" : "—")),
        cell("waiting", num(m.waiting) + (m.waiting_offline ? " (+" + num(m.waiting_offline) + " offline)" : "") +
          (m.recovering ? " (+" + num(m.recovering) + " recovering)" : ""), "num"),
        cell("queued", num(m.queued) + (m.retrying ? " (" + num(m.retrying) + " retrying)" : ""), "num"),
        cell("in_flight", num(m.in_flight + m.merging), "num"),
        cell("done", num(m.done), "num"),
        cell("parked", num(m.parked), "num" + (m.parked ? " bad-text" : "")),
        cell("oldest_waiting", duration(m.oldest_waiting_seconds), "num"),
        cell("throughput", num(m.throughput_per_minute), "num"),
        cell("eta", m.eta, "num"),
        el("td", { class: "actions" }, btn));
    });
    replaceRows(document.querySelector("#modules tbody"), rows);
    $("modules-empty").hidden = st.modules.length > 0;
    $("modules").hidden = st.modules.length === 0;
  }

  function renderDrives(st) {
    const rows = st.drives.map((d) => el("tr", { "data-testid": "drive-row", "data-drive": d.name },
      el("th", { scope: "row", "data-field": "name" }, d.name),
      el("td", { "data-field": "present" },
        el("span", { class: "badge small " + (d.present ? "ok" : "off") }, d.present ? "connected" : "absent")),
      el("td", { "data-field": "marker" },
        el("span", { class: "badge small " + (d.marker === "ready" ? "ok" : d.marker === "pending" ? "busy" : "off") },
          d.marker || "none")),
      el("td", { "data-field": "state" },
        el("span", { class: "badge small " + (d.state === "ready" ? "ok" : d.state === "pending" ? "busy" : "bad") },
          (d.state || "").replace(/_/g, " "))),
      cell("files", num(d.files), "num"),
      cell("pending", num(d.pending), "num"),
      cell("done", num(d.done), "num"),
      cell("failed", num(d.failed), "num" + (d.failed ? " bad-text" : ""))));
    replaceRows(document.querySelector("#drives tbody"), rows);
    $("drives-empty").hidden = st.drives.length > 0;
    $("drives").hidden = st.drives.length === 0;
  }

  function renderFailures(list) {
    const parked = list.parked || [];
    let total = 0;
    for (const n of Object.values(list.parked_total || {})) total += n;
    const rows = parked.map((f) => {
      const btn = el("button", {
        type: "button", class: "small", "data-testid": "retry", "data-key": "retry:" + f.module + ":" + f.id,
        "aria-label": "Retry " + (f.path || f.id) + " in " + f.module,
      }, "Retry");
      btn.addEventListener("click", () => act(btn, "/api/retry", { module: f.module, file: f.id },
        (r) => "Retried " + r.total + " job" + (r.total === 1 ? "" : "s") + "."));
      return el("tr", { "data-testid": "failure-row", "data-module": f.module, "data-id": f.id },
        el("td", { "data-field": "path", class: "path" }, f.path || f.id),
        cell("module", f.module),
        cell("reason", f.reason, "reason"),
        cell("attempts", num(f.attempts), "num"),
        el("td", { "data-field": "at", class: "when" }, el("time", { datetime: f.at }, when(f.at))),
        el("td", { class: "actions" }, btn));
    });
    replaceRows(document.querySelector("#failures tbody"), rows);
    $("failures").hidden = parked.length === 0;
    $("failures-empty").hidden = parked.length > 0;
    $("failures-count").textContent = total ? "(" + num(total) + (total > parked.length ? ", newest " + parked.length + " shown" : "") + ")" : "";
    $("retry-all").hidden = total === 0;
    $("retry-all").disabled = false;

    const q = list.quarantined || [];
    $("quarantine").hidden = q.length === 0;
    $("quarantine-count").textContent = list.quarantine_total ? "(" + num(list.quarantine_total) + ")" : "";
    $("quarantine-list").replaceChildren(...q.map((e) => el("li", { "data-testid": "quarantine-row" },
      el("strong", {}, e.module || "unknown module"), ": " + e.reason + " (" + bytes(e.bytes) + ", " + when(e.at) + ")")));
  }

  // act runs one POST from a button, reports its answer and refreshes at once.
  async function act(btn, path, payload, describe) {
    btn.disabled = true;
    btn.setAttribute("aria-busy", "true");
    try {
      const r = await post(path, payload);
      say(describe(r), "ok");
    } catch (e) {
      say("Could not " + path.replace("/api/", "") + ": " + e.message, "error");
      btn.disabled = false;
      btn.removeAttribute("aria-busy");
    }
    refresh();
  }

  // renderWatch says how changes are detected: inotify watches, or the re-walk fallback.
  function renderWatch(st) {
    const w = st.watch;
    if (!w) {
      $("watch").textContent = "";
      return;
    }
    let text = "Change detection: " + num(w.watches) + " of " + num(w.budget) + " watches";
    if (w.fallback) {
      text += "; " + num(w.unwatched_dirs) + " director" + (w.unwatched_dirs === 1 ? "y" : "ies") +
        " re-walked every " + seconds(w.rewalk_interval_seconds) + " (" + w.fallback_reasons.join(", ") + ")";
    }
    $("watch").textContent = text + (w.pending ? "; changes waiting to settle." : ".");
    $("watch").setAttribute("data-fallback", w.fallback ? "true" : "false");
  }

  // syncNow asks the daemon for a sync without waiting; the sync line shows its progress.
  async function syncNow() {
    const btn = $("sync-now");
    btn.disabled = true;
    try {
      await post("/api/sync", { wait: false });
      say("Sync requested.", "ok");
    } catch (e) {
      say("Could not start a sync: " + e.message, "error");
    } finally {
      btn.disabled = false;
    }
    refresh();
  }

  async function refresh() {
    clearTimeout(timer);
    if (inFlight) {
      again = true; // an action changed things after this read started: read again after it
      return;
    }
    inFlight = true;
    try {
      const [st, failed] = await Promise.all([getJSON("/api/status"), getJSON("/api/failed?limit=100")]);
      renderHeader(st);
      renderOverview(st);
      renderWatch(st);
      renderModules(st);
      renderDrives(st);
      renderFailures(failed);
      document.body.setAttribute("data-loaded", "true");
      if ($("message").classList.contains("stale")) say("");
    } catch (e) {
      say("Cannot reach the daemon (" + e.message + "); showing the last known state.", "error stale");
    } finally {
      inFlight = false;
      if (again) {
        again = false;
        refresh();
      } else {
        schedule();
      }
    }
  }

  function schedule() {
    clearTimeout(timer);
    if (!document.hidden) timer = setTimeout(refresh, REFRESH_MS);
  }

  function hitPath(h) {
    if (Array.isArray(h.paths_list) && h.paths_list.length) return h.paths_list[0];
    if (h.paths && typeof h.paths === "object") {
      const keys = Object.keys(h.paths).sort();
      if (keys.length) return keys[0];
    }
    return h.id || "";
  }

  async function search() {
    const q = $("search-input").value.trim();
    const seq = ++searchSeq;
    $("search-section").hidden = !q;
    if (!q) {
      $("search-summary").textContent = "";
      $("search-wrap").hidden = true;
      document.querySelector("#search-results tbody").replaceChildren();
      return;
    }
    try {
      const r = await getJSON("/api/search?limit=50&q=" + encodeURIComponent(q));
      if (seq !== searchSeq) return; // a newer query is on its way
      const rows = r.hits.map((h) => {
        const path = hitPath(h);
        const copies = (h.paths_list || []).length;
        return el("tr", { "data-testid": "search-hit", "data-id": h.id },
          el("td", { "data-field": "path", class: "path" }, path,
            copies > 1 ? el("span", { class: "muted" }, " +" + (copies - 1) + " more") : null,
            h.offline ? el("span", { class: "badge small off" }, "offline") : null),
          cell("type", h.type || ""),
          cell("size", bytes(h.size), "num"),
          el("td", { "data-field": "mtime" }, h.mtime ? new Date(h.mtime * 1000).toLocaleString() : ""));
      });
      document.querySelector("#search-results tbody").replaceChildren(...rows);
      $("search-wrap").hidden = rows.length === 0;
      $("search-summary").textContent = r.total === 0 ? "No file matches “" + q + "”." :
        num(r.total) + " file" + (r.total === 1 ? "" : "s") + " match" + (r.total === 1 ? "es" : "") +
        (r.total > rows.length ? "; the first " + rows.length + " are shown." : ".");
    } catch (e) {
      if (seq !== searchSeq) return;
      $("search-summary").textContent = "Search failed: " + e.message;
      $("search-wrap").hidden = true;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("search-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      clearTimeout(searchTimer);
      search();
    });
    $("search-input").addEventListener("input", () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(search, SEARCH_DELAY_MS);
    });
    $("sync-now").addEventListener("click", syncNow);
    const all = $("retry-all");
    all.addEventListener("click", () => act(all, "/api/retry", { all: true }, (r) =>
      "Retried " + r.total + " job" + (r.total === 1 ? "" : "s") +
      (r.skipped_paused && r.skipped_paused.length ? "; paused, skipped: " + r.skipped_paused.join(", ") : "") + "."));
    document.addEventListener("visibilitychange", () => {
      if (document.hidden) clearTimeout(timer);
      else refresh();
    });
    refresh();
  });
})();
