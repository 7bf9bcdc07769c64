const { fetchJson } = require("./net/client");

module.exports = { fetchJson };
