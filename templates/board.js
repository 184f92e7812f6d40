"use strict";
// okstra board: filter the tasks by phase and holder, search them by key; a served board
// reloads itself once the server rebuilt it. Everything is in the page without this script.
(function () {
  var body = document.body;
  var form = document.getElementById("filters");
  var key = document.getElementById("f-key");
  var phase = document.getElementById("f-phase");
  var holder = document.getElementById("f-holder");
  var count = document.getElementById("f-count");
  var tasks = Array.prototype.slice.call(document.querySelectorAll("article.task"));
  var rows = Array.prototype.slice.call(document.querySelectorAll("#index tbody tr"));
  var held = Array.prototype.slice.call(document.querySelectorAll("[data-holder]"));
  var SAVED = "okstra-board-filters";

  function matches(el, words, wanted, who) {
    var text = (el.getAttribute("data-key") || "").toLowerCase();
    for (var i = 0; i < words.length; i++) {
      if (text.indexOf(words[i]) < 0) { return false; }
    }
    if (wanted && el.getAttribute("data-phase") !== wanted) { return false; }
    if (who && (" " + el.getAttribute("data-holders") + " ").indexOf(" " + who + " ") < 0) {
      return false;
    }
    return true;
  }

  function apply() {
    var words = key.value.toLowerCase().split(/\s+/).filter(Boolean);
    var wanted = phase.value, who = holder.value, shown = 0;
    tasks.forEach(function (el) {
      var ok = matches(el, words, wanted, who);
      el.hidden = !ok;
      if (ok) { shown += 1; }
    });
    rows.forEach(function (el) { el.hidden = !matches(el, words, wanted, who); });
    held.forEach(function (el) {
      el.classList.toggle("picked", who !== "" && el.getAttribute("data-holder") === who);
    });
    count.textContent = shown + " of " + tasks.length + " tasks";
    try {
      sessionStorage.setItem(SAVED, JSON.stringify([key.value, wanted, who]));
    } catch (e) { /* storage off: filters just do not survive a reload */ }
  }

  function restore() {
    var saved = null;
    try { saved = JSON.parse(sessionStorage.getItem(SAVED) || "null"); } catch (e) { saved = null; }
    if (!Array.isArray(saved) || saved.length !== 3) { return; }
    key.value = String(saved[0]);
    [[phase, saved[1]], [holder, saved[2]]].forEach(function (pair) {
      var select = pair[0], value = String(pair[1]);
      for (var i = 0; i < select.options.length; i++) {
        if (select.options[i].value === value) { select.value = value; }
      }
    });
  }

  form.hidden = false;
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  [key, phase, holder].forEach(function (el) {
    el.addEventListener("input", apply);
    el.addEventListener("change", apply);
  });
  restore();
  apply();

  var live = body.getAttribute("data-live");
  if (live) {
    var version = body.getAttribute("data-version");
    var state = document.getElementById("live");
    var poll = function () {
      fetch(live, { cache: "no-store" }).then(function (response) {
        return response.ok ? response.text() : Promise.reject(response.status);
      }).then(function (text) {
        if (text.trim() !== version) { location.reload(); return; }
        state.textContent = "served: refreshes when the records change";
        setTimeout(poll, 1000);
      }, function () {
        state.textContent = "served: the server does not answer";
        setTimeout(poll, 5000);
      });
    };
    setTimeout(poll, 1000);
  }
})();
