-- Applies batches of render operations from Python to a chat buffer: one call per batch.
-- The protocol's Lua half: `handlers` below has one function per op kind, and each kind's fields
-- are the `codecompanion.op.*` classes (Python's side: the op values in the package's protocol
-- module; a test checks that both name the same kinds). Columns are bytes; Lua string lengths
-- are bytes, so appending at the end is exact.
local M = {}

local ns = vim.api.nvim_create_namespace("codecompanion")
local ns_tools = vim.api.nvim_create_namespace("codecompanion_tools")

local icons = require("codecompanion.icons")

---@class codecompanion.ToolEntry
---@field mark integer extmark of the tool's (or context's) line
---@field icon? integer extmark of its status icon
---@field title string
---@field status? string pending, awaiting_approval, running, success, error, ...
---@field context? boolean a context block, not a tool call
---@field body_mark? integer extmark of the first line of its (folded) output
---@field body_len? integer lines of output

---@class codecompanion.RenderState
---@field tools table<string, codecompanion.ToolEntry> by call id (contexts: "context:N")
---@field user_header? integer extmark of the last `## Me` header
---@field llm_header? integer extmark of the last answer's header
---@field usage_mark? integer
---@field usage_header? integer the header `usage_mark` belongs to
---@field contexts? integer context blocks so far
---@field adapter? string for the statusline
---@field model? string
---@field plans? table<string, {mark: integer, len: integer}> an agent's plans by id

-- Per-buffer render state, dropped when the buffer is wiped.
local buffers = {}
local stream_highlight = require("codecompanion.stream_highlight")
local spinner = require("codecompanion.spinner")

---@param bufnr integer
---@return codecompanion.RenderState
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

--- The render state of chat buffer `bufnr` (created on first use).
M.state = state

---@param bufnr integer
---@return integer row, integer col the end of the buffer's text (0-based)
local function last_pos(bufnr)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local last = vim.api.nvim_buf_get_lines(bufnr, count - 1, count, false)[1] or ""
  return count - 1, #last
end

---@param bufnr integer
---@param text string
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
---@param bufnr integer
---@param text string
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

---@param bufnr integer
---@return integer[]
local function windows(bufnr)
  return vim.fn.win_findbuf(bufnr)
end

--- The windows of `bufnr` whose cursor is on its last line (they follow new text).
---@param bufnr integer
---@return integer[]
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

---@param bufnr integer
---@param entry codecompanion.ToolEntry
---@param status string
---@param detail? string
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

--- Extmark options that colour a header line's text.
---@param text string
---@return vim.api.keyset.set_extmark
function M.header_mark(text)
  return { end_col = #text, hl_group = "CodeCompanionHeader", priority = 90 }
end

-- One handler per op kind: `handlers[op.kind](bufnr, op)`.
---@type table<string, fun(bufnr: integer, op: table)>
local handlers = {}

---@class codecompanion.op.Append streamed answer text, appended where the text ends
---@field text string

---@param bufnr integer
---@param op codecompanion.op.Append
function handlers.append(bufnr, op)
  append(bufnr, op.text)
  stream_highlight.streamed(bufnr)
end

--- The 0-based row of the last `## Me` when only blank lines follow it (a command such as
--- /compact was sent from it, and it still waits for a message), else nil.
---@param bufnr integer
---@return integer?
local function waiting_header(bufnr)
  local s = state(bufnr)
  local row = s.user_header and vim.api.nvim_buf_get_extmark_by_id(bufnr, ns, s.user_header, {})[1]
  if not row then
    return nil
  end
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, row + 1, -1, false)) do
    if line ~= "" then
      return nil
    end
  end
  return row
end

---@class codecompanion.op.Block text on a fresh line after one blank line
---@field text string

