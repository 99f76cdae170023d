#!/usr/bin/env bash
# The bash script this skill shipped with, before ctxkit: `npx deno task install-skill` replaces it.
echo "context-guard: the original bash script" >&2
exit 2
