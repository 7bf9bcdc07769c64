-- Follow mode: a window of the editor moves to what the model reads or edits, the way one
-- follows a collaborator; focus stays where the user is.
local M = {}

local state = {
  on = nil, ---@type boolean? nil: as setup({follow}) says
  win = nil, ---@type integer? the window that follows
}

--- Whether follow mode is on.
---@return boolean
function M.enabled()
  if state.on == nil then
    return require("codecompanion.config").options.follow == true
  end
  return state.on
end

--- Turn follow mode on or off (`nil`: toggle); returns the new state.
---@param on? boolean
---@return boolean
function M.set(on)
  if on == nil then
    on = not M.enabled()
  end
  state.on = on
  -- The host asks Neovim to follow only while this is on: a tool round sends nothing otherwise.
  require("codecompanion.host").notify("follow", { on = on })
  return on
end

--- Whether `win` can show a file for the user: a normal window not holding a chat.
---@param win integer?
---@return boolean
local function usable(win)
  if not win or not vim.api.nvim_win_is_valid(win) then
    return false
  end
  if vim.api.nvim_win_get_config(win).relative ~= "" then
    return false
  end
  local buf = vim.api.nvim_win_get_buf(win)
  return vim.bo[buf].filetype ~= "codecompanion" and vim.bo[buf].buftype == ""
end

--- The window that follows: the one used last time, else the previous window, else any
--- normal window of the tab page that is not a chat.
---@return integer?
local function pick()
  if usable(state.win) then
    return state.win
  end
  local previous = vim.fn.win_getid(vim.fn.winnr("#"))
  if usable(previous) then
    return previous
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if usable(win) then
      return win
    end
  end
  return nil
end

--- Show `path` at `line` in the following window, if follow mode is on and the tab page has a
--- window to spare (a chat is never replaced).
---@param path string resolved by the host
---@param line? integer 1-based
function M.show(path, line)
  if not M.enabled() then
    return
  end
  vim.schedule(function()
    local win = pick()
    if not win then
      return
    end
    state.win = win
    local bufnr = vim.fn.bufadd(path)
    vim.bo[bufnr].buflisted = true
    if not pcall(vim.api.nvim_win_set_buf, win, bufnr) then
      return
    end
    local last = vim.api.nvim_buf_line_count(bufnr)
    local row = math.max(1, math.min(line or 1, last))
    pcall(vim.api.nvim_win_set_cursor, win, { row, 0 })
    vim.api.nvim_win_call(win, function()
      vim.cmd("normal! zz")
    end)
  end)
end

return M
