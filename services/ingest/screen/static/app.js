/* The screen's own behaviour, each part only where its page has the elements: a drop zone
   for uploads, previous/next sheet by keyboard, zoom and pan of a sheet (Panzoom, loading
   the full-resolution rendering once zoomed in), and the before/after slider. Every page
   reads without it. */
(function () {
  "use strict";

  function dropZone() {
    var zone = document.querySelector("[data-drop]");
    if (!zone) return;
    var input = zone.querySelector("input[type=file]");
    var hint = document.getElementById("drop-hint");
    ["dragenter", "dragover"].forEach(function (type) {
      zone.addEventListener(type, function (event) {
        event.preventDefault();
        zone.classList.add("over");
      });
    });
    ["dragleave", "drop"].forEach(function (type) {
      zone.addEventListener(type, function () { zone.classList.remove("over"); });
    });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      if (!event.dataTransfer || !event.dataTransfer.files.length) return;
      input.files = event.dataTransfer.files;
      input.dispatchEvent(new Event("change", { bubbles: true }));
    });
    input.addEventListener("change", function () {
      if (input.files.length) hint.textContent = "Ready: " + input.files[0].name;
    });
  }

  function typing(target) {
    return target.closest("input, textarea, select, button, [contenteditable]") !== null;
  }

  function sheetKeys() {
    document.addEventListener("keydown", function (event) {
      if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      if (typing(event.target) || event.target.closest("#viewer")) return;
      var link = { ArrowLeft: "previous", ArrowRight: "next" }[event.key];
      var anchor = link && document.getElementById(link);
      if (anchor) window.location.assign(anchor.href);
    });
  }

  function viewer() {
    var frame = document.getElementById("viewer");
    var image = document.getElementById("sheet-image");
    if (!frame || !image || typeof Panzoom === "undefined") return;
    var zoom = Panzoom(image, { maxScale: 16, minScale: 1, step: 0.4, cursor: "grab" });
    var level = document.getElementById("zoom-level");
    var full = false;
    frame.addEventListener("wheel", function (event) {
      event.preventDefault();
      zoom.zoomWithWheel(event);
    }, { passive: false });
    image.addEventListener("panzoomchange", function (event) {
      var scale = event.detail.scale;
      level.textContent = Math.round(scale * 100) + "%";
      if (scale > 1.5 && !full && image.dataset.full) {
        full = true;  // the large rendering, made on first request, replaces the page image
        image.src = image.dataset.full;
      }
    });
    document.querySelectorAll("[data-zoom]").forEach(function (button) {
      button.addEventListener("click", function () {
        var what = button.dataset.zoom;
        if (what === "in") zoom.zoomIn();
        else if (what === "out") zoom.zoomOut();
        else zoom.reset();
      });
    });
    frame.addEventListener("keydown", function (event) {
      var step = 40;
      var pan = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] }[event.key];
      if (event.key === "+" || event.key === "=") zoom.zoomIn();
      else if (event.key === "-") zoom.zoomOut();
      else if (event.key === "0") zoom.reset();
      else if (pan) zoom.pan(pan[0], pan[1], { relative: true });
      else return;
      event.preventDefault();
    });
  }

  function slider() {
    document.querySelectorAll("[data-split]").forEach(function (range) {
      var compare = range.parentElement.querySelector(".compare");
      range.addEventListener("input", function () {
        compare.style.setProperty("--split", range.value + "%");
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    dropZone();
    sheetKeys();
    viewer();
    slider();
  });
})();