---@param bufnr integer
---@param op codecompanion.op.Block
function handlers.block(bufnr, op)
  local row = waiting_header(bufnr)
  if not row then
    append_block(bufnr, op.text)
    return
  end
  -- Above the `## Me` that still waits: the chat keeps one empty header, at its end.
  local lines = vim.split(op.text, "\n", { plain = true })
  table.insert(lines, "")
  local above = row > 0 and vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] or ""
  if above ~= "" then
    table.insert(lines, 1, "")
  end
  vim.api.nvim_buf_set_lines(bufnr, row, row, false, lines)
end

---@class codecompanion.op.Header a turn's header (`## Me`, `## CodeCompanion (…)`)
---@field role "user"|"llm"
---@field text string

---@param bufnr integer
---@param op codecompanion.op.Header
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

---@class codecompanion.op.Usage the turn's token count, beside the answer's header
---@field text string

---@param bufnr integer
---@param op codecompanion.op.Usage
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

---@class codecompanion.op.Meter the context meter: tokens of the window, last request, cost
---@field text string
---@field tokens integer
---@field window? integer
---@field last_input? integer
---@field last_output? integer
---@field cost? number

---@param bufnr integer
---@param op codecompanion.op.Meter
function handlers.meter(bufnr, op)
  require("codecompanion.meter").set(bufnr, op)
end

---@class codecompanion.op.Tool a tool call's line with its status icon
---@field call_id string
---@field title string
---@field status? string
---@field detail? string

---@param bufnr integer
---@param op codecompanion.op.Tool
function handlers.tool(bufnr, op)
  local s = state(bufnr)
  append_block(bufnr, op.title)
  local row = vim.api.nvim_buf_line_count(bufnr) - 1
  local mark = vim.api.nvim_buf_set_extmark(bufnr, ns_tools, row, 0, {})
  local icon = vim.api.nvim_buf_set_extmark(bufnr, ns_tools, row, 0, {})
  s.tools[op.call_id] = { mark = mark, icon = icon, title = op.title }
  set_tool_icon(bufnr, s.tools[op.call_id], op.status or "pending", op.detail)
end

---@class codecompanion.op.ToolStatus a tool call's new status (and title, when it changed)
---@field call_id string
---@field status string
---@field title? string
---@field detail? string

---@param bufnr integer
---@param op codecompanion.op.ToolStatus
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
---@param bufnr integer
---@param entry codecompanion.ToolEntry
---@return integer? first, integer? last
function M.body_range(bufnr, entry)
  if not entry.body_mark then
    return nil
  end
  local row = vim.api.nvim_buf_get_extmark_by_id(bufnr, ns_tools, entry.body_mark, {})[1]
  return row and row + 1, row and row + entry.body_len
end

-- Output longer than one line is folded; folds are per window, so a window that shows the
-- chat later (Toggle, another split) gets them on BufWinEnter.
---@param bufnr integer
---@param entry codecompanion.ToolEntry
---@param win integer
local function fold_body(bufnr, entry, win)
  local first, last = M.body_range(bufnr, entry)
  if first and last > first then
    vim.api.nvim_win_call(win, function()
      vim.wo.foldmethod = "manual"
      pcall(vim.cmd, ("%d,%dfold"):format(first, last))
    end)
  end
end

--- Fold every tool output and context block of `bufnr` in window `win`.
---@param bufnr integer
---@param win integer
function M.refold(bufnr, win)
  local s = buffers[bufnr]
  for _, entry in pairs(s and s.tools or {}) do
    fold_body(bufnr, entry, win)
  end
end

---@class codecompanion.op.Context context sent with a message: one folded line (`zo` shows the
---lines the model read)
---@field title string
---@field text? string

---@param bufnr integer
---@param op codecompanion.op.Context
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

---@class codecompanion.op.ToolOutput a tool's result: its text for the user, then (folded) what
---the model was sent, if different
---@field call_id string
---@field text string
---@field detail? string

