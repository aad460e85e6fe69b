/* durak-ref replay viewer: draws the frames in #replay-data (computed by durak-ref). */
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const app = document.getElementById("app");
  app.textContent = data.replays.length + " game(s)";
})();
