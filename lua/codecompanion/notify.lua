-- Notices: one drawn line in the message area, never "Press ENTER"; the whole text in the
-- message history (:messages) and the log (:CodeCompanionLog).
local M = {}

-- Notices that arrive together (a config error when the host starts and the first chat's
-- notice) are shown as one: the message area only ever gets one line, never "Press ENTER".
local notices = { queue = {}, due = false }

local levels = vim.log.levels
local HIGHLIGHT = { [levels.ERROR] = "ErrorMsg", [levels.WARN] = "WarningMsg" }
local LEVEL_NAME = { [levels.ERROR] = "error", [levels.WARN] = "warn", [levels.DEBUG] = "debug" }

--- Each notice once in the log, whole, with its time and level.
---@param text string
---@param level integer
local function log(text, level)
  local line = ("%s notice [%s] %s"):format(
    os.date("%Y-%m-%d %H:%M:%S"),
    LEVEL_NAME[level] or "info",
    text
  )
  require("codecompanion.host").log({ line })
end

--- True when vim.notify is Neovim's own (it prints in the message area; a longer line wraps
--- and asks "Press ENTER").
local function stock_notify()
  local info = debug.getinfo(vim.notify, "S")
  return info ~= nil and info.source:find("vim/_editor.lua", 1, true) ~= nil
end

--- `text` cut to `width` display cells, the last one "…" when it did not fit.
---@param text string
---@param width integer at least 1
---@return string
function M.truncate(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local cut = vim.fn.strcharpart(text, 0, width - 1)
  while vim.fn.strdisplaywidth(cut) > width - 1 do
    cut = vim.fn.strcharpart(cut, 0, vim.fn.strchars(cut) - 1)
  end
  return cut .. "…"
end

--- The cells a notice may take without wrapping (beside the ruler and showcmd).
---@return integer
function M.room()
  return math.max(1, vim.v.echospace - 1)
end

--- Put `text` whole in the message history without asking "Press ENTER": while it is
--- echoed, 'messagesopt' waits 0 ms instead of prompting, and the screen is drawn again at
--- once. False where Neovim has no 'messagesopt' (before 0.11).
---@param text string
---@param hl? string
---@return boolean
local function remember(text, hl)
  local ok, saved = pcall(vim.api.nvim_get_option_value, "messagesopt", {})
  if not ok then
    return false
  end
  local history = saved:match("history:(%d+)") or "500"
  -- noautocmd: the user's OptionSet autocmds never see this passing value.
  vim.cmd("noautocmd set messagesopt=wait:0,history:" .. history)
  local echoed = pcall(vim.api.nvim_echo, { { text, hl } }, true, {})
  vim.cmd("redraw")
  vim.cmd("noautocmd let &messagesopt = " .. vim.fn.string(saved))
  return echoed
end

--- True when a notice goes to Neovim's own message area (a UI, and vim.notify not replaced).
---@return boolean
local function message_area()
  return #vim.api.nvim_list_uis() > 0 and stock_notify()
end

--- Show one notice: whole to a notification plugin (and without a UI); with Neovim's own
--- vim.notify, as it is when it fits, else whole in :messages and cut to one line on screen.
---@param text string
---@param level integer
local function show(text, level)
  if not message_area() or vim.fn.strdisplaywidth(text) <= M.room() then
    vim.notify(text, level)
    return
  end
  local hl = HIGHLIGHT[level]
  if remember(text, hl) then
    vim.api.nvim_echo({ { M.truncate(text, M.room()), hl } }, false, {})
  else
    vim.api.nvim_echo({ { M.truncate(text, M.room()), hl } }, true, {})
  end
end

--- A notice that came with a more severe one: whole in the log and :messages (a notification
--- plugin shows it too), not drawn.
---@param text string
---@param level integer
local function keep(text, level)
  if not message_area() then
    vim.notify(text, level)
  else
    remember(text, HIGHLIGHT[level])
  end
end

--- The notice to draw of those that came together (the most severe, the last of equals), and
--- which of the others another one already says (a longer one that contains it).
---@param queue { text: string, level: integer }[]
---@return table? best, table<table, boolean> repeated
local function choose(queue)
  local best, repeated = nil, {}
  for i, item in ipairs(queue) do
    for j, other in ipairs(queue) do
      if i ~= j and #other.text > #item.text and other.text:find(item.text, 1, true) then
        repeated[item] = true
      end
    end
    if not repeated[item] and (best == nil or item.level >= best.level) then
      best = item
    end
  end
  return best, repeated
end

local function flush_notices()
  local queue = notices.queue
  notices.queue, notices.due = {}, false
  local best, repeated = choose(queue)
  for _, item in ipairs(queue) do -- every one but the one drawn (last, below)
    if item ~= best and not repeated[item] then
      keep("codecompanion: " .. item.text, item.level)
    end
  end
  if best then
    show("codecompanion: " .. best.text, best.level)
  end
end

--- One line in the message area: whitespace (newlines too) collapsed, paths under $HOME as ~/.
---@param text any
---@param level? "debug"|"info"|"warn"|"error" default "info"
function M.notify(text, level)
  text = table.concat(vim.split(tostring(text), "%s+", { trimempty = true }), " ")
  local home = vim.env.HOME
  if home and #home > 1 then -- paths under the home folder as ~/…: more of the line fits
    text = text:gsub(vim.pesc(home) .. "/", "~/")
  end
  local item = { text = text, level = levels[(level or "info"):upper()] or levels.INFO }
  -- Logged as it comes, not when drawn: the log holds every notice even while the drawing waits.
  log("codecompanion: " .. text, item.level)
  table.insert(notices.queue, item)
  if not notices.due then
    notices.due = true
    vim.defer_fn(flush_notices, 30)
  end
end

return M
