// Controls and bidi overrides are shown escaped (\u202e), as the terminal shows them, so an eval
// id, a reply or a comment cannot display reversed or hidden. The character ranges and named
// escapes come from the page's data (reports/_safe.py); the report and the review page both
// start with this file, so the two pages escape alike.
function niceevalEscaper(safe) {
  "use strict";
  var unsafe = new RegExp("[" + safe.ranges.map(function (r) {
    return "\\u{" + r[0].toString(16) + "}-\\u{" + r[1].toString(16) + "}";
  }).join("") + "]", "gu");
  function hex(code, width) { return ("0000000" + code.toString(16)).slice(-width); }
  return function escaped(text) {
    return String(text).replace(unsafe, function (ch) {
      var code = ch.codePointAt(0);
      return safe.named[ch] || (code <= 0xff ? "\\x" + hex(code, 2) :
        code <= 0xffff ? "\\u" + hex(code, 4) : "\\U" + hex(code, 8));
    });
  };
}
