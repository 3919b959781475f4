// The connection settings under the bar: headers, a bearer token and OAuth sign-in for a URL;
// arguments and environment variables for a command; the per-request timeout for any target.

import { h } from "./dom.js";
import { logEvent } from "./logs.js";
import { $ } from "./state.js";

/** What the backend's connect needs besides the target, for a target of *kind*. */
export function connectOptions(kind) {
  if (kind === "url") return { headers: $("opt-headers").value, bearer: $("opt-bearer").value, oauth: $("opt-oauth").checked };
  return { env: $("opt-env").value, args: kind === "command" ? $("opt-args").value : "" };
}

/** Show the settings that apply to *kind*. */
export function showSettings(kind) {
  $("settings").dataset.kind = kind;
  for (const el of document.querySelectorAll("#settings [data-for]")) el.hidden = !el.dataset.for.split(" ").includes(kind);
}

/** A `signin` event: the authorization server's page, to open in a new tab. */
export function signin(event) {
  const box = $("signin");
  box.replaceChildren(
    h("span", {}, "The server wants you to sign in: "),
    h("a", { id: "signin-link", href: event.url, target: "_blank", rel: "noopener" }, "open the sign-in page"),
    h("span", { class: "hint" }, " (it comes back here when you are done)"));
  box.hidden = false;
  logEvent("status", "signing in: waiting for the authorization server", { url: event.url });
}

export function signinDone() {
  $("signin").hidden = true;
}

export function setupSettings() {
  $("target-kind").addEventListener("change", () => showSettings($("target-kind").value));
  showSettings($("target-kind").value);
}
