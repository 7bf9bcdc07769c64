import unittest

from textstats import longest_word, word_count


class TextStatsTest(unittest.TestCase):
    def test_word_count_spaces(self):
        self.assertEqual(word_count("a b c"), 3)

    def test_word_count_newlines_and_runs(self):
        self.assertEqual(word_count("one  two\nthree\tfour"), 4)

    def test_longest_word(self):
        self.assertEqual(longest_word("a bbb cc"), "bbb")


if __name__ == "__main__":
    unittest.main()
