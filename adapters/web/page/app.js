// The web table's page: it gets a session from what the platform vouches for, opens the table's
// socket, and draws each view the server sends. It holds no game logic: the server says which
// cards are legal, and refuses what is not. Every text comes from the server's catalog; names are
// set as text, never as markup.
//
// It is a place to follow the game: the page tells what happened one thing at a time (see
// "Following the game"): cards travel to the felt at a readable pace, a trick just taken stays
// with its winner marked, a game's result stays until dismissed or the next deal's first card. A
// live region says trump, calls, turns, plays, who took each trick and each game's result. The
// socket's heartbeat tells a dead connection within two beats; an overlay then covers the table
// until it is back.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const hash = new URLSearchParams(location.hash.slice(1));
  const query = new URLSearchParams(location.search);
  // Inside a Discord Activity every request passes Discord's proxy under /.proxy.
  const inDiscord = query.has("frame_id") && query.has("instance_id");
  const base = (inDiscord ? "/.proxy" : "") + location.pathname.replace(/\/(index\.html)?$/, "").replace(/^\/\.proxy/, "");
  let T = {}; // the catalog's texts for the page
  let sheet = null; // the stripe board as the chats draw it: {png, text}
  let watchers = 0; // how many watch the table without a seat
  let view = null; // the newest view
  let session = null;
  let socket = null;
  let retry = 0;
  let stopped = false;
  let moveNo = 0;
  // A move's ID is the platform's event ID of a button press: unique to this page load, so that a
  // reload's or another tab's first move is not taken for one the table already applied.
  const pageID = "m" + Math.random().toString(36).slice(2, 10) + "-";
  let sentAt = -1; // the view a move was sent from: no second move until a newer view comes

  const t = (key) => T[key] || key;
  // singular: the count takes the singular in the page's language (the server's plural rules).
  const singular = (n) => (T["plural.one"] || "1").split(",").includes(String(n));
  // fmt fills a catalog text's %s, %d and %[n]s with args, as Go's fmt does for these verbs.
  function fmt(text, ...args) {
    let next = 0;
    return text.replace(/%(?:\[(\d+)\])?([sd%])/g, (all, n, verb) => {
      if (verb === "%") return "%";
      const i = n ? Number(n) - 1 : next;
      next = i + 1;
      return String(args[i]);
    });
  }
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

  // Telegram Mini Apps: tell the app the page is ready, follow its theme, give haptic feedback on
  // a play and on one's turn, and show its back button while a finished trick or game is held.
  const inTelegram = hash.has("tgWebAppData");
  function telegramEvent(type, data) {
    if (!inTelegram) return;
    const payload = JSON.stringify(data || {});
    if (window.TelegramWebviewProxy && window.TelegramWebviewProxy.postEvent) {
      window.TelegramWebviewProxy.postEvent(type, payload);
    } else if (window.parent !== window) {
      window.parent.postMessage(JSON.stringify({ eventType: type, eventData: data || {} }), "https://web.telegram.org");
    }
  }

  // dark tells the page's theme: Telegram's, else the system's.
  function dark() {
    const th = document.documentElement.dataset.theme;
    if (th) return th === "dark";
    return !!(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
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

  function haptic(data) { telegramEvent("web_app_trigger_haptic_feedback", data); }
  let backShown = false;
  function telegramBack(visible) {
    if (visible === backShown) return;
    backShown = visible;
    telegramEvent("web_app_setup_back_button", { is_visible: visible });
  }
  // Telegram's events reach the page as a call (its apps) or as a message (Telegram Web).
  function onTelegramEvent(type) {
    if (type === "back_button_pressed") release();
  }
  if (inTelegram) {
    const receiver = { receiveEvent: onTelegramEvent };
    window.Telegram = window.Telegram || {};
    window.Telegram.WebView = window.Telegram.WebView || receiver;
    window.TelegramGameProxy = window.TelegramGameProxy || receiver;
    window.addEventListener("message", (ev) => {
      if (ev.origin !== "https://web.telegram.org" || typeof ev.data !== "string") return;
      try { const m = JSON.parse(ev.data); onTelegramEvent(m.eventType, m.eventData); } catch (e) { /* not Telegram's */ }
    });
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
    const watch = hash.get("watch");
    const initData = hash.get("tgWebAppData");
    const src = link || watch || initData || (inDiscord ? query.get("instance_id") : "") || "";
    let kept = null;
    try { kept = JSON.parse(sessionStorage.getItem("km.session") || "null"); } catch (e) { kept = null; }
    if (kept && kept.session && (!src || kept.src === src)) return kept.session;
    let body = null;
    if (link) body = { link };
    else if (watch) body = { watch };
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

  // The connection. Each side pings after a beat of silence; two beats without a word from the
  // server mean the connection is lost: the overlay shows and the page connects again, waiting
  // longer after each failure but never more than MAX_RETRY.
  const MAX_RETRY = 4000, OPEN_WITHIN = 5000;
  let beat = 4000;
  let heard = 0, said = 0; // when the page last heard from and spoke to the server
  let opened = 0; // when the socket now connecting was opened

  function connect() {
    if (stopped) return;
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + base + "/ws");
    socket = ws;
    opened = Date.now();
    ws.onopen = () => {
      heard = Date.now();
      speak({ t: "hello", session, seq: view ? view.seq : 0, dark: dark() });
    };
    ws.onmessage = (ev) => {
      if (socket !== ws) return;
      heard = Date.now();
      let m;
      try { m = JSON.parse(ev.data); } catch (e) { return; }
      switch (m.t) {
        case "ping":
          if (m.beat) beat = m.beat;
          break;
        case "strings":
          T = m.strings || T;
          document.documentElement.lang = m.lang || "en";
          if (view && busy()) drawWaiting(view);
          else if (view) draw(view);
          break;
        case "view":
          retry = 0;
          overlay(null);
          if (!view || m.view.seq >= view.seq || m.view.table !== view.table) {
            const old = view;
            view = m.view;
            if (view.pace && !window.kmPace) { // the table's pace, as the chats follow it
              PACE.card = view.pace.card_ms;
              PACE.trick = view.pace.trick_ms;
            }
            status("");
            follow(old, view); // draws the view once everything before it is told
            if (busy()) drawWaiting(view);
            else if (!old) idle();
          }
          break;
        case "refused":
          sentAt = -1; // nothing changed: the move may be made again
          toast(m.text);
          break;
        case "note":
          toast(m.text);
          break;
        case "watchers":
          watchers = m.n || 0;
          drawWatchers();
          break;
        case "watchlink":
          shareWatch(m.text);
          break;
        case "replays":
          showReplays(m.list);
          break;
        case "replay":
          showReplay(m.replay);
          break;
        case "board":
          sheet = { png: m.png, text: m.text };
          if (view && !busy()) drawExtra(view);
          break;
        case "bye":
          stopped = true;
          if (m.renew) sessionStorage.removeItem("km.session"); // over: opening the page again gets a new one
          if (m.why === "elsewhere") {
            overlay(t("web.take_back"), () => { stopped = false; overlay(t("web.connecting")); connect(); });
          } else {
            overlay(m.text);
            status(m.text, true);
          }
          break;
      }
    };
    ws.onclose = (ev) => {
      if (socket !== ws) return;
      if (stopped && ev.code !== 1001) return;
      stopped = false;
      lost();
    };
  }

  // lost gives up the socket (a dead one may never say it closed) and connects again soon.
  function lost() {
    const old = socket;
    socket = null;
    if (old) { old.onclose = null; try { old.close(); } catch (e) { /* already gone */ } }
    overlay(t("web.reconnecting"));
    retry = Math.min(retry + 1, 8);
    const wait = Math.min(MAX_RETRY, 250 * (1 << retry)) * (0.5 + Math.random() / 2);
    setTimeout(connect, wait);
  }

  function speak(m) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify(m));
    said = Date.now();
    return true;
  }

  setInterval(() => {
    if (!socket || stopped) return;
    const now = Date.now();
    if (socket.readyState === WebSocket.CONNECTING) {
      if (now - opened > OPEN_WITHIN) lost();
      return;
    }
    if (socket.readyState !== WebSocket.OPEN) return;
    if (now - heard > 2 * beat + 1000) { lost(); return; }
    if (now - said >= beat) speak({ t: "ping" });
  }, 500);

  // The overlay covers the page while the table cannot be played from it: the connection is
  // lost, or another tab took the seat (then a tap takes it back). Nothing under it can be used.
  let onOverlayTap = null;
  function overlay(text, onTap) {
    const o = $("overlay"), b = $("overlay-text");
    onOverlayTap = onTap || null;
    o.hidden = !text;
    $("app").inert = !!text;
    if (!text) return;
    b.textContent = text;
    b.disabled = !onTap;
    if (onTap) b.focus();
  }
  $("overlay-text").addEventListener("click", () => { if (onOverlayTap) onOverlayTap(); });

  function send(verb, arg) {
    // No blind tap: a move counts only from the view the page shows, with everything told. Taking
    // one's seat back is no move in the game: it counts while the page is still telling.
    const move = verb !== "back";
    if (!$("overlay").hidden || !view || sentAt === view.seq || (move && busy())) return;
    if (!speak({ t: "move", verb, arg: arg || "", seq: view.seq, id: pageID + (moveNo + 1) })) return;
    sentAt = view.seq;
    moveNo++;
    if (verb === "play" || verb === "trump") haptic({ type: "impact", impact_style: "light" });
  }

  // Following the game. The page tells what happened one thing at a time, from a queue of steps
  // it makes from the views (which may come together, or all at once after a computer player's
  // quick moves): each card travels from its player's seat to the felt, computer players' cards
  // at least PACE.card apart; a finished trick stays with its winner marked PACE.trick (a tap
  // lets it go), then goes to the winner's side; trump named and each call are said at the seat.
  // While the queue runs the hand takes no tap: no move counts for a trick the page has not shown
  // (the view it was made from is the one the page says it shows, #app's data-seq). A page that
  // falls behind by more than a trick skips to the newest one rather than replay old tricks.
  // window.kmPace may set other times (the browser tests' quick tables).
  const PACE = Object.assign({ card: 700, trick: 2000, travel: 320, gather: 280, event: 900 }, window.kmPace || {});
  const reducedMotion = window.matchMedia ? window.matchMedia("(prefers-reduced-motion: reduce)") : { matches: false };
  let steps = []; // what the page still has to show, in order
  let running = null; // the step on show
  let stepTimer = 0;
  let shownAt = 0; // when the last card was shown
  let felt = null; // the trick the felt shows: {key, plays, winner, won, held}; null: the view's own
  let result = null; // the ended game shown until dismissed or the next game's first card
  let seen = new Set(); // what was told: "epoch/game/trick/seat", "…/taken", "…/trump", "…/call/i"
  let epoch = 0; // a new match (a rematch) counts its games from 1 again
  let myTurn = false, reminded = false;
  const busy = () => !!running || steps.length > 0;

  // finished is the newest finished trick a view carries: the ended game's last, else its own.
  function finished(v) {
    if (v.ended) return { trick: v.ended.last, game: v.ended.no, ended: v.ended };
    const g = v.game;
    if (g && g.last) return { trick: g.last, game: g.no, ended: null };
    return null;
  }

  // stepsOf gives what v shows that the page has not told, in the order it happened, marking it
  // told.
  function stepsOf(v) {
    const out = [];
    const k = (...parts) => epoch + "/" + parts.join("/");
    const once = (key) => !seen.has(key) && seen.add(key);
    const plays = (game, tr) => (tr.plays || []).forEach((p) => {
      if (once(k(game, tr.no, p.seat))) out.push({ kind: "play", key: k(game, tr.no), game, seat: p.seat, card: p.card });
    });
    const g = v.game;
    const events = () => {
      if (!g) return;
      if (g.trump && once(k(g.no, "trump"))) out.push({ kind: "trump", seat: g.forehand, label: g.trump_label, text: fmt(t("web.trump_named"), v.seats[g.forehand].name, g.trump_label) });
      (g.calls || []).forEach((c, i) => {
        if (once(k(g.no, "call", i))) out.push({ kind: "call", seat: c.seat, title: c.title, text: fmt(t("note.announced"), v.seats[c.seat].name, c.title) });
      });
    };
    const f = finished(v);
    const take = () => {
      if (!f) return;
      plays(f.game, f.trick);
      if (once(k(f.game, f.trick.no, "taken"))) {
        out.push({ kind: "take", key: k(f.game, f.trick.no), game: f.game, trick: f.trick, ended: f.ended });
        out.push({ kind: "gather", key: k(f.game, f.trick.no), trick: f.trick });
      }
    };
    if (f && g && f.game !== g.no) { take(); events(); } else { events(); take(); }
    if (g && g.phase === "play") plays(g.no, g.trick);
    return out;
  }

  function follow(old, v) {
    const games = (v.board.games || []).length;
    if (old && (v.table !== old.table || games < (old.board.games || []).length)) {
      epoch++; // a new match: its plays are new however its games are numbered
      felt = null;
    }
    const fresh = stepsOf(v);
    if (!old) {
      // The first view: the table as it stands, nothing replayed; a game's result still stays
      // until the next deal's first card.
      const e = v.ended, g = v.game;
      if (e && !(g && g.no !== e.no && g.trick.plays && g.trick.plays.length)) showResult(e);
      return;
    }
    if (fresh.some((s) => s.kind === "take") && steps.some((s) => s.kind === "take")) {
      // More than a trick behind: the older tricks are not replayed.
      steps = steps.filter((s) => s.kind === "trump" || s.kind === "call");
      if (running && (running.kind === "take" || running.kind === "gather")) finishStep();
    }
    steps.push(...fresh);
    pump();
  }

  // pump shows the next step when none is on show; an empty queue draws the newest view whole.
  function pump() {
    if (running) return;
    const s = steps.shift();
    if (!s) {
      idle();
      return;
    }
    running = s;
    let before = 0;
    if (s.kind === "play" && view && view.seats[s.seat].robot && !document.hidden) {
      before = Math.max(0, PACE.card - (performance.now() - shownAt));
    }
    if (before > 0) stepTimer = setTimeout(() => showStep(s), before);
    else showStep(s);
  }

  // tellShown says which view the page shows once the last thing it told of it is on show: where
  // the page is the place's own table (bot -web), the computer players wait for it, so the game
  // keeps the page's pace as it keeps the chats'.
  let toldShown = 0, toldTable = "";
  function tellShown() {
    if (!view || steps.length > 0) return;
    if (view.table !== toldTable) { toldTable = view.table; toldShown = 0; } // a rematch counts anew
    if (toldShown >= view.seq) return;
    if (speak({ t: "shown", seq: view.seq })) toldShown = view.seq;
    $("app").dataset.shown = String(toldShown);
  }

  function showStep(s) {
    if (running !== s) return;
    const quick = document.hidden;
    let wait = 0;
    switch (s.kind) {
      case "play":
        if (!felt || felt.key !== s.key) felt = { key: s.key, plays: [], winner: -1, won: "", held: false };
        if (result && s.game !== result.no) showResult(null); // the next deal's first card
        felt.plays.push({ seat: s.seat, card: s.card });
        drawFelt(view, s.seat);
        say(label(view.seats[s.seat].name, cardName(s.card)));
        shownAt = performance.now(); // the card is in view from now: the next computer card waits PACE.card
        wait = reducedMotion.matches || quick ? 0 : PACE.travel;
        break;
      case "take":
        felt = { key: s.key, plays: s.trick.plays.slice(), winner: s.trick.winner, won: s.trick.won, held: true };
        drawFelt(view, -1);
        say(s.trick.won + (s.ended ? " " + s.ended.text : ""));
        if (s.ended) {
          showResult(s.ended);
          cue("game");
        } else cue(view.you >= 0 && view.seats[s.trick.winner].team === view.seats[view.you].team ? "ours" : "trick");
        telegramBack(true);
        wait = quick ? 0 : PACE.trick;
        break;
      case "gather":
        if (felt && felt.key === s.key) {
          felt.held = false;
          drawFelt(view, -1);
          wait = reducedMotion.matches || quick ? 0 : PACE.gather;
          gather(view, s.trick.winner, wait);
        }
        telegramBack(false);
        break;
      default: // trump, call
        say(s.text);
        bubble(view, s.seat, s.kind === "trump" ? s.label : "📣 " + s.title);
        wait = quick ? 0 : PACE.event;
    }
    stepTimer = setTimeout(finishStep, wait);
    tellShown();
  }

  function finishStep() {
    clearTimeout(stepTimer);
    const s = running;
    running = null;
    if (s && s.kind === "gather" && felt && felt.key === s.key) felt = null;
    pump();
  }

  // release lets a held trick go at once: a tap on the felt, or Telegram's back button.
  function release() {
    if (running && running.kind === "take") finishStep();
  }

  // idle: everything told; the page shows the newest view and takes moves from it.
  function idle() {
    if (!view) return;
    draw(view);
    tellShown();
    const v = view, g = v.game;
    const lines = [];
    const mine = !!g && v.status === "playing" && g.to_move === v.you && v.you >= 0;
    if (mine && !myTurn) {
      lines.push(t("hand.your_turn"));
      haptic({ type: "notification", notification_type: "success" });
      cue("turn");
    }
    myTurn = mine;
    const r = !!(v.clock && v.clock.reminded && v.clock.seat === v.you);
    if (r && !reminded) {
      lines.push(t("note.reminder"));
      haptic({ type: "notification", notification_type: "warning" });
    }
    reminded = r;
    if (lines.length) announce(lines.join(" "));
  }

  // say shows what just happened on the line under the felt and says it in the live region.
  function say(text) {
    if (!text) return;
    $("say").textContent = text;
    announce(text);
  }

  function announce(text) {
    const box = $("said");
    const p = el("p", "", text);
    box.append(p);
    while (box.childElementCount > 4) box.firstElementChild.remove();
  }

  // The game's result under the felt, never over a card: points, stake, the stripes it moved.
  function showResult(ended) {
    result = ended;
    const box = $("result");
    box.hidden = !ended;
    if (!ended) return;
    const signed = (n) => (n > 0 ? "+" + n : String(n));
    box.replaceChildren(el("span", "text", ended.text),
      el("span", "line", fmt(t("web.result.stake"), ended.stake) + " · " + fmt(t("web.result.stripes"), signed(ended.stripes[0]), signed(ended.stripes[1]))),
      el("span", "hint", t("web.continue")));
    if (view && view.status === "over" && view.board.winner && sheet) {
      const img = el("img", "sheet");
      img.src = sheet.png;
      img.alt = sheet.text;
      box.insertBefore(img, box.lastChild);
    }
  }
  $("result").addEventListener("click", () => showResult(null));

  // Sound cues, off unless the player turns them on: short tones made in the page (WebAudio).
  let audio = null;
  let soundOn = false;
  try { soundOn = localStorage.getItem("km.sound") === "on"; } catch (e) { soundOn = false; }
  const tones = { turn: [660, 880], trick: [440], ours: [523, 659], game: [523, 659, 784] };
  function cue(kind) {
    if (!soundOn || !tones[kind]) return;
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      tones[kind].forEach((f, i) => {
        const o = audio.createOscillator(), gain = audio.createGain();
        const at = audio.currentTime + i * 0.12;
        o.frequency.value = f;
        gain.gain.setValueAtTime(0.08, at);
        gain.gain.exponentialRampToValueAtTime(0.001, at + 0.11);
        o.connect(gain).connect(audio.destination);
        o.start(at);
        o.stop(at + 0.12);
      });
      window.kmCues = (window.kmCues || 0) + 1; // for the tests: a cue was played
    } catch (e) { /* no audio here */ }
  }
  $("sound").addEventListener("click", () => {
    soundOn = !soundOn;
    try { localStorage.setItem("km.sound", soundOn ? "on" : "off"); } catch (e) { /* kept for this page only */ }
    drawSound();
    if (soundOn) cue("turn");
  });
  // The watch link: for people without a seat (no hand, no move). A seated player asks for it;
  // the page copies it, and shows it in case the copy is not allowed.
  $("watch").addEventListener("click", () => speak({ t: "watchlink" }));

  // Played matches: the kept matches of the table's place, one stepped through at a time (the
  // server reads the record and says each step; the page only shows them). The arrows step too.
  let replay = null, replayGame = 0, replayStep = 0;
  function openReplays() {
    $("play").hidden = true;
    $("extra").hidden = true;
    $("replay").hidden = false;
    $("replay-title").textContent = t("web.replays").replace(/^\S+\s/, "");
    $("replay-close").textContent = t("web.replay.close");
    $("replay-match").hidden = true;
    speak({ t: "replays" });
  }
  function closeReplays() {
    $("replay").hidden = true;
    $("play").hidden = false;
    $("extra").hidden = false;
    replay = null;
    $("replays").focus();
  }
  function showReplays(list) {
    if ($("replay").hidden || !list) return;
    const ul = $("replay-list");
    ul.replaceChildren();
    $("replay-empty").hidden = !list.empty;
    $("replay-empty").textContent = list.empty || "";
    (list.lines || []).forEach((line, i) => {
      const li = el("li");
      li.append(button(line, () => speak({ t: "replay", n: i + 1 }), "replay-pick"));
      ul.append(li);
    });
    const first = ul.querySelector("button");
    (first || $("replay-close")).focus();
  }
  function showReplay(r) {
    if ($("replay").hidden || !r) return;
    replay = r;
    $("replay-list").replaceChildren();
    $("replay-empty").hidden = true;
    $("replay-title").textContent = r.line;
    $("replay-match").hidden = false;
    const games = $("replay-games");
    games.setAttribute("aria-label", t("pic.Game"));
    games.replaceChildren(...r.games.map((g, i) => button(fmt(t("web.replay.game"), g.no), () => { replayGame = i; replayStep = 0; drawReplay(true); }, "replay-game")));
    replayGame = 0;
    replayStep = 0;
    drawReplay(true);
    $("replay-next").focus();
  }
  function drawReplay(said) {
    if (!replay) return;
    const g = replay.games[replayGame], st = g.steps[replayStep];
    $("replay-games").querySelectorAll("button").forEach((b, i) => b.setAttribute("aria-pressed", String(i === replayGame)));
    $("replay-step").textContent = fmt(t("web.replay.game"), g.no) + " · " + fmt(t("web.replay.step"), replayStep + 1, g.steps.length) +
      (st.trump ? " · " + label(t("pic.Trump"), st.trump) : "");
    const seats = $("replay-seats");
    seats.setAttribute("aria-label", t("web.replay.hands"));
    seats.replaceChildren(...st.hands.map((hand, i) => {
      const li = el("li", "replay-seat" + (st.winner === i ? " won" : ""));
      li.append(el("span", "name", replay.seats[i]));
      const cards = el("span", "cards");
      hand.forEach((c) => cards.append(cardEl(c)));
      li.append(cards);
      return li;
    }));
    const trick = $("replay-trick");
    trick.setAttribute("aria-label", t("pic.Trick"));
    trick.replaceChildren(...st.trick.map((p) => {
      const c = cardEl(p.card);
      c.setAttribute("aria-label", label(replay.seats[p.seat], cardName(p.card))); // who played it
      c.title = replay.seats[p.seat];
      if (p.seat === st.winner) c.classList.add("won");
      return c;
    }));
    $("replay-say").textContent = st.say;
    $("replay-score").textContent = st.score;
    $("replay-prev").textContent = t("web.replay.prev");
    $("replay-next").textContent = t("web.replay.next");
    $("replay-prev").disabled = replayGame === 0 && replayStep === 0;
    const lastGame = replayGame === replay.games.length - 1;
    $("replay-next").disabled = lastGame && replayStep === g.steps.length - 1;
    if (said) announce(st.say);
  }
  function stepReplay(d) {
    if (!replay) return;
    let g = replayGame, s = replayStep + d;
    if (s < 0 && g > 0) { g--; s = replay.games[g].steps.length - 1; }
    if (s >= replay.games[g].steps.length && g < replay.games.length - 1) { g++; s = 0; }
    if (s < 0 || s >= replay.games[g].steps.length) return;
    replayGame = g;
    replayStep = s;
    drawReplay(true);
  }
  $("replays").addEventListener("click", openReplays);
  $("replay-close").addEventListener("click", closeReplays);
  $("replay-prev").addEventListener("click", () => stepReplay(-1));
  $("replay-next").addEventListener("click", () => stepReplay(1));
  $("replay").addEventListener("keydown", (ev) => {
    if (!replay || ev.target.tagName === "INPUT") return;
    if (ev.key === "ArrowRight") { ev.preventDefault(); stepReplay(1); }
    if (ev.key === "ArrowLeft") { ev.preventDefault(); stepReplay(-1); }
    if (ev.key === "Escape") { ev.preventDefault(); closeReplays(); }
  });
  function shareWatch(url) {
    if (!url) return;
    const done = () => toast(url);
    try { navigator.clipboard.writeText(url).then(done, done); } catch (e) { done(); }
  }
  function drawWatchers() {
    const w = $("watchers");
    w.hidden = watchers <= 0;
    w.textContent = "👁 " + fmt(t(singular(watchers) ? "web.watchers.one" : "web.watchers.other"), watchers);
  }

  function drawSound() {
    const b = $("sound");
    b.textContent = (soundOn ? "🔊 " : "🔈 ") + t("web.sound");
    b.setAttribute("aria-pressed", String(soundOn));
  }
  // Drawing.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  const suitSymbol = { S: "♠", H: "♥", D: "♦", C: "♣" };
  // rankLetter is the rank as the reader's language writes it on a card: "D" for a German Dame.
  const rankLetter = (r) => (T["web.rank." + r] || r);
  const cardName = (c) => fmt(t("card.name"), T["rank." + c.rank] || c.rank, T["suit." + c.suit] || c.suit);

  function cardEl(c, tag) {
    const e = el(tag || "div", "card" + (c.red ? " red" : "") + (c.trump ? " trump" : ""));
    e.dataset.card = c.card;
    e.setAttribute("role", "img");
    e.setAttribute("aria-label", cardName(c) + (c.trump ? ", " + t("pic.Trump") : ""));
    const face = el("span", "face");
    face.setAttribute("aria-hidden", "true");
    face.append(el("span", "rank", rankLetter(c.rank)), el("span", "suit", suitSymbol[c.suit] || "?"));
    e.append(face);
    return e;
  }

  // pos is where a seat sits on the screen: the reader at the bottom, the next seat to the left.
  function pos(v, seat) {
    const me = v.you >= 0 ? v.you : 0;
    return (seat - me + 4) % 4;
  }

  function button(text, onClick, cls) {
    const b = el("button", cls || "", text);
    b.type = "button";
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
    const away = v.you >= 0 && v.seats[v.you].away && v.status === "playing";
    $("away").hidden = !away;
    $("away-text").textContent = t("note.away.you");
    $("back").textContent = t("web.back");
    $("choices").setAttribute("aria-label", t("web.section.moves"));
    $("extra").setAttribute("aria-label", t("web.section.board"));
    const rules = $("rules");
    rules.textContent = t("web.rules");
    rules.href = base + "/rules?lang=" + encodeURIComponent(v.lang || document.documentElement.lang || "en");
    drawSound();
    const w = $("watch");
    w.hidden = v.you < 0;
    w.textContent = "🔗 " + t("web.watch_link");
    const rp = $("replays");
    rp.hidden = false;
    rp.textContent = t("web.replays");
    drawWatchers();
    drawTable(v);
    drawClock();
    drawChoices(v);
    drawHand(v);
    drawExtra(v);
  }

  $("back").addEventListener("click", () => send("back"));

  function drawTable(v) {
    const tbl = $("table");
    tbl.hidden = false;
    tbl.setAttribute("aria-label", t("web.section.table"));
    for (const s of tbl.querySelectorAll(".seat")) s.replaceChildren();
    const g = v.game;
    const calls = (g && g.calls) || [];
    v.seats.forEach((s, i) => {
      const box = tbl.querySelector('.seat[data-pos="' + pos(v, i) + '"]');
      box.dataset.seat = String(i);
      box.classList.toggle("to-move", !!s.to_move && !busy());
      box.classList.toggle("you", i === v.you);
      const name = el("span", "name", s.name);
      name.title = s.name;
      box.append(name);
      const tags = [];
      if (i === v.you) tags.push(t("web.you"));
      else if (v.you >= 0 && i === (v.you + 2) % 4) tags.push(t("web.partner"));
      if (s.away) tags.push(t("seat.away"));
      if (tags.length) box.append(el("span", "tag", tags.join(" ")));
      const meta = [t("pic.Team" + s.team)];
      if (s.dealer) meta.push(t("web.dealer"));
      if (g && v.status === "playing") meta.push(s.cards + " " + t(singular(s.cards) ? "pic.CardsOne" : "pic.Cards"));
      box.append(el("span", "meta", meta.join(" · ")));
      calls.filter((c) => c.seat === i).forEach((c) => box.append(el("span", "call", "📣 " + c.title)));
    });
    drawFelt(v, -1);
  }

  // drawFelt draws the trick the felt shows: the page's own (felt) while it tells the game, else
  // the view's trick in play. The card of seat travels there from the seat.
  function drawFelt(v, travel) {
    const tbl = $("table");
    const g = v.game;
    const shown = felt || (g && g.phase === "play" && g.trick.plays && g.trick.plays.length ? { plays: g.trick.plays, winner: -1, won: "", held: false } : null);
    const winner = shown && shown.winner >= 0 ? shown.winner : -1;
    for (const box of tbl.querySelectorAll(".seat")) box.classList.toggle("won", Number(box.dataset.seat) === winner);
    const trick = $("trick");
    trick.replaceChildren();
    trick.classList.toggle("held", !!(shown && shown.held));
    trick.setAttribute("aria-label", t("pic.Trick"));
    const words = [];
    ((shown && shown.plays) || []).forEach((p, n) => {
      const c = cardEl(p.card);
      c.dataset.pos = String(pos(v, p.seat));
      c.dataset.trickCard = p.card.card;
      if (p.seat === winner) c.classList.add("winner");
      const order = el("span", "order", String(n + 1));
      order.setAttribute("aria-hidden", "true");
      c.append(order);
      c.setAttribute("aria-label", label(v.seats[p.seat].name, cardName(p.card)));
      trick.append(c);
      words.push(label(v.seats[p.seat].name, cardName(p.card)));
      if (p.seat === travel) fly(c, tbl.querySelector('.seat[data-seat="' + p.seat + '"]'));
    });
    if (shown && shown.won) words.push(shown.won);
    if (words.length) trick.setAttribute("aria-label", label(t("pic.Trick"), words.join(", ")));
  }

  // fly moves a card from where its player sits to its place on the felt (compositor-only
  // transform and opacity, so a slow phone drops no frames); none with reduced motion.
  function fly(card, from) {
    if (reducedMotion.matches || !from || !card.animate || document.hidden) return;
    if (from.classList.contains("you")) from = $("hand");
    const a = from.getBoundingClientRect(), b = card.getBoundingClientRect();
    const dx = a.x + a.width / 2 - (b.x + b.width / 2), dy = a.y + a.height / 2 - (b.y + b.height / 2);
    card.animate([{ transform: "translate(" + dx + "px," + dy + "px) scale(.8)", opacity: 0.4 }, { transform: "none", opacity: 1 }],
      { duration: PACE.travel, easing: "cubic-bezier(.2,.7,.3,1)" });
  }

  // gather moves the finished trick to its winner's side.
  function gather(v, winner, ms) {
    const to = $("table").querySelector('.seat[data-seat="' + winner + '"]');
    if (!ms || !to) return;
    const a = to.getBoundingClientRect();
    for (const c of $("trick").querySelectorAll(".card")) {
      const b = c.getBoundingClientRect();
      const dx = a.x + a.width / 2 - (b.x + b.width / 2), dy = a.y + a.height / 2 - (b.y + b.height / 2);
      c.animate([{ transform: "none", opacity: 1 }, { transform: "translate(" + dx + "px," + dy + "px) scale(.5)", opacity: 0 }],
        { duration: ms, easing: "ease-in", fill: "forwards" });
    }
  }

  // bubble shows an event at a seat for a moment: trump named, a call.
  function bubble(v, seat, text) {
    const box = $("table").querySelector('.seat[data-seat="' + seat + '"]');
    if (!box) return;
    const b = el("span", "bubble", text);
    b.setAttribute("aria-hidden", "true");
    box.append(b);
    setTimeout(() => b.remove(), PACE.event * 2);
  }

  $("trick").addEventListener("click", release);
  // Space in the hand never scrolls the page, also while no card there takes it (the page is
  // still telling the trick) and the focus is on the hand itself.
  for (const type of ["keydown", "keypress"]) {
    $("hand").addEventListener(type, (ev) => { if (ev.key === " ") ev.preventDefault(); });
  }

  // The turn's clock: counted down on the page from the view's time left.
  let clockEnds = 0, clockTimer = 0;
  function drawClock() {
    const c = view && view.clock;
    const box = $("clock");
    clearTimeout(clockTimer);
    if (!c) { box.hidden = true; clockEnds = 0; return; }
    if (!clockEnds || box.dataset.seq !== String(view.seq)) {
      clockEnds = Date.now() + c.left_ms;
      box.dataset.seq = String(view.seq);
    }
    const left = Math.max(0, clockEnds - Date.now());
    const secs = Math.ceil(left / 1000);
    const time = Math.floor(secs / 60) + ":" + String(secs % 60).padStart(2, "0");
    box.hidden = false;
    box.dataset.left = String(secs);
    box.textContent = c.seat === view.you ? fmt(t("web.clock_mine"), time) : fmt(t("web.clock"), view.seats[c.seat].name, time);
    box.classList.toggle("urgent", !!c.reminded || left < 15000);
    if (left > 0) clockTimer = setTimeout(drawClock, (left % 1000) || 1000);
  }

  function drawChoices(v) {
    const box = $("choices");
    box.replaceChildren();
    if (v.trumps && v.trumps.length) box.append(el("span", "label", t("web.choose_trump.label")));
    (v.trumps || []).forEach((c) => box.append(button(c.label, () => send("trump", c.arg), "trump")));
    if (v.calls && v.calls.length) box.append(el("span", "label", t("web.calls.label")));
    (v.calls || []).forEach((c) => box.append(button("📣 " + c.label, () => send("announce", c.arg), "call")));
    if (v.can_deal) box.append(button(t("btn.deal"), () => send("deal"), "deal"));
    if (v.can_join) box.append(button(t("btn.join"), () => send("join"), "join"));
    if (v.can_rematch) {
      box.append(button(t("btn.rematch"), () => send("rematch", "same"), "rematch"));
      box.append(button(t("btn.rotate"), () => send("rematch", "rotate"), "rotate"));
    }
  }

  // drawWaiting is the newest view while the page still tells what came before it: the hand as
  // it is now, taking no tap, and the moves offered before disabled.
  function drawWaiting(v) {
    for (const b of $("choices").querySelectorAll("button")) b.disabled = true; // kept in place: nothing moves under the finger
    drawHand(v);
  }

  function drawHand(v) {
    const hand = $("hand");
    // The focus stays on the hand after a move: on the card it was on, or the hand's first
    // legal card, or the hand itself.
    const focused = hand.contains(document.activeElement) ? [...hand.children].indexOf(document.activeElement) : -2;
    hand.replaceChildren();
    const g = v.game;
    const live = !busy(); // while the page tells what happened, no card takes a tap
    const mine = !!g && g.to_move === v.you && live;
    hand.classList.toggle("waiting", !mine);
    // While trump is named the three cards are there to look at: none is dimmed.
    hand.classList.toggle("choosing", !!g && g.phase === "trump");
    hand.setAttribute("aria-label", t("web.your_cards"));
    (v.hand || []).forEach((c, i) => {
      // A button named by its words, said in its content (a hidden line) rather than a label,
      // so that the name holds what the card shows; the face is drawn for the eyes alone.
      const e = cardEl(c, "div");
      e.setAttribute("role", "button");
      e.removeAttribute("aria-label");
      e.append(el("span", "sr-only", cardName(c) + (c.trump ? ", " + t("pic.Trump") : "")));
      if (i > 0 && c.trump !== v.hand[i - 1].trump) e.classList.add("group");
      if (c.legal && live) {
        e.classList.add("legal");
        e.tabIndex = 0;
        e.addEventListener("click", () => send("play", c.card));
      } else {
        e.setAttribute("aria-disabled", "true");
        e.tabIndex = -1;
      }
      e.addEventListener("keydown", (ev) => {
        if (ev.key !== "Enter" && ev.key !== " ") return;
        ev.preventDefault(); // Space would scroll the page
        if (c.legal && live) send("play", c.card);
      });
      hand.append(e);
    });
    if (focused >= -1) {
      const cards = [...hand.children];
      const next = cards[focused] && cards[focused].tabIndex === 0 ? cards[focused] : cards.find((c) => c.tabIndex === 0);
      (next || hand).focus({ preventScroll: true });
    }
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
    const f = finished(v);
    if (f) {
      last.append(el("strong", "", t("web.last_trick")));
      const row = el("div", "plays");
      f.trick.plays.forEach((p) => {
        const fig = el("span", "play" + (p.seat === f.trick.winner ? " winner" : ""));
        fig.append(cardEl(p.card), el("span", "who", v.seats[p.seat].name));
        row.append(fig);
      });
      last.append(row);
      if (f.trick.won) last.append(el("div", "", f.trick.won));
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
      p.append(el("span", "", fmt(t("web.teams"), team, b.teams[i]) + " "), el("span", "stripes", tally(b.open[i])),
        el("span", "", " " + b.open[i] + " " + t("pic.Open")));
      board.append(p);
    });
    if (!b.games || !b.games.length) {
      board.append(el("p", "", t("pic.NoGames")));
      return;
    }
    if (sheet) {
      // The score sheet as the chats draw it; its alt text says it all for a screen reader.
      const img = el("img", "sheet");
      img.src = sheet.png;
      img.alt = sheet.text;
      board.append(img);
      if (b.winner) board.append(el("p", "", label(t("pic.Winner"), t("pic.Team" + b.winner))));
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
    telegramEvent("web_app_ready");
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
