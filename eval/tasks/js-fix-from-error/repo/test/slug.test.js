const assert = require("node:assert");
const { slugify } = require("../src/slug.js");

assert.strictEqual(slugify("Hello World"), "hello-world");
assert.strictEqual(slugify("Hello, World"), "hello-world");
assert.strictEqual(slugify("  Trim me  "), "trim-me");
console.log("ok");
