import { strictEqual } from "node:assert/strict";
import { normalizeLexical } from "./paths.ts";

Deno.test("normalizeLexical behaves like cd + pwd without resolving links", () => {
  strictEqual(normalizeLexical("lnk/repo/..", "/a"), "/a/lnk");
  strictEqual(normalizeLexical("/a//b/./c/", "/x"), "/a/b/c");
  strictEqual(normalizeLexical("../..", "/a"), "/");
  strictEqual(normalizeLexical(".", "/a/b"), "/a/b");
  strictEqual(normalizeLexical("/a/lnk/x/", "/"), "/a/lnk/x");
});
