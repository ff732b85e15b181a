"""Readable terminal rendering of a recall."""

from __future__ import annotations

import textwrap

from cogmem_pg.client import Recall


def render_recall(result: Recall, budget: int, width: int = 100) -> str:
    if not result.items:
        return "(nothing to recall)"
    lines = [f"recall {result.recall_id}: {result.tokens} of {budget} tokens"]
    current = None
    for item in result.items:
        if item.layer != current:
            current = item.layer
            layer_tokens = sum(i.tokens for i in result.layer(current))
            lines.append(f"\n[{current}] {layer_tokens} tokens")
        ident = f"rule {item.rule_id}" if item.rule_id is not None else f"memory {item.memory_id}"
        lines.append(f"  • {ident}, {item.tokens} tokens, score {item.score:.4f}")
        lines.extend(textwrap.wrap(item.content, width, initial_indent="      ", subsequent_indent="      "))
        lines.extend(
            textwrap.wrap(f"why: {item.reason}", width, initial_indent="      ", subsequent_indent="           ")
        )
    return "\n".join(lines)
