-- Keeps Neovim fluid while a long answer streams: pauses a chat buffer's tree-sitter highlighter.
local M = {}

-- Tree-sitter Markdown highlighting makes Neovim 0.11 spend time in proportion to the buffer on
-- every change and redraw (incremental parses, injected trees, conceal_lines checks): with a long
-- answer streaming in, Neovim stays busy 5-25 ms after each batch. So while text streams into a
-- chat buffer longer than STREAM_LINES, or once a timer sees Neovim's loop run late by more than
-- LAG_BUDGET, the buffer's highlighter is paused (the object and its parser stay). It comes back
-- when the answer ends, or after STREAM_IDLE without new text (a tool running, a host that died).
local STREAM_LINES = 400
local LAG_BUDGET = 6e6 -- ns
local LAG_TICK = 16 -- ms
local STREAM_IDLE = 1e9 -- ns
local streaming = {} -- bufnr -> hrtime of the last text appended
local lag = { timer = nil, last = 0 }

local function highlighters()
  local ok, hl = pcall(require, "vim.treesitter.highlighter")
  return ok and type(hl) == "table" and type(hl.active) == "table" and hl.active or nil
end

local paused = {} -- bufnr -> the highlighter taken out of `active` while text streams

local function pause_highlight(bufnr, active)
  if active and active[bufnr] and not paused[bufnr] then
    paused[bufnr] = active[bufnr]
    active[bufnr] = nil
  end
end

local function pause_highlights()
  local active = highlighters()
  for bufnr in pairs(streaming) do
    pause_highlight(bufnr, active)
  end
end

--- The buffer is gone: stop watching it.
---@param bufnr integer
function M.forget(bufnr)
  paused[bufnr] = nil
  M.untrack(bufnr)
end

--- Stop watching `bufnr` (and the loop, once nothing streams).
---@param bufnr integer
function M.untrack(bufnr)
  streaming[bufnr] = nil
  if lag.timer and next(streaming) == nil then
    lag.timer:stop()
    lag.timer:close()
    lag.timer = nil
  end
end

--- Text stopped streaming into `bufnr`: its highlighter (if paused) is back.
---@param bufnr integer
function M.ended(bufnr)
  M.untrack(bufnr)
  local highlighter = paused[bufnr]
  if not highlighter then
    return
  end
  paused[bufnr] = nil
  local active = highlighters()
  if active and active[bufnr] == nil and vim.api.nvim_buf_is_valid(bufnr) then
    active[bufnr] = highlighter
    pcall(vim.api.nvim__redraw, { buf = bufnr, valid = false, flush = false })
  end
end

-- Runs in libuv's fast context: it only reads the clock and schedules work.
local function on_tick()
  local now = vim.uv.hrtime()
  local late = now - lag.last - LAG_TICK * 1e6
  lag.last = now
  if late > LAG_BUDGET then
    vim.schedule(pause_highlights)
  end
  for bufnr, seen in pairs(streaming) do
    if now - seen > STREAM_IDLE then
      vim.schedule(function()
        if streaming[bufnr] == seen then
          M.ended(bufnr)
        end
      end)
    end
  end
end

--- Whether text is streaming into `bufnr` now.
---@param bufnr integer
---@return boolean
function M.is_streaming(bufnr)
  return streaming[bufnr] ~= nil
end

--- Text was appended to `bufnr`: watch the loop while it streams.
---@param bufnr integer
function M.streamed(bufnr)
  streaming[bufnr] = vim.uv.hrtime()
  if vim.api.nvim_buf_line_count(bufnr) > STREAM_LINES then
    pause_highlight(bufnr, highlighters())
  end
  if not lag.timer then
    lag.timer, lag.last = vim.uv.new_timer(), vim.uv.hrtime()
    lag.timer:start(LAG_TICK, LAG_TICK, on_tick)
  end
end

return M
