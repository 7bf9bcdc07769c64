-- Completion in chat buffers: `@` tools and groups, `#` variables, `/` slash commands.
-- Nothing here waits on the host: items come from a cache the host fills (at start and on
-- reload), and completion plugins get them through their callbacks.
local M = {}

---@class codecompanion.CompletionItem
---@field word string what is inserted: `@{tool}`, `#{buffer}`, `/file`
---@field kind "group"|"tool"|"variable"|"command"
---@field menu? string its description

-- Filled by the host (`set_items`); `at` is when, so a stale cache is refreshed in the background.
-- `asked`: the line the menu was last opened for as you type (see auto_open).
local cache = { items = nil, at = 0, adapters = {}, models = {}, asked = nil }

--- The `/` commands the chat's agent offers (sent to it as typed), from the buffer's variable.
---@return codecompanion.CompletionItem[]
local function agent_items()
  local commands = vim.b.codecompanion_acp_commands
  local items = {}
  for _, command in ipairs(type(commands) == "table" and commands or {}) do
    local hint = type(command.hint) == "string" and (" <" .. command.hint .. ">") or ""
    table.insert(items, {
      word = "/" .. command.name,
      kind = "command",
      menu = "agent: " .. tostring(command.description or "") .. hint,
    })
  end
  return items
end

--- Items that need no host: the variables, the slash commands and the agent's commands.
local function local_items()
  local items = vim.list_extend(
    require("codecompanion.variables").items(),
    require("codecompanion.slash").items()
  )
  return vim.list_extend(items, agent_items())
end

--- Called by the host with its `@` items and the adapter names and models (plain data).
---@param items? codecompanion.CompletionItem[]
---@param meta? { adapters?: string[], models?: table<string, string[]> }
function M.set_items(items, meta)
  cache.items, cache.at = items or {}, vim.uv.now()
  if type(meta) == "table" then
    cache.adapters = meta.adapters or cache.adapters
    cache.models = meta.models or cache.models
  end
end

--- Forget the host's items (the config changed): the next completion asks again.
function M.invalidate()
  cache.items = nil
end

--- Every item: the host's (cached) and the local ones.
---@return codecompanion.CompletionItem[]
function M.items()
  local result = vim.list_extend({}, cache.items or {})
  return vim.list_extend(result, local_items())
end

--- Items for `callback(items)`, asking the host in the background when the cache is empty or old.
---@param callback fun(items: codecompanion.CompletionItem[])
function M.fetch(callback)
  if cache.items and vim.uv.now() - cache.at < 5000 then
    callback(M.items())
    return
  end
  require("codecompanion.host").request_async("completion_items", {}, function(value)
    if type(value) == "table" then
      M.set_items(value.items, value.meta)
    end
    callback(M.items())
  end)
end

--- Adapter names and models for `:CodeCompanionChat adapter=<Tab> model=<Tab>`.
---@param fetch? boolean false: only the cache, never ask the host
---@return string[]
function M.adapters(fetch)
  if #cache.adapters == 0 and fetch ~= false then
    M.fetch(function() end) -- for the next <Tab>: command-line completion cannot wait
  end
  return cache.adapters
end

--- The cached models of `adapter` (of every adapter when nil).
---@param adapter? string
---@return string[]
function M.models(adapter)
  local models = cache.models[adapter or ""] or {}
  if adapter == nil then
    models = {}
    for _, list in pairs(cache.models) do
      vim.list_extend(models, list)
    end
  end
  return models
end

local KINDS = { group = 9, tool = 3, variable = 6, command = 14 } -- LSP CompletionItemKind

--- Items in the LSP CompletionItem shape, for nvim-cmp and blink.cmp.
---@param items? codecompanion.CompletionItem[] default: every item
---@return lsp.CompletionItem[]
function M.lsp_items(items)
  local result = {}
  for _, item in ipairs(items or M.items()) do
    table.insert(result, {
      label = item.word,
      insertText = item.word,
      filterText = item.word,
      kind = KINDS[item.kind] or 1,
      documentation = item.menu,
      data = { codecompanion = item.kind },
    })
  end
  return result
end

