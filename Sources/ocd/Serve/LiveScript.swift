/// `/live.js`: the one script of `ocd serve`'s pages, served from the server itself so that the content
/// security policy can keep refusing inline script. It listens to `/events` and, on each change saved
/// elsewhere, puts the new counts in the index's table, says on the page's banner what changed, and
/// brings a table or object page's rows up to date in place (marking the rows that changed). It writes
/// text (`textContent`) or nodes of this server's own pages (parsed, never `innerHTML`), nothing else.
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
            refresh();
          });
          // A table or object page is fetched again and its rows replaced where they differ; one refresh at
          // a time, and one more if changes came while it ran. Not while a form field holds unsaved typing.
          var refreshing = false, again = false;
          function refresh() {
            var main = document.querySelector("main");
            if (!main || !main.querySelector("table.objects, table.object")) { return; }
            if (refreshing) { again = true; return; }
            var editing = Array.prototype.some.call(main.querySelectorAll("input[name=value]"), function (field) {
              return field.value !== field.defaultValue || field === document.activeElement;
            });
            if (editing) { return; }
            refreshing = true;
            fetch(location.href, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
              .then(function (response) { return response.ok ? response.text() : null; })
              .then(function (text) {
                if (text === null) { return; }
                var fresh = new DOMParser().parseFromString(text, "text/html").querySelector("main");
                if (!fresh) { return; }
                var before = {};
                main.querySelectorAll("tr").forEach(function (row) {
                  var key = row.firstElementChild ? row.firstElementChild.textContent : "";
                  before[key] = row.textContent;
                });
                fresh.querySelectorAll("tr").forEach(function (row) {
                  var key = row.firstElementChild ? row.firstElementChild.textContent : "";
                  if (before[key] !== undefined && before[key] !== row.textContent) { row.classList.add("changed"); }
                  if (before[key] === undefined && row.querySelector("td")) { row.classList.add("changed"); }
                });
                main.replaceWith(document.adoptNode(fresh));
                document.documentElement.setAttribute("data-refreshes", String(Number(document.documentElement.getAttribute("data-refreshes") || "0") + 1));
              })
              .catch(function () {})
              .then(function () {
                refreshing = false;
                if (again) { again = false; refresh(); }
              });
          }
          source.addEventListener("open", function () {
            document.documentElement.setAttribute("data-live", "open");
          });
        })();

        """
}
