-- setup() options: stored here, passed to Python once when the host starts.
local M = {}

M.defaults = {
  python = nil, -- the host's interpreter; default: <plugin>/.venv/bin/python
  host = "job", -- "job" (the plugin starts its own host) or "rplugin" (classic :UpdateRemotePlugins host)
  config_file = nil, -- the Python config file; else $CODECOMPANION_CONFIG, else stdpath("config")/codecompanion.py
  adapter = nil, -- adapter name; default: from the config file, then the first API key found in the environment
  model = nil,
  log_level = "INFO",
  start = "deferred", -- "deferred": start the host right after setup(); "lazy": on first use
  window = { layout = "vertical", width = 0.45 },
  yolo = false,
  keymaps = {
    send = { n = { "<CR>", "<C-s>" }, i = "<C-s>" },
    stop = { n = { "q", "<C-c>" } },
    change_adapter = { n = "ga" },
    yolo = { n = "gty" },
    regenerate = { n = "gr" },
    clear = { n = "gx" },
    next_turn = { n = "]]" },
    previous_turn = { n = "[[" },
    full_output = { n = "gO" },
    help = { n = "?" },
  },
}

M.options = vim.deepcopy(M.defaults)

function M.setup(opts)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  -- `false` disables a keymap: keep it false rather than merging a default back in.
  for name, value in pairs((opts or {}).keymaps or {}) do
    M.options.keymaps[name] = value
  end
  return M.options
end

function M.config_file()
  if M.options.config_file then
    return vim.fn.expand(M.options.config_file)
  end
  if vim.env.CODECOMPANION_CONFIG and vim.env.CODECOMPANION_CONFIG ~= "" then
    return vim.env.CODECOMPANION_CONFIG
  end
  return vim.fs.joinpath(vim.fn.stdpath("config"), "codecompanion.py")
end

--- The values Python needs (plain data only).
function M.for_python()
  return {
    config_file = M.config_file(),
    adapter = M.options.adapter or vim.NIL,
    model = M.options.model or vim.NIL,
    yolo = M.options.yolo and true or false,
    data_dir = vim.fs.joinpath(vim.fn.stdpath("data"), "codecompanion"),
    log_path = require("codecompanion.host").log_path(),
    nvim_pid = vim.fn.getpid(),
  }
end

return M
