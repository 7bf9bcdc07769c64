-- setup() options: stored here, passed to Python once when the host starts.
local M = {}

M.defaults = {
  python = nil, -- the host's interpreter; default: <plugin>/.venv/bin/python
  -- "job" (the plugin starts its own host) or "rplugin" (classic :UpdateRemotePlugins host)
  host = "job",
  -- the Python config file; else $CODECOMPANION_CONFIG, else stdpath("config")/codecompanion.py
  config_file = nil,
  -- adapter name; default: from the config file, then the first API key found in the environment
  adapter = nil,
  model = nil,
  log_level = "INFO",
  -- how many nice steps below Neovim the host (and the commands it runs) take on Linux, 0 to 19:
  -- on a busy machine the editor's session then wins the CPU from the host's
  host_nice = 3,
  start = "deferred", -- "deferred": start the host right after setup(); "lazy": on first use
  window = { layout = "vertical", width = 0.45 }, -- height: horizontal and float layouts
  yolo = false,
  meter = "winbar", -- the context meter: "winbar", "virtual" (text on the first line) or "off"
  -- the chat mode and the command sandbox (`:help codecompanion-permissions`); these keys win
  -- over the `permissions` table of the Python config file
  permissions = nil,
  icons = nil, -- nil: Nerd Font glyphs when vim.g.have_nerd_font, else plain; true / false
  auto_complete = true, -- open the omni menu as `@`, `#` or `/` starts a word (no cmp/blink)
  -- follow mode: a window moves to what the model reads or edits (:CodeCompanionChat Follow)
  follow = false,
  keymaps = {
    send = { n = { "<CR>", "<C-s>" }, i = "<C-s>" },
    stop = { n = { "q", "<C-c>" } },
    change_adapter = { n = "ga" },
    yolo = { n = "gty" },
    clear_approvals = { n = "gtx" },
    mode = { n = "gtm" },
    agent_mode = { n = "gM" },
    agent_options = { n = "gC" },
    regenerate = { n = "gr" },
    clear = { n = "gx" },
    rewind = { n = "gR" },
    rewind_undo = { n = "gZ" },
    review = { n = "gD" },
    next_turn = { n = "]]" },
    previous_turn = { n = "[[" },
    full_output = { n = "gO" },
    help = { n = "?" },
  },
}

M.options = vim.deepcopy(M.defaults)

M.MIN_VERSION = "0.10"

-- The type (or the values) each option takes; options not listed here are unknown.
local SCHEMA = {
  python = "string",
  host = { "job", "rplugin" },
  config_file = "string",
  adapter = "string",
  model = "string",
  log_level = { "DEBUG", "INFO", "WARNING", "ERROR" },
  host_nice = "number",
  start = { "deferred", "lazy" },
  window = "table",
  yolo = "boolean",
  meter = { "winbar", "virtual", "off" },
  permissions = "table",
  icons = "boolean",
  auto_complete = "boolean",
  follow = "boolean",
  keymaps = "table",
}
local WINDOW =
  { layout = { "vertical", "horizontal", "float", "buffer" }, width = "number", height = "number" }
-- Options of CodeCompanion.nvim that mean nothing here (named, so a copied config is understood).
local FOREIGN = {
  strategies = true,
  interactions = true,
  display = true,
  prompt_library = true,
  extensions = true,
}

local function check(value, want)
  if value == nil then
    return true
  end
  if type(want) == "table" then
    return vim.tbl_contains(want, value), "one of " .. table.concat(want, ", ")
  end
  return type(value) == want, want
end

--- Problems inside an option's value of the right type (its range, keymap names, window keys).
---@param key string
---@param value any
---@param found string[] problems found so far; this adds its own
---@return boolean keep false when the whole value must go
local function check_inside(key, value, found)
  if key == "host_nice" and (value % 1 ~= 0 or value < 0 or value > 19) then
    table.insert(found, ("host_nice: a whole number from 0 to 19 expected, got %s"):format(value))
    return false
  elseif key == "keymaps" then
    for name in pairs(value) do
      if M.defaults.keymaps[name] == nil then
        table.insert(found, ("unknown keymap %q"):format(name))
        value[name] = nil
      end
    end
  elseif key == "window" then
    for wkey, wvalue in pairs(value) do
      local wok, wwant = check(wvalue, WINDOW[wkey] or "nil")
      if not wok then
        table.insert(
          found,
          ("window.%s: %s expected, got %s"):format(wkey, wwant, vim.inspect(wvalue))
        )
        value[wkey] = nil
      end
    end
  end
  return true
end

--- The problems of `opts` as short phrases; bad values are removed so defaults apply.
local function problems(opts)
  local found, foreign = {}, {}
  for key, value in pairs(opts) do
    if FOREIGN[key] then
      table.insert(foreign, key)
      opts[key] = nil
    elseif SCHEMA[key] == nil then
      table.insert(found, ("unknown option %q"):format(key))
      opts[key] = nil
    else
      local ok, want = check(value, SCHEMA[key])
      if not ok then
        table.insert(found, ("%s: %s expected, got %s"):format(key, want, vim.inspect(value)))
        opts[key] = nil
      elseif not check_inside(key, value, found) then
        opts[key] = nil
      end
    end
  end
  if #foreign > 0 then
    table.sort(foreign)
    table.insert(
      found,
      table.concat(foreign, ", ") .. " are CodeCompanion.nvim options that mean nothing here"
    )
  end
  table.sort(found)
  return found
end

--- Neovim is recent enough (else one line says so).
---@return boolean
function M.supported()
  if vim.fn.has("nvim-" .. M.MIN_VERSION) == 1 then
    return true
  end
  local v = vim.version()
  -- Said at once with vim.notify itself: the plugin's own notices need a newer Neovim.
  vim.notify(
    ("codecompanion: Neovim %s or newer is needed (this is %d.%d.%d)"):format(
      M.MIN_VERSION,
      v.major,
      v.minor,
      v.patch
    ),
    vim.log.levels.ERROR
  )
  return false
end

--- Check `opts` (one line names what is wrong) and merge them over the defaults.
---@param opts? table
---@return table options the options in force
function M.setup(opts)
  opts = vim.deepcopy(opts or {})
  local found = type(opts) == "table" and problems(opts) or { "setup() takes a table" }
  if type(opts) ~= "table" then
    opts = {}
  end
  if #found > 0 then
    require("codecompanion.render").notify(
      "setup(): " .. table.concat(found, "; ") .. " (see :help codecompanion-setup)",
      "warn"
    )
  end
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- `false` disables a keymap: keep it false rather than merging a default back in.
  for name, value in pairs(opts.keymaps or {}) do
    M.options.keymaps[name] = value
  end
  return M.options
end

--- The Python config file: `config_file`, else $CODECOMPANION_CONFIG, else
--- stdpath("config")/codecompanion.py.
---@return string
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
---@return table
function M.for_python()
  return {
    config_file = M.config_file(),
    adapter = M.options.adapter or vim.NIL,
    model = M.options.model or vim.NIL,
    yolo = M.options.yolo and true or false,
    permissions = M.options.permissions or vim.NIL,
    data_dir = vim.fs.joinpath(vim.fn.stdpath("data"), "codecompanion"),
    config_dir = vim.fn.stdpath("config"),
    log_path = require("codecompanion.host").log_path(),
    nvim_pid = vim.fn.getpid(),
    follow = require("codecompanion.follow").enabled(),
  }
end

return M
