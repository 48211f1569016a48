// The console page: GET /state once a second, rendered as text (textContent only: never markup,
// since subjects and bodies are whatever a sender wrote). No reload: the page updates in place.
"use strict";

function statuses(list) {
  if (!list.length) return "-";
  return list.map((s) => (s === null ? "timeout" : String(s))).join(", ");
}

// The ways a person opened stay open: the table is rebuilt every second.
const opened = new Set();

function wayDetails(way) {
  const details = element("details", null, "way");
  details.open = opened.has(way.notification_id);
  details.addEventListener("toggle", () => {
    if (details.open) opened.add(way.notification_id);
    else opened.delete(way.notification_id);
  });
  details.append(element("summary", way.timeline.length + " steps"));
  if (way.message) {
    const message = way.message;
    details.append(
      element("div", "from " + message.from + ": " + message.subject, "message-of-way"),
      element("div", message.first_line, "first-line"),
    );
  }
  const steps = element("ol", null, "timeline");
  for (const step of way.timeline) {
    const item = element("li");
    item.append(element("span", step.at, "at"), element("span", " " + step.what));
    steps.append(item);
  }
  details.append(steps);
  if (way.agent_failure) {
    const failure = way.agent_failure;
    details.append(
      element("div", "the agent raised " + failure.detail + (failure.where ? " at " + failure.where : ""), "raised"),
    );
    if (failure.code) details.append(element("div", failure.code, "code"));
    details.append(element("pre", failure.traceback, "traceback"));
  }
  if (way.outcome.command) details.append(element("div", "redrive: " + way.outcome.command, "command"));
  return details;
}

function renderNotifications(ways) {
  const rows = ways.map((way) => {
    const row = element("tr");
    row.dataset.notification = way.notification_id;
    row.append(
      element("td", way.notification_id, "id"),
      element("td", way.type || "-"),
      element("td", way.message_id || "-", "id"),
      element("td", statuses(way.deliveries) + (way.forged ? " (forged signature)" : "")),
      element("td", way.queued),
      element("td", way.duplicates_absorbed),
      element("td", way.lease),
      element("td", way.deferred.length ? way.deferred.join(", ") : "-"),
      element("td", way.agent),
      element("td", way.outcome.text, "outcome-" + way.outcome.kind),
    );
    const cell = element("td");
    cell.append(wayDetails(way));
    row.append(cell);
    for (const id of row.querySelectorAll("td.id")) id.title = id.textContent;
    return row;
  });
  document.getElementById("notifications").replaceChildren(...rows);
}

function renderThreads(threads) {
  const boxes = threads.map((thread) => {
    const box = element("div", null, "thread");
    box.dataset.thread = thread.thread_id;
    box.append(element("h3", "thread " + thread.thread_id));
    for (const message of thread.messages) {
      const item = element("div", null, "message " + message.role);
      item.dataset.message = message.id;
      const head = element("div", null, "head");
      head.append(
        element("span", message.role + "  " + message.from + " → " + message.to + "  "),
        element("span", message.subject, "subject"),
      );
      item.append(head, element("div", message.body, "body"));
      for (const file of message.attachments || []) item.append(element("div", "+ " + file, "dim"));
      box.append(item);
    }
    return box;
  });
  if (!boxes.length) boxes.push(element("p", "no mail yet: make mail puts a message in", "dim"));
  document.getElementById("threads").replaceChildren(...boxes);
}

function renderInvariants(rows) {
  const items = rows.map((row) => {
    const item = element("li", null, row.status.replace(" ", "-"));
    item.dataset.invariant = row.number;
    item.append(element("span", row.number + ". " + row.text + ": " + row.status));
    for (const line of row.detail) item.append(element("div", line, "dim"));
    return item;
  });
  document.getElementById("invariants").replaceChildren(...items);
}

function withReasons(count, reasons) {
  return reasons ? count + " (" + reasons + ")" : String(count);
}

function renderGrants(rows) {
  const lines = (rows || []).map((grant) => {
    const row = element("tr", null, "grant-" + grant.state.replace(" ", "-"));
    row.dataset.grant = grant.grant_id;
    row.append(
      element("td", grant.grant_id, "id"),
      element("td", grant.address || "-"),
      element("td", grant.mode),
      element("td", grant.state),
      element("td", grant.received),
      element("td", grant.replied),
      element("td", grant.handed_off),
      element("td", withReasons(grant.skipped, grant.skip_reasons)),
      element("td", withReasons(grant.deferred, grant.deferred_reasons)),
    );
    return row;
  });
  document.getElementById("grants").replaceChildren(...lines);
}

function render(state) {
  const about = state.about;
  document.getElementById("about").textContent =
    "agent " + about.agent + ", reply mode " + about.reply_mode + ", agent address " + about.agents;
  const queue = state.queue;
  document.getElementById("status").textContent =
    "queue: " + queue.visible + " waiting, " + queue.in_flight + " in flight, " + queue.dead_lettered +
    " dead-lettered; updated " + new Date().toLocaleTimeString();
  renderGrants(state.grants);
  renderNotifications(state.notifications);
  renderThreads(state.threads);
  renderInvariants(state.invariants);
  document.getElementById("shadow").textContent = state.shadow.summary;
}

async function refresh() {
  try {
    const answer = await fetch("/state", { cache: "no-store" });
    if (!answer.ok) throw new Error("GET /state answered " + answer.status);
    render(await answer.json());
  } catch (error) {
    document.getElementById("status").textContent = "make serve does not answer (" + error.message + ")";
  } finally {
    setTimeout(refresh, 1000);
  }
}

refresh();
