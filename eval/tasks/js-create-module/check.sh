# Solved when clamp works on values below, inside and above the range.
node -e '
const { clamp } = require("./src/clamp.js");
const cases = [[5, 0, 10, 5], [-3, 0, 10, 0], [42, 0, 10, 10], [0.5, 0, 1, 0.5]];
for (const [v, lo, hi, want] of cases) {
  if (clamp(v, lo, hi) !== want) { console.error(`clamp(${v}, ${lo}, ${hi}) = ${clamp(v, lo, hi)}`); process.exit(1); }
}'
