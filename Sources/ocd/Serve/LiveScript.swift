/// `/live.js`: the one script of `ocd serve`'s pages, served from the server itself so that the content
/// security policy can keep refusing inline script. It listens to `/events` and, on each change saved
/// elsewhere, puts the new counts in the index's table and says on the page's banner what changed, with a
/// link to reload. It writes text only (`textContent`), never markup.
enum LiveScript {
    /// The script's text.
    static let text = """
        "use strict";
        // Live pages of ocd serve (docs/SERVE.md): what another process saves shows here within a second.
        (function () {
          var source = new EventSource("/events");
          source.addEventListener("change", function (message) {
            var change = JSON.parse(message.data);
            document.querySelectorAll("td.count[data-entity]").forEach(function (cell) {
              var count = change.counts[cell.getAttribute("data-entity")];
              if (count !== undefined) { cell.textContent = String(count); }
            });
            var banner = document.getElementById("live-change");
            // A commit that only says the store changed does not hide what an earlier one said.
            if (banner && (change.changes.length > 0 || banner.hidden)) {
              banner.querySelector(".what").textContent = change.summary;
              banner.hidden = false;
            }
            document.documentElement.setAttribute("data-changes", String(Number(document.documentElement.getAttribute("data-changes") || "0") + 1));
          });
          source.addEventListener("open", function () {
            document.documentElement.setAttribute("data-live", "open");
          });
        })();

        """
}
