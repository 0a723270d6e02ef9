// The web table's page: it gets a session from what the platform vouches for, opens the table's
// socket, and draws each view the server sends. It holds no game logic: the server says which
// cards are legal, and refuses what is not. Every text comes from the server's catalog; names are
// set as text, never as markup.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const hash = new URLSearchParams(location.hash.slice(1));
  const query = new URLSearchParams(location.search);
  // Inside a Discord Activity every request passes Discord's proxy under /.proxy.
  const inDiscord = query.has("frame_id") && query.has("instance_id");
  const base = (inDiscord ? "/.proxy" : "") + location.pathname.replace(/\/(index\.html)?$/, "").replace(/^\/\.proxy/, "");
  let T = {}; // the catalog's texts for the page
  let view = null; // the newest view
  let session = null;
  let socket = null;
  let retry = 0;
  let stopped = false;
  let moveNo = 0;
  let sentAt = -1; // the view a move was sent from: no second move until a newer view comes

  const t = (key) => T[key] || key;
  // label joins a label and its value with the catalog's mark ("Pli : …" in French).
  const label = (text, value) => text + (T["label.colon"] || ": ") + value;

  function status(text, error) {
    const s = $("status");
    s.textContent = text || "";
    s.classList.toggle("error", !!error);
  }

  let toastTimer = 0;
  function toast(text) {
    const el = $("toast");
    el.textContent = text;
    el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.hidden = true; }, 4000);
  }

  async function loadStrings(lang) {
    try {
      const r = await fetch(base + "/api/strings?lang=" + encodeURIComponent(lang || ""));
      const j = await r.json();
      T = j.strings || {};
      document.documentElement.lang = j.lang || "en";
      return j;
    } catch (e) {
      return {};
    }
  }

  // Telegram Mini Apps: tell the app the page is ready, and follow its theme.
  function telegramEvent(type, data) {
    const payload = JSON.stringify(data || {});
    if (window.TelegramWebviewProxy && window.TelegramWebviewProxy.postEvent) {
      window.TelegramWebviewProxy.postEvent(type, payload);
    } else if (window.parent !== window) {
      window.parent.postMessage(JSON.stringify({ eventType: type, eventData: data || {} }), "https://web.telegram.org");
    }
  }

  function telegramTheme() {
    try {
      const p = JSON.parse(hash.get("tgWebAppThemeParams") || "{}");
      const bg = (p.bg_color || "").replace("#", "");
      if (bg.length === 6) {
        const n = parseInt(bg, 16);
        const lum = 0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
        document.documentElement.dataset.theme = lum < 128 ? "dark" : "light";
      }
    } catch (e) { /* the default theme */ }
  }

  // The Discord Embedded App SDK's handshake and authorize command, spoken directly over
  // postMessage: HANDSHAKE (0), then FRAMEs (1) until READY, then AUTHORIZE for a code.
  const discordOrigins = new Set([location.origin, "https://discord.com", "https://discordapp.com",
    "https://ptb.discord.com", "https://ptb.discordapp.com", "https://canary.discord.com",
    "https://canary.discordapp.com", "null"]);

  function discordCode(clientId) {
    return new Promise((resolve, reject) => {
      const target = window.parent.opener || window.parent;
      const origin = document.referrer ? new URL(document.referrer).origin : "*";
      const nonce = "km" + Math.random().toString(36).slice(2);
      let ready = false;
      function onMessage(ev) {
        if (!discordOrigins.has(ev.origin) || !Array.isArray(ev.data)) return;
        const [op, data] = ev.data;
        if (op === 2) { reject(new Error("closed")); return; }
        if (op !== 1 || !data) return;
        if (!ready && data.cmd === "DISPATCH" && data.evt === "READY") {
          ready = true;
          target.postMessage([1, { cmd: "AUTHORIZE", nonce, args: { client_id: clientId, response_type: "code",
            state: "", prompt: "none", scope: ["identify"] } }], origin);
        } else if (data.nonce === nonce) {
          window.removeEventListener("message", onMessage);
          if (data.evt === "ERROR" || !data.data || !data.data.code) reject(new Error("authorize"));
          else resolve(data.data.code);
        }
      }
      window.addEventListener("message", onMessage);
      target.postMessage([0, { v: 1, encoding: "json", client_id: clientId, frame_id: query.get("frame_id") }], origin);
    });
  }

  async function getSession(boot) {
    const link = hash.get("link");
    const initData = hash.get("tgWebAppData");
    const src = link || initData || (inDiscord ? query.get("instance_id") : "") || "";
    let kept = null;
    try { kept = JSON.parse(sessionStorage.getItem("km.session") || "null"); } catch (e) { kept = null; }
    if (kept && kept.session && (!src || kept.src === src)) return kept.session;
    let body = null;
    if (link) body = { link };
    else if (initData) body = { telegram: initData, table: query.get("table") || "" };
    else if (inDiscord && boot.discord_client_id) {
      const code = await discordCode(boot.discord_client_id);
      body = { discord: code, instance: query.get("instance_id") };
    }
    if (!body) throw new Error(t("web.open_from_chat"));
    body.lang = navigator.language || "";
    const r = await fetch(base + "/api/session", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body) });
    const j = await r.json().catch(() => ({}));
    if (!r.ok || !j.session) throw new Error(j.error || t("web.open_from_chat"));
    sessionStorage.setItem("km.session", JSON.stringify({ src, session: j.session }));
    if (link) history.replaceState(null, "", location.pathname + location.search); // the link is used up
    return j.session;
  }

  function connect() {
    if (stopped) return;
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + base + "/ws");
    socket = ws;
    ws.onopen = () => {
      retry = 0;
      ws.send(JSON.stringify({ t: "hello", session, seq: view ? view.seq : 0 }));
    };
    ws.onmessage = (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch (e) { return; }
      switch (m.t) {
        case "strings":
          T = m.strings || T;
          document.documentElement.lang = m.lang || "en";
          if (view) draw(view);
          break;
        case "view":
          if (!view || m.view.seq >= view.seq || m.view.table !== view.table) {
            view = m.view;
            status("");
            draw(view);
          }
          break;
        case "refused":
          sentAt = -1; // nothing changed: the move may be made again
          toast(m.text);
          break;
        case "note":
          toast(m.text);
          break;
        case "bye":
          stopped = true;
          if (m.renew) sessionStorage.removeItem("km.session"); // over: opening the page again gets a new one
          status(m.text, true);
          break;
      }
    };
    ws.onclose = (ev) => {
      if (socket !== ws) return;
      if (stopped && ev.code !== 1001) return;
      stopped = false;
      status(t("web.reconnecting"));
      retry = Math.min(retry + 1, 6);
      setTimeout(connect, 250 * (1 << retry) * (0.5 + Math.random() / 2));
    };
  }

  function send(verb, arg) {
    if (!socket || socket.readyState !== WebSocket.OPEN || !view || sentAt === view.seq) return;
    sentAt = view.seq;
    moveNo++;
    socket.send(JSON.stringify({ t: "move", verb, arg: arg || "", seq: view.seq, id: "m" + moveNo }));
  }

  // Drawing.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function cardEl(c) {
    const e = el("div", "card" + (c.red ? " red" : ""));
    e.dataset.card = c.card;
    e.setAttribute("aria-label", c.label);
    e.append(el("span", "rank", c.rank), el("span", "suit", { S: "♠", H: "♥", D: "♦", C: "♣" }[c.suit] || "?"));
    return e;
  }

  // pos is where a seat sits on the screen: the reader at the bottom, the next seat to the left.
  function pos(v, seat) {
    const me = v.you >= 0 ? v.you : 0;
    return (seat - me + 4) % 4;
  }

  function button(text, onClick, cls) {
    const b = el("button", cls || "", text);
    b.addEventListener("click", onClick);
    return b;
  }

  function draw(v) {
    $("app").dataset.seq = String(v.seq); // which view the page shows
    document.title = t("web.title");
    $("title").textContent = v.title ? v.title : t("web.title");
    const g = v.game;
    const info = [];
    if (g) {
      info.push(t("pic.Game") + " " + g.no);
      if (g.trump_label) info.push(label(t("pic.Trump"), g.trump_label));
      info.push(t("web.stake") + " " + g.stake);
      if (g.calls && g.calls.length) {
        info.push(label(t("pic.Calls"), g.calls.map((c) => c.title + " (" + v.seats[c.seat].name + ")").join(", ")));
      }
    }
    $("info").textContent = info.join(" · ");
    $("say").textContent = v.say || "";
    if (v.you < 0 && v.status === "playing") $("say").textContent = (v.say || "") + " — " + t("web.watching");
    drawSeats(v);
    drawChoices(v);
    drawHand(v);
    drawExtra(v);
  }

  function drawSeats(v) {
    const tbl = $("table");
    tbl.hidden = false;
    for (const s of tbl.querySelectorAll(".seat")) s.replaceChildren();
    v.seats.forEach((s, i) => {
      const box = tbl.querySelector('.seat[data-pos="' + pos(v, i) + '"]');
      box.dataset.seat = String(i);
      box.classList.toggle("to-move", !!s.to_move);
      box.classList.toggle("you", i === v.you);
      box.append(el("span", "name", s.name + (i === v.you ? " (" + t("web.you") + ")" : "") + (s.away ? " " + t("seat.away") : "")));
      const meta = [t("pic.Team" + s.team)];
      if (s.dealer) meta.push(t("web.dealer"));
      if (v.game && v.status === "playing") meta.push(s.cards + " " + t("pic.Cards"));
      box.append(el("span", "meta", meta.join(" · ")));
    });
    const trick = $("trick");
    trick.replaceChildren();
    const g = v.game;
    // Between tricks the table shows the one just taken, as players would look at it.
    const shown = g && (g.trick.plays && g.trick.plays.length ? g.trick : g.last);
    if (shown && shown.plays) {
      shown.plays.forEach((p, n) => {
        const c = cardEl(p.card);
        c.dataset.pos = String(pos(v, p.seat));
        c.dataset.trickCard = p.card.card;
        c.append(el("span", "order", String(n + 1)));
        trick.append(c);
      });
    }
    trick.setAttribute("aria-label", shown && shown.text ? shown.text : t("pic.Trick"));
  }

  function drawChoices(v) {
    const box = $("choices");
    box.replaceChildren();
    if (v.trumps && v.trumps.length) box.append(el("span", "label", t("web.choose_trump") + ":"));
    (v.trumps || []).forEach((c) => box.append(button(c.label, () => send("trump", c.arg), "trump")));
    if (v.calls && v.calls.length) box.append(el("span", "label", t("web.calls") + ":"));
    (v.calls || []).forEach((c) => box.append(button("📣 " + c.label, () => send("announce", c.arg), "call")));
    if (v.can_deal) box.append(button(t("btn.deal"), () => send("deal"), "deal"));
    if (v.can_join) box.append(button(t("btn.join"), () => send("join"), "join"));
    if (v.can_rematch) {
      box.append(button(t("btn.rematch"), () => send("rematch", "same"), "rematch"));
      box.append(button(t("btn.rotate"), () => send("rematch", "rotate"), "rotate"));
    }
  }

  function drawHand(v) {
    const hand = $("hand");
    hand.replaceChildren();
    const myTurn = v.game && v.game.to_move === v.you;
    hand.classList.toggle("waiting", !myTurn);
    hand.setAttribute("aria-label", t("web.your_cards"));
    (v.hand || []).forEach((c) => {
      const e = cardEl(c);
      if (c.legal) {
        e.classList.add("legal");
        e.setAttribute("role", "button");
        e.tabIndex = 0;
        e.addEventListener("click", () => send("play", c.card));
        e.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") send("play", c.card); });
      }
      hand.append(e);
    });
  }

  function tally(n) {
    let s = "";
    for (let i = 0; i < n; i++) s += (i > 0 && i % 5 === 0 ? " " : "") + "|";
    return s || "—";
  }

  function drawExtra(v) {
    const g = v.game;
    $("score").textContent = g ? g.score : v.options;
    const last = $("last");
    last.replaceChildren();
    if (g && g.last) {
      last.append(el("strong", "", label(t("pic.LastTrick"), "")));
      g.last.plays.forEach((p) => last.append(cardEl(p.card)));
      if (g.last.text) last.append(el("div", "", g.last.text));
    }
    const board = $("board");
    board.replaceChildren();
    const b = v.board;
    if (v.status === "lobby") {
      const ul = el("ul", "lobby");
      v.seats.forEach((s, i) => ul.append(el("li", "", (i + 1) + ". " + s.name + " (" + s.team + ")")));
      board.append(ul);
      return;
    }
    board.append(el("strong", "", t("btn.board")));
    ["A", "B"].forEach((team, i) => {
      const p = el("p", "");
      p.append(el("span", "", t("pic.Team" + team) + " (" + b.teams[i] + "): "), el("span", "stripes", tally(b.open[i])),
        el("span", "", " " + b.open[i] + " " + t("pic.Open")));
      board.append(p);
    });
    if (!b.games || !b.games.length) {
      board.append(el("p", "", t("pic.NoGames")));
      return;
    }
    const table = el("table");
    const head = el("tr");
    [t("pic.Game"), t("pic.Trump"), t("pic.Points"), t("pic.Stripes")].forEach((h) => head.append(el("th", "", h)));
    table.append(head);
    b.games.slice(-6).forEach((s) => {
      const tr = el("tr");
      const st = s.stripes.map((x) => (x > 0 ? "+" + x : String(x))).join(" / ");
      [String(s.no), s.trump + " " + s.trump_team, s.points[0] + "–" + s.points[1], st].forEach((c) => tr.append(el("td", "", c)));
      table.append(tr);
    });
    board.append(table);
    if (b.winner) board.append(el("p", "", label(t("pic.Winner"), t("pic.Team" + b.winner))));
  }

  async function start() {
    telegramTheme();
    const boot = await loadStrings(navigator.language);
    status(t("web.connecting"));
    if (hash.has("tgWebAppData")) telegramEvent("web_app_ready");
    try {
      session = await getSession(boot);
    } catch (e) {
      status(e.message, true);
      return;
    }
    connect();
  }

  start();
})();
