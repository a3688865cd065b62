// kmirror dashboard: keeps what the user opened while htmx refreshes a live region. A failure trace opened
// with a click must not fold up again at the next refresh two seconds later.
(function () {
  "use strict";
  var open = {};
  document.addEventListener("htmx:beforeSwap", function (e) {
    open = {};
    e.detail.target.querySelectorAll("details[id][open]").forEach(function (d) { open[d.id] = true; });
  });
  document.addEventListener("htmx:afterSwap", function (e) {
    e.detail.target.querySelectorAll("details[id]").forEach(function (d) {
      if (open[d.id]) d.open = true;
    });
  });
})();
