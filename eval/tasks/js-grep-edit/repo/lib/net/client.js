const REQUEST_TIMEOUT_MS = 3000;
const RETRIES = 2;

async function fetchJson(url) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
  try {
    const response = await fetch(url, { signal: controller.signal });
    return await response.json();
  } finally {
    clearTimeout(timer);
  }
}

module.exports = { fetchJson, REQUEST_TIMEOUT_MS, RETRIES };
