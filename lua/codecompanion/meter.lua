-- The context meter of a chat: tokens in the model's context / its window, the last request's
-- input and output, and the cost when the model's price is known. Shown in the winbar of every
-- window that shows the chat (setup option `meter = "winbar"`, the default), as virtual text at
-- the right of the first line (`"virtual"`), or not at all (`"off"`); always in `status_info()`.
local M = {}

local ns = vim.api.nvim_create_namespace("codecompanion_meter")

---@class codecompanion.Meter
---@field tokens? integer tokens the next request would send (estimated, kept true by usage)
---@field window? integer the model's context window
---@field last_input? integer input tokens of the last request
---@field last_output? integer output tokens of the last request
---@field cost? number USD spent in this chat, when the model's price is known
---@field text string the meter as one line

---@type table<integer, codecompanion.Meter>
local meters = {}

local function number(value)
  return type(value) == "number" and value or nil
end

local function where()
  return require("codecompanion.config").options.meter or "winbar"
end

--- The winbar text of a chat, cut from the right to `width` cells so the tokens in context
--- and the window, which come first, stay in sight ("" before the chat has a meter).
---@param bufnr integer
---@param width? integer default: no limit
---@return string
function M.winbar(bufnr, width)
  local meter = meters[bufnr]
  if not meter then
    return ""
  end
  local text = width and require("codecompanion.notify").truncate(meter.text, math.max(1, width))
    or meter.text
  return "%#CodeCompanionTokens#" .. text:gsub("%%", "%%%%")
end

--- The winbar of the window being drawn (an 'winbar' `%!` expression): its chat's meter, cut
--- to the window's width (Neovim itself would cut the start, the figure that matters).
---@return string
function M.bar()
  local win = vim.g.statusline_winid
  if not win or not vim.api.nvim_win_is_valid(win) then
    return ""
  end
  return M.winbar(vim.api.nvim_win_get_buf(win), vim.api.nvim_win_get_width(win))
end

local BAR = "%!v:lua.require'codecompanion.meter'.bar()"

--- Show the meter of `bufnr` where the user wants it.
---@param bufnr integer
function M.draw(bufnr)
  local meter = meters[bufnr]
  local mode = where()
  if not meter or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  if mode == "winbar" then
    for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
      vim.wo[win][0].winbar = BAR -- set again for new values: the winbars are drawn again
    end
  elseif mode == "virtual" then
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
    vim.api.nvim_buf_set_extmark(bufnr, ns, 0, 0, {
      virt_text = { { meter.text, "CodeCompanionTokens" } },
      virt_text_pos = "right_align",
    })
  end
end

--- New values for the meter of `bufnr` (a render operation from the host).
---@param bufnr integer
---@param op codecompanion.op.Meter
function M.set(bufnr, op)
  local first = meters[bufnr] == nil
  meters[bufnr] = {
    tokens = number(op.tokens),
    window = number(op.window),
    last_input = number(op.last_input),
    last_output = number(op.last_output),
    cost = number(op.cost),
    text = type(op.text) == "string" and op.text or "",
  }
  M.draw(bufnr)
  if first then
    -- A window that shows the chat later gets the meter too.
    vim.api.nvim_create_autocmd("BufWinEnter", {
      buffer = bufnr,
      callback = function()
        M.draw(bufnr)
      end,
    })
    vim.api.nvim_create_autocmd("BufWipeout", {
      buffer = bufnr,
      callback = function()
        meters[bufnr] = nil
      end,
    })
  end
end

--- The meter of `bufnr`, or nil before the host sent one (it does when the chat opens).
---@param bufnr integer
---@return codecompanion.Meter?
function M.get(bufnr)
  return meters[bufnr]
end

return M
