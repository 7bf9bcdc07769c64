# Solved when the test passes unchanged.
git diff --quiet -- test || { echo "the test was changed"; exit 1; }
node test/slug.test.js
