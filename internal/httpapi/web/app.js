// Home-Index search page (/): the query, filters, sort and page live in the URL (shareable;
// back and forward restore them), the page asks /api/search and draws result cards, facets and
// a pager. Every string from the API reaches the page as text nodes (file names are user data):
// no HTML is ever built from strings; highlighted words are <mark> elements holding text.
"use strict";

(function () {
  const LIMIT = 20;
  const KINDS = ["image", "video", "audio", "document", "text", "other"];
  const FACET_ORDER = ["kind", "extension", "drive", "year", "camera", "offline"];
  // Parameters that are not filters (limit: hits per page, 20 unless the URL says).
  const CONTROL = new Set(["q", "sort", "page", "limit"]);

  const $ = (id) => document.getElementById(id);
  let seq = 0;

  const { el, num } = window.homeIndexDOM; // dom.js

  function bytes(n) {
    if (n === null || n === undefined) return "";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + " " + units[i];
  }

  function date(unix) {
    if (!unix) return "";
    return new Date(unix * 1000).toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
  }

  function say(text, kind) {
    const m = $("message");
    m.textContent = text;
    m.className = "message " + (kind || "info");
    m.hidden = !text;
  }

  // state is what the URL says: q, sort, page and the filters as [name, value] pairs.
  function readState() {
    const u = new URLSearchParams(location.search);
    const filters = [];
    for (const [k, v] of u) if (!CONTROL.has(k)) filters.push([k, v]);
    const limit = Math.min(1000, Math.max(1, parseInt(u.get("limit"), 10) || LIMIT));
    return { q: u.get("q") || "", sort: u.get("sort") || "relevance", page: Math.max(1, parseInt(u.get("page"), 10) || 1), limit, filters };
  }

  function query(st) {
    const u = new URLSearchParams();
    if (st.q) u.set("q", st.q);
    for (const [k, v] of st.filters) u.append(k, v);
    if (st.sort && st.sort !== "relevance") u.set("sort", st.sort);
    if (st.page > 1) u.set("page", String(st.page));
    if (st.limit !== LIMIT) u.set("limit", String(st.limit));
    return u;
  }

  // go puts a new state in the URL (a history entry) and searches.
  function go(st) {
    const qs = query(st).toString();
    history.pushState(null, "", qs ? "?" + qs : location.pathname);
    run();
  }

  const hasFilter = (st, k, v) => st.filters.some(([a, b]) => a === k && b === v);

  function toggle(k, v) {
    const st = readState();
    st.filters = hasFilter(st, k, v) ? st.filters.filter(([a, b]) => !(a === k && b === v)) : [...st.filters, [k, v]];
    st.page = 1;
    go(st);
  }

  function firstPath(h) {
    if (Array.isArray(h.paths_list) && h.paths_list.length) return h.paths_list[0];
    if (h.paths && typeof h.paths === "object") {
      const keys = Object.keys(h.paths);
      if (keys.length) return keys[0];
    }
    return h.name || h.id || "";
  }

  function baseName(p) {
    const i = p.lastIndexOf("/");
    return i >= 0 ? p.slice(i + 1) : p;
  }

  function where(loc) {
    if (!loc) return "";
    const out = [];
    if (loc.page !== undefined) out.push("page " + loc.page);
    if (loc.sheet !== undefined) out.push("sheet " + loc.sheet);
    if (loc.slide !== undefined) out.push("slide " + loc.slide);
    if (loc.chapter !== undefined) out.push("chapter " + loc.chapter);
    if (loc.time_offset !== undefined) {
      const s = Math.floor(loc.time_offset);
      out.push(Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0"));
    }
    return out.join(", ");
  }

  function snippet(s) {
    const text = el("span", { class: "snippet-text" });
    for (const p of s.parts || []) text.append(p.match ? el("mark", {}, p.text) : document.createTextNode(p.text));
    const loc = where(s.location);
    return el("li", { class: "snippet", "data-testid": "snippet", "data-module": s.module || "" },
      text, el("span", { class: "where muted" }, (s.module || "") + (loc ? " · " + loc : "")));
  }

  function card(h) {
    const path = firstPath(h);
    const name = h.name || baseName(path);
    const kind = KINDS.includes(h.kind) ? h.kind : "other";
    const href = "/files/" + encodeURIComponent(h.id);
    const pic = h.thumbnail
      ? el("img", { src: href + "/thumbnail", alt: "", loading: "lazy", width: 96, height: 96, class: "thumb-img" })
      : el("img", { src: "/assets/kind-" + kind + ".svg", alt: "", width: 48, height: 48, class: "kind-icon" });
    // An image with a thumbnail opens its larger preview from the picture.
    const thumb = h.thumbnail && kind === "image"
      ? el("a", { href: href + "/preview", class: "thumb", "data-testid": "preview-link", "aria-label": "Preview of " + name }, pic)
      : el("div", { class: "thumb", "aria-hidden": "true" }, pic);
    const drives = (Array.isArray(h.drive) ? h.drive : h.drive ? [h.drive] : []).map((d) =>
      el("span", { class: "badge small drive", "data-field": "drive" }, d === "local" ? "main" : d));
    const meta = el("p", { class: "meta muted" },
      ...drives,
      h.offline ? el("span", { class: "badge small warn", "data-testid": "offline", title: "on a drive that is not plugged in" }, "offline") : null,
      h.date ? el("span", { "data-field": "date" }, date(h.date)) : null,
      el("span", { "data-field": "size" }, bytes(h.size)),
      el("span", { "data-field": "kind" }, kind + (h.extension ? " · ." + h.extension : "")));
    const snips = (h._snippets || []).slice(0, 3).map(snippet);
    return el("li", { class: "hit", "data-testid": "hit", "data-id": h.id, "data-kind": kind },
      thumb,
      el("div", { class: "hit-body" },
        el("h3", { class: "hit-title" }, el("a", { href, "data-testid": "hit-link", "data-field": "name" }, name)),
        el("p", { class: "path", "data-field": "path" }, path),
        meta,
        snips.length ? el("ul", { class: "snippets" }, ...snips) : null));
  }

  function facetLabel(name, v) {
    if (name === "offline") return v === "true" ? "offline" : "online";
    if (name === "drive" && v === "local") return "main";
    return v;
  }

  function renderFacets(st, facets) {
    const names = Object.keys(facets || {});
    names.sort((a, b) => {
      const ia = FACET_ORDER.indexOf(a), ib = FACET_ORDER.indexOf(b);
      return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
    });
    const groups = [];
    for (const name of names) {
      const values = facets[name] || [];
      if (!values.length) continue;
      const param = FACET_ORDER.includes(name) ? name : "f." + name;
      const title = name.replace(/^.*\./, "").replace(/_/g, " ");
      groups.push(el("section", { class: "facet", "data-testid": "facet", "data-facet": name },
        el("h3", {}, title),
        el("ul", {}, ...values.slice(0, 12).map((f) => {
          const on = hasFilter(st, param, String(f.value));
          const b = el("button", {
            type: "button", class: "facet-value", "aria-pressed": on ? "true" : "false",
            "data-testid": "facet-value", "data-facet": name, "data-value": String(f.value),
          }, el("span", { class: "facet-name" }, facetLabel(name, String(f.value))),
          // A drive value says whether the drive is plugged in now.
          f.online === false ? el("span", { class: "badge small warn", "data-testid": "drive-offline", title: "this drive is not plugged in" }, "offline") : null,
          el("span", { class: "count" }, num(f.count)));
          b.addEventListener("click", () => toggle(param, String(f.value)));
          return el("li", {}, b);
        }))));
    }
    $("facets").replaceChildren(...groups);
  }

  function renderActive(st) {
    $("active").replaceChildren(...st.filters.map(([k, v]) => {
      const b = el("button", { type: "button", class: "small secondary chip", "data-testid": "active-filter", "aria-label": "Remove filter " + k + " " + v },
        k.replace(/^f\./, "") + ": " + v + " ×");
      b.addEventListener("click", () => toggle(k, v));
      return b;
    }));
  }

  async function run() {
    const st = readState();
    const my = ++seq;
    $("q").value = st.q;
    $("sort").value = st.sort;
    document.title = st.q ? st.q + " · Home-Index" : "Home-Index";
    renderActive(st);
    const u = query(st);
    u.set("limit", String(st.limit));
    u.set("facets", "all");
    u.set("snippets", "3");
    document.body.setAttribute("data-busy", "true");
    try {
      const r = await fetch("/api/search?" + u.toString(), { headers: { Accept: "application/json" }, cache: "no-store" });
      const body = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(body.error || r.status + " " + r.statusText);
      if (my !== seq) return; // a newer search is on its way
      $("hits").replaceChildren(...(body.hits || []).map(card));
      renderFacets(st, body.facets);
      const total = body.total || 0;
      const pages = body.pages || Math.max(1, Math.ceil(total / st.limit));
      const what = st.q ? " for “" + st.q + "”" : "";
      $("summary").textContent = total === 0 ? "No file matches" + what + "." :
        num(total) + (body.total_is_lower_bound ? "+" : "") + " file" + (total === 1 ? "" : "s") + what + ".";
      $("pager").hidden = pages <= 1;
      $("page-info").textContent = "Page " + num(st.page) + " of " + num(pages);
      $("prev").disabled = st.page <= 1;
      $("next").disabled = st.page >= pages;
      say("");
    } catch (e) {
      if (my !== seq) return;
      say("Search failed: " + e.message, "error");
    } finally {
      if (my === seq) {
        document.body.setAttribute("data-busy", "false");
        document.body.setAttribute("data-loaded", "true");
        document.body.setAttribute("data-url", location.search);
      }
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("search-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const st = readState();
      st.q = $("q").value.trim();
      st.sort = $("sort").value;
      st.page = 1;
      go(st);
    });
    $("sort").addEventListener("change", () => {
      const st = readState();
      st.sort = $("sort").value;
      st.page = 1;
      go(st);
    });
    $("prev").addEventListener("click", () => { const st = readState(); st.page = Math.max(1, st.page - 1); go(st); });
    $("next").addEventListener("click", () => { const st = readState(); st.page += 1; go(st); });
    document.addEventListener("keydown", (ev) => {
      if (ev.key !== "/" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const t = ev.target;
      if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
      ev.preventDefault();
      $("q").focus();
      $("q").select();
    });
    window.addEventListener("popstate", run);
    run();
  });
})();
