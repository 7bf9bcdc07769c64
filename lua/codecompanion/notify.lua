-- One line in the message area at a time.
local M = {}

-- Notices that arrive together (a config error when the host starts and the first chat's
-- notice) are shown as one: the message area only ever gets one line, never "Press ENTER".
local notices = { queue = {}, due = false }

local function flush_notices()
  local queue = notices.queue
  notices.queue, notices.due = {}, false
  local best = nil
  for i, item in ipairs(queue) do
    local repeated = false -- a notice another one already says (a longer one that contains it)
    for j, other in ipairs(queue) do
      if i ~= j and #other.text > #item.text and other.text:find(item.text, 1, true) then
        repeated = true
      end
    end
    if not repeated and (best == nil or item.level >= best.level) then
      best = item
    end
  end
  local dropped = {} -- said by the one shown, or less severe: kept in the log
  for _, item in ipairs(queue) do
    if item ~= best then
      table.insert(dropped, "codecompanion: " .. item.text)
    end
  end
  require("codecompanion.host").log(dropped)
  if best then
    vim.notify(M.fit("codecompanion: " .. best.text), best.level)
  end
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

--- `text` cut to one line of the message area with "…" when Neovim's own vim.notify shows it
--- (the whole text goes to the log, :CodeCompanionLog); a notification plugin gets it whole.
---@param text string
---@return string
function M.fit(text)
  -- No floor above the room left: on a narrow terminal a longer line would ask "Press ENTER",
  -- and that prompt holds every RPC request until a key is typed.
  local room = math.max(1, vim.v.echospace - 1)
  -- Without a UI (headless) there is no message area to overflow: the text stays whole.
  local no_ui = #vim.api.nvim_list_uis() == 0
  if no_ui or not stock_notify() or vim.fn.strdisplaywidth(text) <= room then
    return text
  end
  require("codecompanion.host").log({ text })
  return M.truncate(text, room)
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
  local levels = vim.log.levels
  table.insert(
    notices.queue,
    { text = text, level = levels[(level or "info"):upper()] or levels.INFO }
  )
  if not notices.due then
    notices.due = true
    vim.defer_fn(flush_notices, 30)
  end
end

return M
