/* The booking page's embed snippet: <script src="{base}/{slug}/embed.js" async></script>
   puts the company's booking page in an iframe where the script tag stands, and keeps
   the iframe as tall as its page (the page tells its height). No cookie, no tracking.
   data-form="bf_..." on the tag shows that booking form's page (?form=). */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.parentNode) {
    return;
  }
  var origin = new URL(script.src).origin;
  var frame = document.createElement("iframe");
  var form = script.getAttribute("data-form");
  frame.src =
    origin + "/__SLUG__/book?embed=1" + (form ? "&form=" + encodeURIComponent(form) : "");
  frame.title = "Book online";
  frame.style.cssText = "display:block;width:100%;max-width:960px;height:900px;border:0;";
  script.parentNode.insertBefore(frame, script.nextSibling);
  var loads = 0;
  frame.addEventListener("load", function () {
    loads += 1;
    if (loads > 1 && frame.getBoundingClientRect().top < 0) {
      frame.scrollIntoView();
    }
  });
  window.addEventListener("message", function (event) {
    if (event.source !== frame.contentWindow || event.origin !== origin) {
      return;
    }
    var height = event.data && event.data.bookingHeight;
    if (typeof height === "number" && height > 0 && height < 20000) {
      frame.style.height = Math.ceil(height) + "px";
    }
  });
})();
