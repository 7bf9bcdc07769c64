"""Small statistics about a text."""


def word_count(text: str) -> int:
    """How many words `text` holds (separated by any whitespace)."""
    return len(text.split(" "))


def longest_word(text: str) -> str:
    """The longest word of `text` (the first one on a tie)."""
    return max(text.split(), key=len, default="")
