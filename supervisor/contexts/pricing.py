"""Model prices, in one table (USD per million tokens: input, output). Unknown model: no cost."""

from __future__ import annotations

PRICES = {
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-opus-4-5": (5.00, 25.00),
}


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    # dated ids ("claude-haiku-4-5-20251001") and "-latest" aliases price as their family
    for name, (inp, out) in sorted(PRICES.items(), key=lambda kv: -len(kv[0])):
        if model == name or model.startswith(name + "-"):
            return round(input_tokens * inp / 1e6 + output_tokens * out / 1e6, 6)
    return None
