-- The spinner at the end of a chat buffer while a request or a tool runs: one timer per buffer.
local M = {}

local ns = vim.api.nvim_create_namespace("codecompanion_spinner")
local icons = require("codecompanion.icons")

local timers = {}

--- Stop the spinner of `bufnr` and clear it.
---@param bufnr integer
function M.stop(bufnr)
  local timer = timers[bufnr]
  if timer then
    timers[bufnr] = nil
    timer:stop()
    timer:close()
  end
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  end
end

--- Start a spinner with `text` at the end of `bufnr` (replacing one that runs).
---@param bufnr integer
---@param text string
function M.start(bufnr, text)
  M.stop(bufnr)
  local frame = 0
  local SPIN = icons.spinner()
  local timer = vim.uv.new_timer()
  timers[bufnr] = timer
  timer:start(
    0,
    100,
    vim.schedule_wrap(function()
      if timers[bufnr] ~= timer or not vim.api.nvim_buf_is_valid(bufnr) then
        return
      end
      frame = frame % #SPIN + 1
      local row = vim.api.nvim_buf_line_count(bufnr) - 1
      vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
      vim.api.nvim_buf_set_extmark(bufnr, ns, row, 0, {
        virt_text = { { SPIN[frame] .. " " .. text, "CodeCompanionSpinner" } },
        virt_text_pos = "eol",
      })
    end)
  )
end

return M
