import assert from "node:assert/strict";
import { calledFunctions, eagerCompile, type FunctionRange } from "./_eager.ts";

/** The range of the function whose text starts with `head` (the `n`th occurrence) and ends at `tail`. */
function rangeOf(source: string, head: string, tail: string, n = 0): FunctionRange {
  let start = -1;
  for (let k = 0; k <= n; k++) start = source.indexOf(head, start + 1);
  assert.ok(start >= 0, `no ${head}`);
  const end = source.indexOf(tail, start) + tail.length;
  return { start, end };
}

/** Run a module's text and return what it exported as `out`. */
async function evaluate(source: string): Promise<unknown> {
  const url = `data:text/javascript;base64,${btoa(source)}`;
  return (await import(url)).out;
}

const SOURCE = [
  "#!/usr/bin/env -S deno run",
  'const s="function f(){}";',
  "const t=`${s}{`;",
  'const r=/[{"]/g;',
  "function top(a){return a+1}",
  "const arrow=(x,y=2)=>x*y;",
  "const fx=function(){return 7};",
  "const named=function inner(){return typeof inner};",
  "const o={m(){return 1},get g(){return 2}};",
  "function outer(){function nested(){return 3}return nested()}",
  "{function blocky(){return 4}globalThis.__b=blocky}",
  "export const out=[top(1),arrow(3),fx(),named(),o.m(),o.g,outer(),globalThis.__b(),t,r.source];",
].join("\n");

Deno.test("eagerCompile: wraps expressions and arrows, hoists top-level declarations, leaves the rest", async () => {
  const called = [
    rangeOf(SOURCE, "function top", "}"),
    rangeOf(SOURCE, "(x,y=2)=>", "x*y"),
    rangeOf(SOURCE, "function(){return 7", "}"),
    rangeOf(SOURCE, "function inner", "}"),
    rangeOf(SOURCE, "m(){", "}"),
    rangeOf(SOURCE, "g(){", "}"),
    rangeOf(SOURCE, "function outer", "nested()}"),
    rangeOf(SOURCE, "function nested", "}"),
    rangeOf(SOURCE, "function blocky", "}"),
  ];
  const r = eagerCompile(SOURCE, called);
  assert.deepEqual([r.wrapped, r.hoisted, r.left], [3, 2, 4]);
  const lines = r.source.split("\n");
  assert.equal(lines[0], "#!/usr/bin/env -S deno run");
  assert.equal(
    lines[1],
    "var top=(function(a){return a+1});" +
      "var outer=(function(){function nested(){return 3}return nested()});",
  );
  assert.ok(r.source.includes("const arrow=((x,y=2)=>x*y);"));
  assert.ok(r.source.includes("const fx=(function(){return 7});"));
  assert.ok(r.source.includes("const named=(function inner(){return typeof inner});"));
  assert.ok(r.source.includes("const o={m(){return 1},get g(){return 2}};"));
  assert.ok(r.source.includes("{function blocky(){return 4}"), "a block's declaration stays");
  assert.ok(r.source.includes('const s="function f(){}";'), "strings are never touched");
  // Same behaviour, shebang aside (a data: module cannot carry one).
  const body = (s: string) => s.slice(s.indexOf("\n") + 1);
  assert.deepEqual(await evaluate(body(r.source)), await evaluate(body(SOURCE)));
});

Deno.test("eagerCompile: a regular expression or template with brackets does not hide a declaration's depth", () => {
  const source = 'const a=/}/;const b=`}${"{"}`;function f(){return a}\nexport const out=f();';
  const r = eagerCompile(source, [rangeOf(source, "function f", "}")]);
  assert.equal(r.hoisted, 1);
  assert.ok(r.source.startsWith("var f=(function(){return a});\n"));
});

Deno.test("eagerCompile refuses what it cannot lex rather than guessing", () => {
  assert.throws(() => eagerCompile("const s='open;\nfunction f(){}", []), /cannot lex/);
  assert.throws(() => eagerCompile("function f(){", []), /cannot lex|unclosed/);
});

Deno.test("calledFunctions: the ranges that ran (or all listed), once each, without the script itself", () => {
  const fn = (startOffset: number, endOffset: number, count: number) => ({
    ranges: [{ startOffset, endOffset, count }],
  });
  const cov = [
    { url: "file:///x.js", functions: [fn(0, 100, 1), fn(5, 20, 2), fn(30, 40, 0)] },
    { url: "file:///x.js", functions: [fn(5, 20, 1), fn(50, 60, 1)] },
  ];
  assert.deepEqual(calledFunctions(cov, 100), [{ start: 5, end: 20 }, { start: 50, end: 60 }]);
  assert.deepEqual(calledFunctions(cov, 100, { uncalled: true }), [
    { start: 5, end: 20 },
    { start: 30, end: 40 },
    { start: 50, end: 60 },
  ]);
});
