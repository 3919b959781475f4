// RFC 6570 URI templates, as far as resource templates use them (levels 1 to 3, no prefixes).

const OPERATORS = {
  "": { first: "", sep: ",", named: false, reserved: false },
  "+": { first: "", sep: ",", named: false, reserved: true },
  "#": { first: "#", sep: ",", named: false, reserved: true },
  ".": { first: ".", sep: ".", named: false, reserved: false },
  "/": { first: "/", sep: "/", named: false, reserved: false },
  ";": { first: ";", sep: ";", named: true, reserved: false },
  "?": { first: "?", sep: "&", named: true, reserved: false },
  "&": { first: "&", sep: "&", named: true, reserved: false },
};
const EXPRESSION = /\{([+#./;?&]?)([^}]*)\}/g;

function names(list) {
  return list.split(",").map((v) => v.replace(/\*$/, "").replace(/:\d+$/, "").trim()).filter(Boolean);
}

/** The variable names of *template*, in order, each once. */
export function variables(template) {
  const found = [];
  for (const match of template.matchAll(EXPRESSION)) for (const name of names(match[2])) if (!found.includes(name)) found.push(name);
  return found;
}

/** *template* with *values* filled in (missing ones are left out). */
export function expand(template, values) {
  return template.replace(EXPRESSION, (_, op, list) => {
    const rule = OPERATORS[op];
    const encode = (v) => (rule.reserved ? encodeURI(v) : encodeURIComponent(v));
    const parts = names(list).filter((n) => values[n] !== undefined && values[n] !== "").map((n) => (rule.named ? `${n}=${encode(values[n])}` : encode(values[n])));
    return parts.length ? rule.first + parts.join(rule.sep) : "";
  });
}
