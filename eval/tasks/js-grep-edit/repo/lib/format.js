function formatMs(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

module.exports = { formatMs };
