# Solved when greet() says Welcome.
node -e 'const { greet } = require("./src/greet.js"); if (greet("Ada") !== "Welcome, Ada!") { console.error(greet("Ada")); process.exit(1); }'
