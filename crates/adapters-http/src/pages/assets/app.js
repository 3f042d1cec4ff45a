// wms settings pages: progressive enhancement only. Every action works without this script
// (forms post, confirmations render as pages); with it, confirmations open as modal dialogs and
// secrets get a copy button. No inline handlers: the Content-Security-Policy forbids them.
(function () {
  "use strict";

  function openDialog(id) {
    var d = document.getElementById(id);
    if (!d || typeof d.showModal !== "function") return false;
    if (d.open) d.close();
    d.showModal();
    var cancel = d.querySelector("[data-close-dialog]");
    if (cancel) cancel.focus();
    return true;
  }

  document.addEventListener("click", function (e) {
    var t = e.target.closest ? e.target.closest("[data-dialog],[data-close-dialog],[data-copy]") : null;
    if (!t) return;
    if (t.hasAttribute("data-dialog")) {
      if (openDialog(t.getAttribute("data-dialog"))) e.preventDefault();
    } else if (t.hasAttribute("data-close-dialog")) {
      var d = document.getElementById(t.getAttribute("data-close-dialog"));
      if (d && d.open) { e.preventDefault(); d.close(); }
    } else if (t.hasAttribute("data-copy")) {
      var src = document.getElementById(t.getAttribute("data-copy"));
      if (!src) return;
      var text = src.value !== undefined ? src.value : src.textContent;
      var done = function () {
        var label = t.textContent;
        t.textContent = "Copied";
        t.setAttribute("aria-live", "polite");
        setTimeout(function () { t.textContent = label; }, 2000);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { select(src); });
      } else {
        select(src);
        try { document.execCommand("copy"); done(); } catch (err) { /* selected for manual copy */ }
      }
    }
  });

  function select(el) {
    if (el.select) { el.focus(); el.select(); return; }
    var r = document.createRange();
    r.selectNodeContents(el);
    var s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  }

  document.addEventListener("DOMContentLoaded", function () {
    // Copy buttons need the script: reveal them now.
    document.querySelectorAll("[data-copy]").forEach(function (b) { b.hidden = false; });
    // Dialogs rendered open by the server (no-script fallback) become modal.
    document.querySelectorAll("dialog[open]").forEach(function (d) {
      d.close();
      openDialog(d.id);
    });
    // Selects that submit their form when changed (analytics filters); a submit button remains.
    document.querySelectorAll("[data-autosubmit]").forEach(function (el) {
      el.addEventListener("change", function () { el.form.submit(); });
    });
  });
})();
