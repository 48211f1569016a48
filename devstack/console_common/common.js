// What both console pages share (make serve's and make report-console's), loaded before each page's
// own script. Text only: a node's text is set with textContent, never as markup, since subjects,
// bodies and replies are whatever a sender or an agent wrote.
"use strict";

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}
