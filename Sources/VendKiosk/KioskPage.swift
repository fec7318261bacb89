import VendDisplay
import VendText

/// The kiosk's one page. It draws what `/events` sends (a `MachineView` as JSON) and posts taps;
/// it holds no state of the machine, so a reload or a second screen shows the same. Large type,
/// white on black, touch targets far above 48 px, for a panel in a browser in kiosk mode.
enum KioskPage {
    static func html(texts: DisplayTexts) -> String {
        let offline = "{\"text\": \(json(texts.outOfOrder)), \"hint\": \(json(texts.outOfOrderDetail))}"
        return """
            <!doctype html>
            <html lang="\(texts.language.rawValue)">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1, user-scalable=no">
            <title>vendd</title>
            <style>
            * { box-sizing: border-box; }
            html, body { margin: 0; height: 100%; background: #000; color: #fff;
              font-family: "Noto Sans CJK KR", "NanumGothic", "Noto Sans", "DejaVu Sans", sans-serif;
              -webkit-user-select: none; user-select: none; touch-action: manipulation;
              /* Korean breaks between words, as it is written ("없습니다", "1,800원" stay whole); a
                 word too long for its line still breaks rather than overflow. */
              word-break: keep-all; overflow-wrap: break-word; }
            body { display: flex; flex-direction: column; }
            header { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #111; border-bottom: 4px solid #333; }
            #credit-box { min-width: 280px; }
            #credit-label { font-size: 22px; color: #bbb; }
            #credit { font-size: 48px; font-weight: 800; color: #ffd400; line-height: 1.1; }
            #message { flex: 1; font-size: 32px; font-weight: 700; padding: 14px 20px; border-radius: 14px; background: #1d3b6a; }
            #message.good { background: #0b5d1e; } #message.warning { background: #8a5a00; } #message.error { background: #8b0000; }
            #coin-return { min-width: 200px; min-height: 84px; font-size: 30px; font-weight: 800; border-radius: 16px;
              border: 4px solid #fff; background: #222; color: #fff; }
            #coin-return:active { background: #555; }
            #hint { padding: 6px 24px; font-size: 20px; color: #ccc; background: #111; }
            #price-note { padding: 6px 24px; font-size: 20px; font-weight: 700; color: #ffd400; background: #111; }
            main { flex: 1; overflow: auto; padding: 14px 24px; }
            #grid { display: grid; grid-template-columns: repeat(5, 1fr); gap: 14px; }
            .card { position: relative; display: flex; flex-direction: column; align-items: center; min-height: 190px; padding: 8px;
              border: 4px solid #444; border-radius: 18px; background: #181818; color: #fff; font: inherit; cursor: pointer; }
            .card:active { transform: scale(0.97); }
            .card img, .card .noimg { width: 88px; height: 88px; object-fit: contain; }
            .card .slot { position: absolute; top: 8px; left: 12px; font-size: 20px; color: #aaa; font-weight: 700; }
            .card .name { margin-top: 6px; font-size: 21px; font-weight: 700; text-align: center; }
            .card .price { margin-top: 2px; font-size: 26px; font-weight: 800; }
            .card.affordable { border-color: #ffd400; background: #2a2500; box-shadow: 0 0 24px #ffd40088; }
            .card.affordable .price { color: #ffd400; }
            .card .price .was { font-size: 18px; font-weight: 600; color: #aaa; }
            .card.soldout { opacity: 0.55; }
            .card.soldout img { filter: grayscale(1); }
            .badge { position: absolute; font-size: 20px; font-weight: 800; padding: 4px 10px; border-radius: 10px; }
            .badge.hot { top: 8px; right: 8px; background: #d62300; color: #fff; }
            /* Over the picture, as wide as its words (the card's width at most): never over the name. */
            .badge.soldout { top: 46px; left: 8px; right: 8px; width: fit-content; max-width: calc(100% - 16px); margin: 0 auto;
              text-align: center; transform: rotate(-8deg); background: #fff; color: #000; font-size: 24px; border: 3px solid #000; }
            footer { padding: 8px 24px 12px; background: #111; border-top: 4px solid #333; min-height: 100px; }
            #bought-label { font-size: 22px; color: #bbb; margin-bottom: 8px; }
            #bought { display: flex; gap: 14px; overflow-x: auto; }
            .item { display: flex; align-items: center; gap: 10px; padding: 8px 14px; border-radius: 12px; background: #0b5d1e; font-size: 22px; font-weight: 700; }
            .item img { width: 48px; height: 48px; }
            #overlay { position: fixed; inset: 0; display: none; flex-direction: column; align-items: center; justify-content: center;
              background: #000; text-align: center; z-index: 10; }
            #overlay .big { font-size: 72px; font-weight: 800; color: #ff4040; padding: 0 40px; }
            #overlay .small { font-size: 32px; color: #ddd; margin-top: 24px; }
            #overlay.service .big { color: #ffd400; }
            #technician { display: none; padding: 12px 24px; }
            #technician h1 { font-size: 30px; margin: 0 0 8px; color: #ffd400; }
            #technician .columns { display: flex; gap: 24px; align-items: flex-start; }
            #stock { flex: none; border-collapse: collapse; font-size: 22px; white-space: nowrap; }
            #stock td, #stock th { padding: 3px 10px; border-bottom: 2px solid #333; text-align: left; }
            #stock .bar { width: 160px; height: 22px; background: #333; border-radius: 6px; overflow: hidden; }
            #stock .bar div { height: 100%; background: #3fb950; }
            #stock button { min-width: 120px; min-height: 56px; font-size: 22px; font-weight: 700; border-radius: 12px;
              border: 3px solid #fff; background: #1d3b6a; color: #fff; }
            #sales-box { flex: 1; min-width: 0; }
            #sales-box h2 { font-size: 26px; margin: 0 0 8px; }
            #pie { display: block; width: 300px; max-width: 100%; background: #fff; border-radius: 12px; }
            /* The legend in the page's own type: inside the scaled SVG it was 9 px. */
            #legend { list-style: none; margin: 10px 0 0; padding: 0; font-size: 22px; }
            #legend li { display: flex; align-items: baseline; gap: 10px; padding: 3px 0; border-bottom: 2px solid #333; }
            #legend .swatch { flex: none; width: 20px; height: 20px; border-radius: 4px; align-self: center; }
            #legend .label { flex: 1; min-width: 0; font-weight: 700; }
            #legend .figures { flex: none; white-space: nowrap; color: #ddd; }
            body.technician header, body.technician main, body.technician footer, body.technician #hint, body.technician #price-note { display: none; }
            body.technician #technician { display: block; }
            </style>
            </head>
            <body>
            <header>
              <div id="credit-box"><div id="credit-label"></div><div id="credit"></div></div>
              <div id="message"></div>
              <button id="coin-return" type="button"></button>
            </header>
            <div id="hint"></div>
            <div id="price-note"></div>
            <main><div id="grid"></div></main>
            <footer><div id="bought-label"></div><div id="bought"></div></footer>
            <section id="technician">
              <h1 id="technician-title"></h1>
              <div class="columns"><table id="stock"></table>
                <div id="sales-box"><h2 id="sales-title"></h2><img id="pie" alt=""><ol id="legend"></ol></div></div>
            </section>
            <div id="overlay"><div class="big"></div><div class="small"></div></div>
            <script>
            const OFFLINE = \(offline);
            const $ = (id) => document.getElementById(id);
            const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]));
            let shown = {};
            function set(id, html) { if (shown[id] !== html) { shown[id] = html; $(id).innerHTML = html; } }
            function picture(url, cls) { return url ? `<img src="${esc(url)}" alt="">` : `<div class="${cls}"></div>`; }
            function render(view) {
              document.body.className = view.mode;
              document.body.dataset.mode = view.mode;
              const overlay = $('overlay');
              if (view.mode === 'out-of-order' || view.mode === 'service') {
                overlay.className = view.mode;
                overlay.style.display = 'flex';
                overlay.querySelector('.big').textContent = view.message.text;
                overlay.querySelector('.small').textContent = view.mode === 'service' ? view.machine : (view.hint || '');
              } else {
                overlay.style.display = 'none';
              }
              const L = view.labels;
              $('credit-label').textContent = L.credit;
              $('credit').textContent = view.creditText;
              $('message').textContent = view.message.text;
              $('message').className = view.message.tone;
              $('coin-return').textContent = L.coinReturn;
              $('hint').textContent = view.hint || '';
              $('hint').style.display = view.hint && view.mode === 'customer' ? 'block' : 'none';
              $('price-note').textContent = view.priceNote || '';
              $('price-note').style.display = view.priceNote && view.mode === 'customer' ? 'block' : 'none';
              set('grid', view.slots.map((s) => `
                <button type="button" class="card${s.affordable ? ' affordable' : ''}${s.soldOut ? ' soldout' : ''}" data-slot="${esc(s.id)}"
                  data-affordable="${s.affordable}" data-soldout="${s.soldOut}">
                  <span class="slot">${esc(s.id)}</span>
                  ${picture(s.picture, 'noimg')}
                  <span class="name">${esc(s.name)}</span>
                  <span class="price">${s.wasText ? `<s class="was">${esc(s.wasText)}</s> ` : ''}${esc(s.priceText)}</span>
                  ${s.hot ? `<span class="badge hot">${esc(L.hot)}</span>` : ''}
                  ${s.badge ? `<span class="badge soldout">${esc(s.badge)}</span>` : ''}
                </button>`).join(''));
              $('bought-label').textContent = L.bought;
              set('bought', view.bought.map((b) => `<div class="item" data-slot="${esc(b.slot)}">${picture(b.picture, '')}${esc(b.name)}</div>`).join(''));
              $('technician-title').textContent = L.technician;
              set('stock', `<tr><th></th><th></th><th>${esc(L.stock)}</th><th></th><th></th></tr>` + view.slots.map((s) => `
                <tr data-slot="${esc(s.id)}"><td>${esc(s.id)}</td><td>${esc(s.name)}</td>
                <td class="count">${s.stock}/${s.capacity}</td>
                <td><div class="bar"><div style="width:${Math.round(100 * s.stock / s.capacity)}%"></div></div></td>
                <td><button type="button" class="restock" data-slot="${esc(s.id)}" ${s.stock >= s.capacity ? 'disabled' : ''}>${esc(L.restock)}</button></td></tr>`).join(''));
              if (view.mode === 'technician' && view.salesVersion) {
                const src = '/sales.svg?v=' + encodeURIComponent(view.salesVersion);
                if ($('pie').getAttribute('src') !== src) { $('pie').setAttribute('src', src); }
                $('sales-title').textContent = view.machine ? `${L.sales} — ${view.machine}` : L.sales;
                set('legend', (view.salesLegend || []).map((e) => `
                  <li><span class="swatch" style="background:${esc(e.color)}"></span><span class="label">${e.number}. ${esc(e.label)}</span>
                  <span class="figures">${esc(e.detail)} (${esc(e.share)})</span></li>`).join(''));
                $('sales-box').style.display = 'block';
              } else {
                $('sales-box').style.display = 'none';
              }
            }
            function offline() {
              render({mode: 'out-of-order', machine: '', creditText: '', message: {text: OFFLINE.text, tone: 'error'}, hint: OFFLINE.hint,
                      slots: [], bought: [], labels: {}});
            }
            $('grid').addEventListener('click', (e) => {
              const card = e.target.closest('.card');
              if (card) { fetch('/select/' + encodeURIComponent(card.dataset.slot), {method: 'POST'}); }
            });
            $('coin-return').addEventListener('click', () => fetch('/coin-return', {method: 'POST'}));
            $('stock').addEventListener('click', (e) => {
              const button = e.target.closest('.restock');
              if (button) { fetch('/restock/' + encodeURIComponent(button.dataset.slot), {method: 'POST'}); }
            });
            // Server-sent events: the display process pushes every change; the browser reconnects by
            // itself if the display process restarts, and until then the machine is out of order.
            const events = new EventSource('/events');
            events.onmessage = (e) => render(JSON.parse(e.data));
            events.onerror = offline;
            </script>
            </body>
            </html>
            """
    }

    /// A JSON string literal, safe inside a script element.
    static func json(_ text: String) -> String {
        "\"" + text.replacingScalars(["\"": "\\\"", "\\": "\\\\", "<": "\\u003c", "\n": "\\n"]) + "\""
    }
}
