"""Response bytes as text lines, in linear time whatever the chunking."""

from __future__ import annotations

import codecs


class LineSplitter:
    """Bytes in any split become text lines; handles CRLF, lone CR and UTF-8 cut mid-character.

    Pieces of an unfinished line are kept in a list and joined once, when the line ends, so a
    line of any length costs linear time however finely the body is chunked.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._parts: list[str] = []
        self._held_cr = False

    def feed(self, data: bytes) -> list[str]:
        """The lines completed by `data`."""
        return self._take(self._decoder.decode(data), final=False)

    def close(self) -> list[str]:
        """The last, unterminated line, if any."""
        return self._take(self._decoder.decode(b"", final=True), final=True)

    def _take(self, text: str, final: bool) -> list[str]:
        if not final and not self._held_cr and "\n" not in text and "\r" not in text:
            if text:
                self._parts.append(text)  # the line goes on: only the new piece was scanned
            return []
        if self._held_cr:
            self._parts.append("\r")
            self._held_cr = False
        self._parts.append(text)
        return self._split("".join(self._parts), final)

    def _split(self, text: str, final: bool) -> list[str]:
        if not final and text.endswith("\r"):
            text, self._held_cr = text[:-1], True  # the next chunk may start with its "\n"
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        tail = lines.pop()
        self._parts = [tail] if tail and not final else []
        if final:
            return [*lines, tail] if tail else lines
        return lines
