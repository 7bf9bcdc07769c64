-- Applies batches of render operations from Python to a chat buffer: one call per batch.
-- Columns are bytes; Lua string lengths are bytes, so appending at the end is exact.
local M = {}

local ns = vim.api.nvim_create_namespace("codecompanion")
local ns_tools = vim.api.nvim_create_namespace("codecompanion_tools")

local icons = require("codecompanion.icons")

-- Per-buffer render state, dropped when the buffer is wiped.
local buffers = {}
local stream_highlight = require("codecompanion.stream_highlight")
local spinner = require("codecompanion.spinner")

local function state(bufnr)
  local s = buffers[bufnr]
  if not s then
    s = { tools = {}, user_header = nil, llm_header = nil }
    buffers[bufnr] = s
    vim.api.nvim_create_autocmd("BufWinEnter", {
      buffer = bufnr,
      callback = function()
        M.refold(bufnr, vim.api.nvim_get_current_win())
      end,
    })
    vim.api.nvim_create_autocmd("BufWipeout", {
      buffer = bufnr,
      once = true,
      callback = function()
        spinner.stop(bufnr)
        stream_highlight.forget(bufnr)
        buffers[bufnr] = nil
      end,
    })
  end
  return s
end

M.state = state

local function last_pos(bufnr)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local last = vim.api.nvim_buf_get_lines(bufnr, count - 1, count, false)[1] or ""
  return count - 1, #last
end

local function append(bufnr, text)
  if text == "" then
    return
  end
  if text:sub(1, 1) == "\n" then
    -- New lines below the last one, which stays untouched: a fold ending there keeps its end.
    vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, vim.split(text:sub(2), "\n", { plain = true }))
    return
  end
  local row, col = last_pos(bufnr)
  vim.api.nvim_buf_set_text(bufnr, row, col, row, col, vim.split(text, "\n", { plain = true }))
end

