// strata NameNode "Browse the file system": mkdir, upload and delete
// through WebHDFS as the page's user (user.name, simple authentication).
// Upload follows Hadoop's explorer: CREATE with noredirect=true on the
// NameNode, then the data to the DataNode the answer names.
(function () {
  "use strict";
  var me = document.getElementById("explorer");
  var dir = me.getAttribute("data-path");
  var user = me.getAttribute("data-user");
  var parent = me.getAttribute("data-parent");
  var msg = document.getElementById("message");

  function say(text, bad) {
    msg.textContent = text;
    msg.className = bad ? "banner bad" : "banner";
  }
  function api(p, op, extra) {
    var enc = p.split("/").map(encodeURIComponent).join("/");
    return "/webhdfs/v1" + enc + "?op=" + op + "&user.name=" + encodeURIComponent(user) + (extra || "");
  }
  function join(d, name) { return d === "/" ? "/" + name : d + "/" + name; }
  // check turns a WebHDFS answer into its JSON or an Error with the
  // RemoteException's message.
  function check(resp) {
    return resp.text().then(function (body) {
      var js = null;
      try { js = body ? JSON.parse(body) : {}; } catch (e) { js = null; }
      if (!resp.ok) {
        var m = js && js.RemoteException ? js.RemoteException.message : (body || resp.statusText);
        throw new Error(m);
      }
      return js || {};
    });
  }
  function reload(to) {
    location.href = "/explorer?path=" + encodeURIComponent(to || dir) + "&user.name=" + encodeURIComponent(user);
  }
  function fail(what) { return function (e) { say(what + ": " + e.message, true); }; }

  var mk = document.getElementById("mkdirform");
  if (mk) mk.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var name = document.getElementById("mkdirname").value.trim();
    if (!name) return;
    fetch(api(join(dir, name), "MKDIRS"), { method: "PUT" }).then(check).then(function () { reload(); }, fail("mkdir " + name));
  });

  var up = document.getElementById("uploadform");
  if (up) up.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var files = Array.prototype.slice.call(document.getElementById("uploadfile").files);
    if (!files.length) return;
    say("uploading " + files.length + " file(s)…", false);
    files.reduce(function (prev, f) {
      return prev.then(function () {
        return fetch(api(join(dir, f.name), "CREATE", "&overwrite=false&noredirect=true"), { method: "PUT" })
          .then(check)
          .then(function (js) {
            if (!js.Location) throw new Error("no Location in the NameNode's answer");
            return fetch(js.Location, { method: "PUT", body: f, headers: { "Content-Type": "application/octet-stream" } });
          })
          .then(check);
      });
    }, Promise.resolve()).then(function () { reload(); }, fail("upload"));
  });

  document.querySelectorAll("button[data-delete]").forEach(function (b) {
    b.addEventListener("click", function () {
      var p = b.getAttribute("data-delete");
      if (!window.confirm("Delete " + p + " and everything under it?")) return;
      fetch(api(p, "DELETE", "&recursive=true"), { method: "DELETE" }).then(check).then(function (js) {
        if (js.boolean === false) throw new Error("not deleted");
        reload(p === dir ? parent : dir);
      }, fail("delete " + p));
    });
  });
})();
