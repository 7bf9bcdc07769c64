# Solved when the client's timeout is 10000 and nothing else changed.
node -e 'const c = require("./lib/net/client.js"); if (c.REQUEST_TIMEOUT_MS !== 10000 || c.RETRIES !== 2) { console.error(c); process.exit(1); }'
