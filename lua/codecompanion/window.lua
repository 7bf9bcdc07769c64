-- The window a chat opens in, by `setup({ window = { layout = ... } })`: vertical (default),
-- horizontal, float or buffer; a window of this tab that already shows a chat is reused.
local config = require("codecompanion.config")

local M = {}

--- A size option: a fraction of `total` (below 1) or an absolute number of cells.
---@param value number?
---@param default number
---@param total integer
---@return integer
local function size(value, default, total)
  value = value or default
  return math.max(1, value < 1 and math.floor(total * value) or math.floor(value))
end

--- A window of this tab that shows a chat (reused by the next chat, as CodeCompanion does).
---@param is_chat fun(bufnr: integer): boolean
---@return integer?
local function chat_window(is_chat)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if is_chat(vim.api.nvim_win_get_buf(win)) then
      return win
    end
  end
  return nil
end

--- The float's size and place, centred in the editor as it is now.
---@param win_opts table
---@return vim.api.keyset.win_config
local function float_config(win_opts)
  local width = size(win_opts.width, 0.6, vim.o.columns)
  local height = size(win_opts.height, 0.8, vim.o.lines - vim.o.cmdheight - 2)
  return {
    relative = "editor",
    width = width,
    height = height,
    row = math.floor((vim.o.lines - height) / 2) - 1,
    col = math.floor((vim.o.columns - width) / 2),
  }
end

---@param bufnr integer
---@param win_opts table
local function open_float(bufnr, win_opts)
  local frame = { border = "rounded", title = " CodeCompanion ", title_pos = "center" }
  vim.api.nvim_open_win(bufnr, true, vim.tbl_extend("force", float_config(win_opts), frame))
end

--- Size the chat windows this plugin laid out to the configured size of the editor as it is
--- now: a terminal that shrank and grew again gives them their width back (Neovim alone
--- squeezes them and never widens them again).
function M.fit()
  local win_opts = config.options.window or {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local layout = vim.w[win].codecompanion_layout
    if layout == "vertical" then
      local width = size(win_opts.width, 0.45, vim.o.columns)
      pcall(vim.api.nvim_win_set_width, win, math.min(width, math.max(1, vim.o.columns - 2)))
    elseif layout == "horizontal" then
      pcall(vim.api.nvim_win_set_height, win, size(win_opts.height, 0.4, vim.o.lines))
    elseif layout == "float" then
      pcall(vim.api.nvim_win_set_config, win, float_config(win_opts))
    end
  end
end

local function fit_on_resize()
  vim.api.nvim_create_autocmd("VimResized", {
    group = vim.api.nvim_create_augroup("codecompanion_window", { clear = true }),
    callback = M.fit,
  })
end

--- Show chat buffer `bufnr` in a window (the current one afterwards), laid out as configured.
---@param bufnr integer
---@param is_chat fun(bufnr: integer): boolean tells the buffers of other chats
function M.open(bufnr, is_chat)
  local win_opts = config.options.window or {}
  local reuse = win_opts.layout ~= "buffer" and chat_window(is_chat)
  if reuse then
    vim.api.nvim_set_current_win(reuse)
    vim.api.nvim_win_set_buf(reuse, bufnr)
  elseif win_opts.layout == "buffer" then
    vim.api.nvim_set_current_buf(bufnr)
  elseif win_opts.layout == "float" then
    open_float(bufnr, win_opts)
    vim.w.codecompanion_layout = "float"
  elseif win_opts.layout == "horizontal" then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, bufnr)
    vim.api.nvim_win_set_height(0, size(win_opts.height, 0.4, vim.o.lines))
    vim.w.codecompanion_layout = "horizontal"
  else
    vim.cmd("botright vsplit")
    vim.api.nvim_win_set_buf(0, bufnr)
    vim.api.nvim_win_set_width(0, size(win_opts.width, 0.45, vim.o.columns))
    vim.w.codecompanion_layout = "vertical"
  end
  fit_on_resize()
  vim.wo.wrap = true
  vim.wo.linebreak = true
  vim.wo.foldmethod = "manual"
  vim.wo.foldtext = "v:lua.require'codecompanion.chat'.foldtext()"
end

return M
