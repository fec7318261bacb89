/// `/office.js`, the office's one script, served by the office itself (the CSP allows no other
/// and no inline script). On a page with a `live` element it opens the server-sent events of
/// `/events`; on each `change` it fetches the page again (its own URL: the same sort, filter and
/// search) and swaps the element's contents, at most once a second; and once each time the
/// stream opens, for what changed before it did. Without it the page is the
/// same, reloaded by hand. A session that ended (the fetch lands on the login page) stops it.
enum OfficeScript {
    static let source = """
        "use strict";
        (function () {
          const live = document.getElementById("live");
          if (!live || !window.EventSource) return;
          const source = new EventSource("/events");
          let busy = false;
          let again = false;
          async function refresh() {
            if (busy) { again = true; return; }
            busy = true;
            try {
              const answer = await fetch(location.href, { credentials: "same-origin", cache: "no-store" });
              if (answer.redirected || !answer.ok) {
                if (answer.redirected) source.close();
              } else {
                const page = new DOMParser().parseFromString(await answer.text(), "text/html");
                const fresh = page.getElementById("live");
                if (fresh) {
                  live.replaceChildren(...Array.from(fresh.childNodes));
                  live.dataset.updated = String(Date.now());
                }
              }
            } catch (error) {
              // The office is away for a moment: the next change tries again.
            }
            setTimeout(function () {
              busy = false;
              if (again) { again = false; refresh(); }
            }, 1000);
          }
          source.addEventListener("change", refresh);
          // What changed between the page's rendering and the stream's (re)opening.
          source.addEventListener("open", refresh);
        })();

        """
}