--- Text appended so that it starts on a fresh line separated by one blank line.
local function append_block(bufnr, text)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local tail = vim.api.nvim_buf_get_lines(bufnr, math.max(0, count - 2), count, false)
  local prefix
  if #tail == 0 or (count == 1 and tail[1] == "") then
    prefix = ""
  elseif tail[#tail] ~= "" then
    prefix = "\n\n"
  elseif #tail >= 2 and tail[1] ~= "" then
    prefix = "\n"
  else
    prefix = ""
  end
  append(bufnr, prefix .. text)
end

local function windows(bufnr)
  return vim.fn.win_findbuf(bufnr)
end

local function following(bufnr)
  local result = {}
  local count = vim.api.nvim_buf_line_count(bufnr)
  for _, win in ipairs(windows(bufnr)) do
    local cursor = vim.api.nvim_win_get_cursor(win)
    if cursor[1] >= count - 1 then
      table.insert(result, win)
    end
  end
  return result
end

local function set_tool_icon(bufnr, entry, status, detail)
  local row = vim.api.nvim_buf_get_extmark_by_id(bufnr, ns_tools, entry.mark, {})[1]
  if not row then
    return
  end
  local text = icons.set()[status] or ""
  local chunks = { { text, icons.HL[status] or "CodeCompanionToolPending" } }
  if detail and detail ~= "" then
    table.insert(chunks, { " " .. detail, "CodeCompanionToolDetail" })
  end
  entry.status = status
  vim.api.nvim_buf_set_extmark(bufnr, ns_tools, row, 0, {
    id = entry.icon,
    virt_text = chunks,
    virt_text_pos = "eol",
  })
end

local handlers = {}

--- Extmark options that colour a header line's text.
function M.header_mark(text)
  return { end_col = #text, hl_group = "CodeCompanionHeader", priority = 90 }
end

function handlers.append(bufnr, op)
  append(bufnr, op.text)
  stream_highlight.streamed(bufnr)
end

function handlers.block(bufnr, op)
  append_block(bufnr, op.text)
end

function handlers.header(bufnr, op)
  local s = state(bufnr)
  append_block(bufnr, op.text)
  local row = vim.api.nvim_buf_line_count(bufnr) - 1
  local mark = vim.api.nvim_buf_set_extmark(bufnr, ns, row, 0, M.header_mark(op.text))
  if op.role == "user" then
    s.user_header = mark
  else
    s.llm_header = mark
  end
  append(bufnr, "\n\n")
end

function handlers.usage(bufnr, op)
  local s = state(bufnr)
  if not s.llm_header then
    return
  end
  local row = vim.api.nvim_buf_get_extmark_by_id(bufnr, ns, s.llm_header, {})[1]
  if row then
    -- One mark per header, updated as the turn's rounds add up.
    s.usage_mark = vim.api.nvim_buf_set_extmark(bufnr, ns, row, 0, {
      id = s.usage_header == s.llm_header and s.usage_mark or nil,
      virt_text = { { op.text, "CodeCompanionTokens" } },
      virt_text_pos = "eol",
    })
    s.usage_header = s.llm_header
  end
end

function handlers.tool(bufnr, op)
  local s = state(bufnr)
  append_block(bufnr, op.title)
  local row = vim.api.nvim_buf_line_count(bufnr) - 1
  local mark = vim.api.nvim_buf_set_extmark(bufnr, ns_tools, row, 0, {})
  local icon = vim.api.nvim_buf_set_extmark(bufnr, ns_tools, row, 0, {})
  s.tools[op.call_id] = { mark = mark, icon = icon, title = op.title }
  set_tool_icon(bufnr, s.tools[op.call_id], op.status or "pending", op.detail)
end

function handlers.tool_status(bufnr, op)
  local entry = state(bufnr).tools[op.call_id]
  if entry and type(op.title) == "string" and op.title ~= entry.title then
    local row = vim.api.nvim_buf_get_extmark_by_id(bufnr, ns_tools, entry.mark, {})[1]
    if row then
      -- Only the text changes: the line's marks (status icon, fold) stay where they are.
      local old = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
      vim.api.nvim_buf_set_text(bufnr, row, 0, row, #old, { op.title })
      entry.title = op.title
    end
  end
  if entry then
    set_tool_icon(bufnr, entry, op.status, op.detail)
  end
end

--- The 1-based first and last line of a tool's output, or nil.
function M.body_range(bufnr, entry)
  if not entry.body_mark then
    return nil
  end
  local row = vim.api.nvim_buf_get_extmark_by_id(bufnr, ns_tools, entry.body_mark, {})[1]
  return row and row + 1, row and row + entry.body_len
end

-- Output longer than one line is folded; folds are per window, so a window that shows the
-- chat later (Toggle, another split) gets them on BufWinEnter.
local function fold_body(bufnr, entry, win)
  local first, last = M.body_range(bufnr, entry)
  if first and last > first then
    vim.api.nvim_win_call(win, function()
      vim.wo.foldmethod = "manual"
      pcall(vim.cmd, ("%d,%dfold"):format(first, last))
    end)
  end
end

function M.refold(bufnr, win)
  local s = buffers[bufnr]
  for _, entry in pairs(s and s.tools or {}) do
    fold_body(bufnr, entry, win)
  end
end

--- Context sent with a message: one folded line (`zo` shows the lines the model read).
function handlers.context(bufnr, op)
  local s = state(bufnr)
  append_block(bufnr, op.title)
  local row = vim.api.nvim_buf_line_count(bufnr) - 1
  local mark = vim.api.nvim_buf_set_extmark(
    bufnr,
    ns_tools,
    row,
    0,
    { line_hl_group = "CodeCompanionContext" }
  )
  if op.text and op.text ~= vim.NIL and op.text ~= "" then
    append(bufnr, "\n" .. op.text)
  end
  s.contexts = (s.contexts or 0) + 1
  local entry = { mark = mark, title = op.title, context = true, body_mark = mark }
  entry.body_len = vim.api.nvim_buf_line_count(bufnr) - row
  s.tools["context:" .. s.contexts] = entry
  for _, win in ipairs(windows(bufnr)) do
    fold_body(bufnr, entry, win)
  end
end

--- A tool's result: its text for the user, then (folded) what the model was sent, if different.
function handlers.tool_output(bufnr, op)
  local entry = state(bufnr).tools[op.call_id]
  if op.detail and op.detail ~= vim.NIL and op.detail ~= "" then
    append(bufnr, "\n" .. op.text)
    op = { text = op.detail }
  end
  local first = vim.api.nvim_buf_line_count(bufnr)
  append(bufnr, "\n" .. op.text)
  if not entry then
    return
  end
  entry.body_mark = vim.api.nvim_buf_set_extmark(bufnr, ns_tools, first, 0, {})
  entry.body_len = vim.api.nvim_buf_line_count(bufnr) - first
  for _, win in ipairs(windows(bufnr)) do
    fold_body(bufnr, entry, win)
  end
end

-- lock takes effect when the batch ends (see M.apply): the batch itself must write.
function handlers.lock() end

function handlers.replace(bufnr, op)
  stream_highlight.ended(bufnr)
  local s = state(bufnr)
  vim.api.nvim_buf_clear_namespace(bufnr, ns_tools, 0, -1)
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  s.tools, s.llm_header, s.user_header = {}, nil, nil
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, op.lines)
  -- The view starts at the top again, with the cursor on the last line (under `## Me`
  -- after a clear): a view left scrolled past the end would look empty.
  for _, win in ipairs(windows(bufnr)) do
    vim.api.nvim_win_call(win, function()
      vim.fn.winrestview({ topline = 1, lnum = #op.lines, col = 0 })
    end)
  end
end

function handlers.ready(bufnr, op)
  stream_highlight.ended(bufnr)
  spinner.stop(bufnr)
  handlers.header(bufnr, { role = "user", text = op.text or "## Me" })
end

function handlers.spinner(bufnr, op)
  if op.on then
    spinner.start(bufnr, op.text or "")
  else
    spinner.stop(bufnr)
  end
end

function handlers.notice(_, op)
  M.notify(op.text, op.level)
end

function handlers.event(bufnr, op)
  local data = op.data or {}
  data.bufnr = bufnr
  if type(data.adapter) == "string" then -- for the statusline (M.status)
    local s = state(bufnr)
    s.adapter, s.model = data.adapter, type(data.model) == "string" and data.model or nil
  end
  vim.api.nvim_exec_autocmds(
    "User",
    { pattern = "CodeCompanion" .. op.name, modeline = false, data = data }
  )
end

function handlers.set_var(bufnr, op)
  vim.b[bufnr][op.name] = op.value
end

--- Apply a batch of operations to a chat buffer; the cursor follows new text only if it was at
--- the end.
function M.apply(bufnr, ops)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return false
  end
  local follow = following(bufnr)
  local modifiable = vim.bo[bufnr].modifiable
  vim.bo[bufnr].modifiable = true
  for _, op in ipairs(ops) do
    local handler = handlers[op.kind]
    if handler then
      local ok, err = pcall(handler, bufnr, op)
      if not ok then
        require("codecompanion.notify").notify(
          "render " .. op.kind .. ": " .. tostring(err),
          "error"
        )
      end
    end
    if op.kind == "lock" then
      modifiable = false
    elseif op.kind == "ready" then
      modifiable = true
    end
  end
  vim.bo[bufnr].modifiable = modifiable
  local count = vim.api.nvim_buf_line_count(bufnr)
  for _, win in ipairs(follow) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { count, 0 })
    end
  end
  return true
end

--- One line in the message area (see codecompanion.notify).
function M.notify(text, level)
  require("codecompanion.notify").notify(text, level)
end

--- The 0-based row of the last `## Me` header (-1 when there is none).
function M.user_header_row(bufnr)
  local s = state(bufnr)
  local row = s.user_header and vim.api.nvim_buf_get_extmark_by_id(bufnr, ns, s.user_header, {})[1]
  if row then
    return row
  end
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  for i = #lines, 1, -1 do
    if lines[i]:match("^## Me") then
      return i - 1
    end
  end
  return -1
end

--- The user's message: every line below the last `## Me` header.
function M.user_message(bufnr)
  local start = M.user_header_row(bufnr) + 1
  local lines = vim.api.nvim_buf_get_lines(bufnr, start, -1, false)
  return vim.trim(table.concat(lines, "\n"))
end

--- Replace the message being written (under the last `## Me`) with `text`.
function M.set_user_message(bufnr, text)
  local start = M.user_header_row(bufnr) + 1
  local lines = { "" }
  vim.list_extend(lines, vim.split(text, "\n", { plain = true }))
  vim.api.nvim_buf_set_lines(bufnr, start, -1, false, lines)
end

function M.header_rows(bufnr)
  local rows = {}
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line:match("^## ") then
      table.insert(rows, i)
    end
  end
  return rows
end

return M