---@param bufnr integer
---@param op codecompanion.op.ToolOutput
function handlers.tool_output(bufnr, op)
  local entry = state(bufnr).tools[op.call_id]
  local has_detail = op.detail and op.detail ~= vim.NIL and op.detail ~= ""
  local shown = has_detail and vim.split(op.text, "\n", { plain = true }) or {}
  local body = vim.split(has_detail and op.detail or op.text, "\n", { plain = true })
  local row = entry and vim.api.nvim_buf_get_extmark_by_id(bufnr, ns_tools, entry.mark, {})[1]
  -- Under the call's own line (not after the lines of the calls that follow it in a batch);
  -- at the end when it has none.
  local at = row and row + 1 or vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, at, at, false, vim.list_extend({ unpack(shown) }, body))
  if not entry then
    return
  end
  entry.body_mark = vim.api.nvim_buf_set_extmark(bufnr, ns_tools, at + #shown, 0, {})
  entry.body_len = #body
  for _, win in ipairs(windows(bufnr)) do
    fold_body(bufnr, entry, win)
  end
end

---@class codecompanion.op.Plan an agent's plan as a checklist, rewritten in place
---@field plan_id string the same id rewrites the same lines
---@field lines string[] the checklist (none: the plan is removed)

---@param bufnr integer
---@param op codecompanion.op.Plan
function handlers.plan(bufnr, op)
  local s = state(bufnr)
  s.plans = s.plans or {}
  local plan = s.plans[op.plan_id]
  local row = plan and vim.api.nvim_buf_get_extmark_by_id(bufnr, ns_tools, plan.mark, {})[1]
  if not row then
    if #op.lines == 0 then
      return
    end
    append_block(bufnr, table.concat(op.lines, "\n"))
    local first = vim.api.nvim_buf_line_count(bufnr) - #op.lines
    s.plans[op.plan_id] = {
      mark = vim.api.nvim_buf_set_extmark(bufnr, ns_tools, first, 0, {}),
      len = #op.lines,
    }
    return
  end
  vim.api.nvim_buf_set_lines(bufnr, row, row + plan.len, false, op.lines)
  plan.len = #op.lines
  if plan.len == 0 then
    s.plans[op.plan_id] = nil
  end
end

-- The buffer's 'modifiable' once the batch that holds these kinds is applied: `lock` makes it
-- read-only while a turn runs, `ready` writable again. Applied when the batch ends (see
-- M.apply): the batch itself must write.
local MODIFIABLE_AFTER = { lock = false, ready = true }

---@class codecompanion.op.Lock the buffer is read-only until `ready`

function handlers.lock() end

---@class codecompanion.op.Replace the whole buffer (a cleared or restored chat)
---@field lines string[]
---@field keep_message? boolean the message being typed comes back under the next `ready`

---@param bufnr integer
---@param op codecompanion.op.Replace
function handlers.replace(bufnr, op)
  stream_highlight.ended(bufnr)
  local s = state(bufnr)
  if op.keep_message then
    local typed = M.user_message(bufnr)
    s.kept_message = typed ~= "" and typed or nil
  end
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

---@class codecompanion.op.Ready the turn ended: the user's header, and the buffer writable
---@field text? string

---@param bufnr integer
---@param op codecompanion.op.Ready
function handlers.ready(bufnr, op)
  stream_highlight.ended(bufnr)
  spinner.stop(bufnr)
  if not waiting_header(bufnr) then -- a command's header still waits: no second one
    handlers.header(bufnr, { role = "user", text = op.text or "## Me" })
  end
  local s = state(bufnr)
  if s.kept_message then
    M.set_user_message(bufnr, s.kept_message)
    s.kept_message = nil
  end
end

---@class codecompanion.op.Spinner the spinner at the end of the buffer, on or off
---@field on boolean
---@field text? string

---@param bufnr integer
---@param op codecompanion.op.Spinner
function handlers.spinner(bufnr, op)
  if op.on then
    spinner.start(bufnr, op.text or "")
  else
    spinner.stop(bufnr)
  end
end

---@class codecompanion.op.Notice one line in the message area
---@field text string
---@field level? "info"|"warn"|"error"

---@param op codecompanion.op.Notice
function handlers.notice(_, op)
  M.notify(op.text, op.level)
end

---@class codecompanion.op.Event a `User CodeCompanion<name>` autocmd, with its data
---@field name string
---@field data? table

---@param bufnr integer
---@param op codecompanion.op.Event
function handlers.event(bufnr, op)
  local data = op.data or {}
  data.bufnr = bufnr
  if op.name == "FileEdited" then
    -- CodeCompanion's data: `bufnr` is the edited file's buffer (when loaded), not the chat's.
    data.chat_bufnr = bufnr
    local file_buf = type(data.path) == "string" and vim.fn.bufnr(data.path) or -1
    data.bufnr = file_buf > 0 and file_buf or nil
  end
  if type(data.adapter) == "string" then -- for the statusline (M.status)
    local s = state(bufnr)
    s.adapter, s.model = data.adapter, type(data.model) == "string" and data.model or nil
  end
  vim.api.nvim_exec_autocmds(
    "User",
    { pattern = "CodeCompanion" .. op.name, modeline = false, data = data }
  )
end

---@class codecompanion.op.SetVar a buffer variable (`b:<name>`)
---@field name string
---@field value any

---@param bufnr integer
---@param op codecompanion.op.SetVar
function handlers.set_var(bufnr, op)
  vim.b[bufnr][op.name] = op.value
end

--- A notice outside any chat's batch (from the host): one line in the message area.
---@param op codecompanion.op.Notice
function M.notice(op)
  handlers.notice(nil, op)
end

--- The op kinds this module handles, sorted (the protocol test compares them with Python's).
---@return string[]
function M.kinds()
  local kinds = vim.tbl_keys(handlers)
  table.sort(kinds)
  return kinds
end

--- A render failure: an error line in the message area and in the log, never silence.
---@param text string
local function render_error(text)
  require("codecompanion.host").log({ "codecompanion: render: " .. text })
  require("codecompanion.notify").notify("render: " .. text, "error")
end

--- Apply one op; an unknown kind or a failing handler is reported, and the batch goes on.
---@param bufnr integer
---@param op table
local function apply_op(bufnr, op)
  local handler = handlers[op.kind]
  if not handler then
    render_error(("unknown op kind %s"):format(vim.inspect(op.kind)))
    return
  end
  local ok, err = pcall(handler, bufnr, op)
  if not ok then
    render_error(tostring(op.kind) .. ": " .. tostring(err))
  end
end

--- Apply a batch of operations to a chat buffer; the cursor follows new text only if it was at
--- the end.
---@param bufnr integer
---@param ops table[] render ops: each has `kind` (a key of `handlers`) and that kind's fields
---@return boolean applied false when the buffer is gone
function M.apply(bufnr, ops)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return false
  end
  local follow = following(bufnr)
  local modifiable = vim.bo[bufnr].modifiable
  vim.bo[bufnr].modifiable = true
  for _, op in ipairs(ops) do
    apply_op(bufnr, op)
    if MODIFIABLE_AFTER[op.kind] ~= nil then
      modifiable = MODIFIABLE_AFTER[op.kind]
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
---@param text string
---@param level? "info"|"warn"|"error"
function M.notify(text, level)
  require("codecompanion.notify").notify(text, level)
end

--- The 0-based row of the last `## Me` header (-1 when there is none).
---@param bufnr integer
---@return integer
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
---@param bufnr integer
---@return string
function M.user_message(bufnr)
  local start = M.user_header_row(bufnr) + 1
  local lines = vim.api.nvim_buf_get_lines(bufnr, start, -1, false)
  return vim.trim(table.concat(lines, "\n"))
end

--- Replace the message being written (under the last `## Me`) with `text`.
---@param bufnr integer
---@param text string
function M.set_user_message(bufnr, text)
  local start = M.user_header_row(bufnr) + 1
  local lines = { "" }
  vim.list_extend(lines, vim.split(text, "\n", { plain = true }))
  vim.api.nvim_buf_set_lines(bufnr, start, -1, false, lines)
end

--- The 1-based rows of every header (`## ...`) in `bufnr`.
---@param bufnr integer
---@return integer[]
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
