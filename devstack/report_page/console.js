// The report console: GET /state once, rendered as text only (textContent: a report holds what
// senders and agents wrote, never markup for this page).
"use strict";

function skipped(counts) {
  const parts = Object.entries(counts).map(([reason, n]) => reason + " " + n);
  return parts.length ? parts.join(", ") : "-";
}

function renderTotals(reports) {
  const rows = reports.map((report) => {
    const row = element("tr");
    const t = report.totals;
    row.append(
      element("td", report.name, "id"),
      element("td", report.agent || "-"),
      element("td", report.threads ?? "-"),
      element("td", t.replies),
      element("td", t.answered),
      element("td", t.declined),
      element("td", t.handed_off),
      element("td", t.rejected),
      element("td", t.answered_by_person_too),
      element("td", skipped(t.skipped)),
    );
    return row;
  });
  document.getElementById("totals").replaceChildren(...rows);
}

function rate(r) {
  if (r.value === null) return "- (0 decisions)";
  const pct = (x) => (x * 100).toFixed(1) + "%";
  return pct(r.value) + "  " + r.count + "/" + r.total + "  [" + pct(r.low) + ", " + pct(r.high) + "]";
}

function renderScores(reports) {
  const rows = reports.map((report) => {
    const row = element("tr");
    row.dataset.report = report.name;
    row.append(element("td", report.name, "id"));
    for (const r of report.score.rates) row.append(element("td", rate(r)));
    const close = report.score.closeness_mean;
    const unjudged = close === null || close === undefined;
    row.append(element("td", unjudged ? "-" : close.toFixed(3) + " (" + report.score.judge + ")"));
    return row;
  });
  document.getElementById("scores").replaceChildren(...rows);
}

function decision(d) {
  const cell = element("td");
  if (!d) {
    cell.append(element("span", "no record", "dim"));
    return cell;
  }
  cell.append(element("div", d.outcome + (d.reason ? ": " + d.reason : ""), "outcome-" + d.outcome));
  if (d.text) cell.append(element("div", d.text, "body"));
  return cell;
}

function renderMessages(state) {
  const head = element("tr");
  head.append(element("th", "message"), element("th", "thread"), element("th", "the customer wrote"));
  for (const report of state.reports) head.append(element("th", report.name));
  head.append(element("th", "what changed"), element("th", "a person's answer"));
  document.getElementById("messages-head").replaceChildren(head);
  const onlyDiffer = document.getElementById("only-differ").checked;
  const rows = state.messages
    .filter((m) => !onlyDiffer || m.changed.length > 0)
    .map((m) => {
      const row = element("tr", null, m.differs ? "differs" : m.changed.length ? "changed" : "");
      row.dataset.message = m.message_id;
      row.append(
        element("td", m.message_id, "id"),
        element("td", m.thread_id, "id"),
        element("td", m.customer_text || "-", "body"),
      );
      for (const d of m.decisions) row.append(decision(d));
      row.append(element("td", m.changed.join(", ") || "-", "changes"));
      row.append(element("td", m.person_text || "-", "body"));
      return row;
    });
  document.getElementById("messages").replaceChildren(...rows);
}

async function load() {
  const answer = await fetch("/state", { cache: "no-store" });
  const state = await answer.json();
  const differ = state.messages.filter((m) => m.differs).length;
  const changed = state.messages.filter((m) => m.changed.length > 0).length;
  document.getElementById("about").textContent =
    state.reports.length + " report(s), " + state.messages.length + " message(s), " + differ +
    " decided differently, " + changed + " changed in decision, reason or text";
  renderTotals(state.reports);
  renderScores(state.reports);
  renderMessages(state);
  document.getElementById("only-differ").onchange = () => renderMessages(state);
}

load();