--- The start of the word being completed before the cursor (0-based column) and its text.
---@param line string
---@param col integer
---@return integer? start, string? word
local function word_before(line, col)
  local before = line:sub(1, col)
  -- `:` and `-` in names: @{mcp:<server>}
  local start = before:find("[@#][%w_{:%-]*$") or before:find("^/%w*$") or before:find("%s/%w*$")
  if not start then
    return nil
  end
  if before:sub(start, start):match("%s") then
    start = start + 1
  end
  return start - 1, before:sub(start)
end

--- 'omnifunc' of chat buffers: the start column, then the items that match `base`.
---@param findstart 0|1
---@param base string
---@return integer|table[]
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local start = word_before(vim.api.nvim_get_current_line(), vim.fn.col(".") - 1)
    return start or -3
  end
  -- A missing or old cache is refreshed in the background: the next <C-x><C-o> has it.
  M.fetch(function() end)
  local result = {}
  local prefix = base:sub(1, 1)
  local query = base:gsub("^[@#/]{?", "")
  for _, item in ipairs(M.items()) do
    local name = item.word:gsub("^[@#/]{?", ""):gsub("}$", "")
    if item.word:sub(1, 1) == prefix and name:find(query, 1, true) == 1 then
      table.insert(result, { word = item.word, kind = item.kind, menu = item.menu })
    end
  end
  return result
end

--- A slash command was completed (its word already removed): run it; text it returns goes in
--- at the cursor.
---@param bufnr integer the chat
---@param word string the command's word: "/file", "/buffer", ...
function M.run_command(bufnr, word)
  local _, text = require("codecompanion.slash").run(bufnr, word)
  if text and vim.api.nvim_get_current_buf() == bufnr then
    vim.api.nvim_put({ text }, "c", false, true)
  end
end

--- True for the word of a slash command.
---@param word any
---@return boolean
function M.is_command(word)
  return type(word) == "string"
    and word:match("^/[%w_%-]+$") ~= nil
    and require("codecompanion.slash").get(word:sub(2)) ~= nil
end

--- Remove `word` just before the cursor (the completed slash command) from the chat buffer.
---@param word string
function M.remove_before_cursor(word)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_get_current_line()
  if col >= #word and line:sub(col - #word + 1, col) == word then
    vim.api.nvim_buf_set_text(0, row - 1, col - #word, row - 1, col, { "" })
    vim.api.nvim_win_set_cursor(0, { row, col - #word })
  end
end

--- Open the omni menu while a word starting with `@`, `#` or `/` is typed (stock Neovim has
--- no completion as you type; nvim-cmp and blink.cmp open theirs on these characters). It is
--- asked again as the word grows: the menu then lists what matches `#se` (`#{selection}`).
---@param bufnr integer
function M.auto_open(bufnr)
  if vim.fn.pumvisible() == 1 or require("codecompanion.completion").plugin() then
    return
  end
  local line = vim.api.nvim_get_current_line()
  local start = word_before(line, vim.fn.col(".") - 1)
  if not start or vim.api.nvim_get_current_buf() ~= bufnr then
    return
  end
  -- Once per change of the line: a menu with nothing to show must not ask again and again.
  local key = ("%d:%d:%s"):format(bufnr, vim.fn.line("."), line)
  if cache.asked == key then
    return
  end
  cache.asked = key
  if cache.items == nil then
    -- The host's `@` items are not here yet: ask again once they are (if still typing it).
    M.fetch(function()
      if cache.items ~= nil and vim.api.nvim_get_mode().mode:sub(1, 1) == "i" then
        cache.asked = nil
        M.auto_open(bufnr)
      end
    end)
  end
  vim.api.nvim_feedkeys(vim.keycode("<C-x><C-o>"), "n", false)
end

--- For 'omnifunc' (and any completion that ends with CompleteDone): run a chosen slash command.
---@param bufnr integer the chat
function M.on_complete_done(bufnr)
  local word = (vim.v.completed_item or {}).word
  if M.is_command(word) then
    M.remove_before_cursor(word)
    vim.schedule(function()
      M.run_command(bufnr, word)
    end)
  end
end

return M
