"use strict";
// okstra report view: reader mode, and "Export user response", which writes the §5 rows with
// the user's inputs as a Markdown table that okstra's §5 reader reads back exactly. The cell
// encoder mirrors okstra_git/core/mdtable.py's encode_cell; the tests compare the two on many
// values.
(function () {
  // Python's str.strip() whitespace, so a cell is trimmed as okstra trims it when reading.
  var SPACE = "[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
  var OUTER_SPACE = new RegExp("^" + SPACE + "+|" + SPACE + "+$", "g");
  var LEADING_SPACE = new RegExp("^" + SPACE + "+");
  var BREAK = new RegExp("\\r\\n|\\r|\\n|<br" + SPACE + "*/?>", "gi");
  var ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "\\\\", "|": "\\|" };
  var PLAIN = /^[A-Za-z0-9._:\/#+-]+$/;

  function strip(text) { return text.replace(OUTER_SPACE, ""); }

  function unwrapCode(cell) {
    var text = strip(cell);
    if (text.charAt(0) === "`") {
      var run = text.length - text.replace(/^`+/, "").length;
      var fence = new Array(run + 1).join("`");
      var inner = text.slice(run);
      var body = inner.slice(0, inner.length - run);
      if (inner.length > run && inner.slice(-run) === fence && body.slice(-1) !== "`") {
        if (body.indexOf(fence) < 0) { return strip(body); }
      }
    }
    return text;
  }

  // A code span's content back as written but for its escaped pipes (see _as_written_in_code).
  var AS_WRITTEN = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "\\\\": "\\" };
  function asWrittenInCode(content) {
    return content.replace(/&amp;|&lt;|&gt;|\\\\/g, function (m) { return AS_WRITTEN[m]; });
  }

  // Backtick runs that close no code span inside the text become &#96;, and each code span's
  // content goes through inCode (see _code_spans).
  function inertUnpairedBackticks(text, inCode) {
    if (text.indexOf("`") < 0) { return text; }
    var runs = {};
    var re = /`+/g, m;
    while ((m = re.exec(text)) !== null) { (runs[m[0].length] = runs[m[0].length] || []).push(m.index); }
    function closing(length, after) {
      var starts = runs[length] || [];
      for (var i = 0; i < starts.length; i++) { if (starts[i] >= after) { return starts[i]; } }
      return null;
    }
    var token = /\\[\s\S]|`+/g, out = "", pos = 0, done = 0;
    while ((m = token.exec(text)) !== null) {
      var start = m.index, end = start + m[0].length;
      if (start < done) { continue; }
      done = end;
      if (m[0].charAt(0) === "\\") { continue; }
      var close = closing(m[0].length, end);
      if (close === null) {
        out += text.slice(pos, start) + new Array(m[0].length + 1).join("&#96;");
        pos = end;
      } else {
        done = close + m[0].length;
        if (inCode) {
          out += text.slice(pos, end) + inCode(text.slice(end, close));
          pos = close;
        }
      }
    }
    return out + text.slice(pos);
  }

  function encodeCell(value, code) {
    value = String(value);
    if (code && PLAIN.test(value)) { return "`" + value + "`"; }
    var parts = value.split(BREAK).map(function (p) {
      return p.replace(/[&<>\\|]/g, function (ch) { return ESCAPES[ch]; });
    });
    var text = strip(parts.join("<br>"));
    if (unwrapCode(text) !== text) {
      // Its opening backtick (in the first line: text starts with it) written inert.
      var at = parts[0].length - parts[0].replace(LEADING_SPACE, "").length;
      parts[0] = parts[0].slice(0, at) + "&#96;" + parts[0].slice(at + 1);
    }
    // Each line on its own: a code span never runs across a <br> (see encode_cell).
    return strip(parts.map(function (p) { return inertUnpairedBackticks(p, asWrittenInCode); }).join("<br>"));
  }

  var COLUMNS = ["ID", "Ticket ID", "Kind", "Statement", "Expected form", "Blocks", "Status", "User input"];

  function responseMarkdown(doc) {
    var body = doc.body;
    var rows = doc.querySelectorAll("tr[data-c5]");
    var lines = [
      "# User response — " + body.dataset.type + " " + body.dataset.seq,
      "",
      "- Task: " + encodeCell(body.dataset.key),
      "- Report: final-report-" + body.dataset.type + "-" + body.dataset.seq + ".md",
      "- Exported: " + new Date().toISOString(),
      "",
      "## 5. Clarification Items",
      "",
      "| " + COLUMNS.join(" | ") + " |",
      "|" + COLUMNS.map(function () { return "---|"; }).join(""),
    ];
    Array.prototype.forEach.call(rows, function (row) {
      var d = row.dataset;
      var input = row.querySelector("textarea").value;
      var status = d.status;
      if (strip(input) && status === "open") { status = "answered"; }
      if (!strip(input) && status === "answered") { status = "open"; }
      var cells = [
        encodeCell(d.id, true), encodeCell(d.ticket, true), encodeCell(d.kind, true),
        encodeCell(d.statement), encodeCell(d.expected), encodeCell(d.blocks, true),
        encodeCell(status, true), encodeCell(input),
      ];
      lines.push("| " + cells.join(" | ") + " |");
    });
    return lines.join("\n") + "\n";
  }

  function download(name, text) {
    var url = URL.createObjectURL(new Blob([text], { type: "text/markdown;charset=utf-8" }));
    var link = document.createElement("a");
    link.href = url;
    link.download = name;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 0);
  }

  window.okstraReport = { encodeCell: encodeCell, responseMarkdown: responseMarkdown };

  document.addEventListener("DOMContentLoaded", function () {
    var toggle = document.getElementById("reader-toggle");
    toggle.addEventListener("click", function () {
      var on = document.body.classList.toggle("reader");
      toggle.setAttribute("aria-pressed", on ? "true" : "false");
    });
    var exporter = document.getElementById("export-response");
    if (exporter) {
      exporter.addEventListener("click", function () {
        var b = document.body.dataset;
        download("user-response-" + b.type + "-" + b.seq + ".md", responseMarkdown(document));
      });
    }
  });
})();
