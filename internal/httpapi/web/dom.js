// Helpers shared by the search page (app.js) and the status page (status.js), loaded before
// either (both deferred, so they run in order). Every string reaches the page as a text node:
// no HTML is ever built from strings.
"use strict";

(function () {
  // el builds an element: attrs are attributes (data-*, aria-*, class…; null, undefined and
  // false are left out, true is an empty attribute), children are nodes or strings (text).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  const nf = new Intl.NumberFormat();
  // num formats a count in the reader's locale (missing counts as 0).
  const num = (n) => nf.format(n || 0);

  window.homeIndexDOM = Object.freeze({ el, num });
})();
