# Solved when the tests pass and were not changed.
git diff --quiet -- test_textstats.py || { echo "the tests were changed"; exit 1; }
python3 -m unittest -q 2>&1
