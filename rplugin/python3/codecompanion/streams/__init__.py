"""Provider bodies read as events: framing, lines, decoding, and whether an answer was whole."""
