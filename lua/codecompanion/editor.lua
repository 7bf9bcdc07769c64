-- What the host asks of the editor: loaded buffers, diagnostics, and diff review.
local M = {}

-- `path` comes resolved from the host and is not resolved again: a folder on it swapped for a
-- symlink since the host checked it must not lead to a buffer of a file outside the project.
---@param path string
---@return integer?
local function find_buffer(path)
  local target = vim.fn.fnamemodify(path, ":p")
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].buftype == "" then
      local name = vim.api.nvim_buf_get_name(bufnr)
      if name ~= "" and vim.fn.resolve(vim.fn.fnamemodify(name, ":p")) == target then
        return bufnr
      end
    end
  end
  return nil
end

--- The lines of the loaded buffer for `path`, or nil.
---@param path string resolved by the host
---@return string[]|vim.NIL
function M.buffer_lines(path)
  local bufnr = find_buffer(path)
  if not bufnr then
    return vim.NIL
  end
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

--- Replace a loaded buffer's lines in one undo step, without writing it.
---@param path string resolved by the host
---@param lines string[]
---@return boolean done false when no loaded buffer holds `path`
function M.set_buffer_lines(path, lines)
  local bufnr = find_buffer(path)
  if not bufnr then
    return false
  end
  local old = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  -- Only the changed middle is replaced, so marks and folds elsewhere survive.
  local first = 1
  while first <= #old and first <= #lines and old[first] == lines[first] do
    first = first + 1
  end
  local old_last, new_last = #old, #lines
  while old_last >= first and new_last >= first and old[old_last] == lines[new_last] do
    old_last, new_last = old_last - 1, new_last - 1
  end
  vim.api.nvim_buf_set_lines(
    bufnr,
    first - 1,
    old_last,
    false,
    vim.list_slice(lines, first, new_last)
  )
  return true
end

local SEVERITY = { ERROR = 1, WARNING = 2, INFORMATION = 3, HINT = 4 }
local NAMES = { "ERROR", "WARNING", "INFORMATION", "HINT" }

--- Why `path` must not be loaded into a buffer, or nil: only regular files (a FIFO would block
--- Neovim itself in bufload) up to `max_bytes`.
---@param path string
---@param max_bytes? integer
---@return string?
local function load_problem(path, max_bytes)
  local info = vim.uv.fs_lstat(path)
  if not info then
    return "it does not exist"
  end
  if info.type ~= "file" then
    return ("it is not a regular file (%s)"):format(info.type)
  end
  if max_bytes and info.size > max_bytes then
    return ("it is %d bytes, over the %d-byte limit for loading it into Neovim"):format(
      info.size,
      max_bytes
    )
  end
  return nil
end

--- A buffer loaded only to read diagnostics goes away again, unless the user took it up.
---@param bufnr integer
local function drop_fresh(bufnr)
  vim.schedule(function()
    if
      not vim.api.nvim_buf_is_valid(bufnr)
      or vim.bo[bufnr].buflisted
      or vim.bo[bufnr].modified
    then
      return
    end
    if #vim.fn.win_findbuf(bufnr) == 0 then
      pcall(vim.api.nvim_buf_delete, bufnr, {})
    end
  end)
end

---@param chan integer
---@param rid integer
---@param value any
local function reply(chan, rid, value)
  pcall(vim.rpcnotify, chan, "codecompanion", "editor_reply", { rid = rid, value = value })
end

---@class codecompanion.Diagnostic
---@field line integer 0-based
---@field col integer 0-based
---@field severity "ERROR"|"WARNING"|"INFORMATION"|"HINT"
---@field message string
---@field source string|vim.NIL
---@field code string|vim.NIL

--- The diagnostics of `bufnr` at severity `limit` (1 = errors only … 4 = all) or worse.
---@param bufnr integer
---@param limit integer
---@return codecompanion.Diagnostic[]
local function collect(bufnr, limit)
  local result = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.severity <= limit then
      table.insert(result, {
        line = d.lnum,
        col = d.col,
        severity = NAMES[d.severity] or "HINT",
        message = d.message,
        source = d.source or vim.NIL,
        code = d.code and tostring(d.code) or vim.NIL,
      })
    end
  end
  return result
end

--- Run `done` once LSP published diagnostics for `bufnr` (a moment after the first change),
--- or after a timeout: 3 s with a client attached, else 0.3 s for one to attach.
---@param bufnr integer
---@param rid integer
---@param done fun()
local function after_lsp(bufnr, rid, done)
  local timer = vim.uv.new_timer()
  local group = vim.api.nvim_create_augroup("codecompanion_diag_" .. rid, { clear = true })
  local finished = false
  local function finish()
    if finished then
      return
    end
    finished = true
    timer:stop()
    timer:close()
    pcall(vim.api.nvim_del_augroup_by_id, group)
    done()
  end
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    buffer = bufnr,
    callback = function()
      vim.defer_fn(finish, 250)
    end,
  })
  local attached = #vim.lsp.get_clients({ bufnr = bufnr }) > 0
  timer:start(attached and 3000 or 300, 0, vim.schedule_wrap(finish))
end

--- Diagnostics for `path` at `min_severity` or worse, answered to request `rid` on `chan`;
--- loads the buffer and waits briefly for LSP. A buffer loaded here is wiped afterwards, so
--- later edits of the file go to the disk.
---@param chan integer
---@param rid integer
---@param path string resolved by the host
---@param min_severity? "ERROR"|"WARNING"|"INFORMATION"|"HINT"
---@param max_bytes? integer a file larger than this is not loaded
function M.diagnostics(chan, rid, path, min_severity, max_bytes)
  local bufnr = find_buffer(path)
  local fresh = false
  if not bufnr then
    local problem = load_problem(path, max_bytes)
    if problem then
      reply(chan, rid, { error = problem })
      return
    end
    bufnr = vim.fn.bufadd(path)
    vim.bo[bufnr].buflisted = false
    vim.fn.bufload(bufnr)
    fresh = true
  end
  local limit = SEVERITY[min_severity or "HINT"] or 4
  local function answer()
    reply(chan, rid, collect(bufnr, limit))
    if fresh then
      drop_fresh(bufnr)
    end
  end
  if fresh or #vim.lsp.get_clients({ bufnr = bufnr }) > 0 and #vim.diagnostic.get(bufnr) == 0 then
    -- A fresh buffer has no diagnostics yet: give LSP a moment to attach and publish.
    after_lsp(bufnr, rid, answer)
  else
    answer()
  end
end

local DIFF_HL = {
  ["+"] = "CodeCompanionDiffAdd",
  ["-"] = "CodeCompanionDiffDelete",
  ["@"] = "CodeCompanionDiffHunk",
}

--- Highlight groups of a unified diff's rows (row -> group).
---@param lines string[]
---@return table<integer, string>
local function diff_highlights(lines)
  local result = {}
  for row, line in ipairs(lines) do
    if row > 2 then -- the ---/+++ file lines are not changes
      result[row] = DIFF_HL[line:sub(1, 1)]
    end
  end
  return result
end

-- Diff reviews open per chat id, for the statusline.
local reviewing = {}

--- Whether a diff review of chat `chat_id` waits on the user.
---@param chat_id string
---@return boolean
function M.reviewing(chat_id)
  return (reviewing[chat_id] or 0) > 0
end

---@class codecompanion.ReviewRequest
---@field chat_id? string
---@field path string
---@field diff string the unified diff
---@field hunks { row: integer }[] each hunk's first row in the diff
---@field note? string set when the file changed while the user reviewed

---@class codecompanion.Review a review under way: its float and the answers so far
---@field view table the preview float (codecompanion.preview)
---@field path string as shown
---@field count integer hunks
---@field accepted integer[] 0-based hunk indexes
---@field rejected integer[]
---@field done fun(reason?: string) sends the answer and closes the float

--- Ask about hunk `i` and each one after it, then answer.
---@param review codecompanion.Review
---@param req codecompanion.ReviewRequest
---@param i integer
local function ask_hunk(review, req, i)
  if i > review.count then
    return review.done(nil)
  end
  local preview = require("codecompanion.preview")
  local prompt = ("Hunk %d/%d of %s"):format(i, review.count, review.path)
  preview.show(review.view, req.hunks[i].row, "Review: " .. prompt)
  preview.select(
    { "Accept", "Reject" },
    { prompt = prompt, kind = "codecompanion.diff_hunk" },
    function(c)
      if c == nil then -- q, <Esc> or nothing: this hunk and the rest are rejected
        for rest = i, review.count do
          table.insert(review.rejected, rest - 1)
        end
        return review.done(nil)
      end
      table.insert(c == "Accept" and review.accepted or review.rejected, i - 1)
      ask_hunk(review, req, i + 1)
    end
  )
end

--- The first question: accept all, reject all (with an optional reason), or each hunk.
---@param review codecompanion.Review
---@param req codecompanion.ReviewRequest
local function ask_all(review, req)
  local preview = require("codecompanion.preview")
  local all = {}
  for i = 1, review.count do
    all[i] = i - 1
  end
  preview.show(review.view, 1)
  local again = type(req.note) == "string" and "It changed while you reviewed: " or ""
  preview.select({ "Accept all", "Reject all", "Review each hunk" }, {
    prompt = ("%sApply %s to %s?"):format(
      again,
      review.count == 1 and "1 change" or (review.count .. " changes"),
      review.path
    ),
    kind = "codecompanion.diff",
  }, function(choice)
    if choice == "Accept all" then
      review.accepted = all
      review.done(nil)
    elseif choice == "Review each hunk" then
      ask_hunk(review, req, 1)
    elseif choice == nil then -- q, <Esc> or nothing: rejected, with no question after it
      review.rejected = all
      review.done(nil)
    else
      review.rejected = all
      preview.close(review.view)
      vim.ui.input({ prompt = "Reason (optional): " }, function(reason)
        review.done(reason ~= "" and reason or nil)
      end)
    end
  end)
end

--- Show a proposed change and let the user accept or reject each hunk (answered by rpcnotify).
--- The diff is drawn before each question, and focus comes back to where it was after it.
---@param chan integer
---@param rid integer
---@param req codecompanion.ReviewRequest
function M.review(chan, rid, req)
  local chat_id = req.chat_id or ""
  reviewing[chat_id] = (reviewing[chat_id] or 0) + 1
  vim.schedule(function()
    local preview = require("codecompanion.preview")
    local origin = vim.api.nvim_get_current_win()
    local lines = vim.split(req.diff, "\n", { plain = true })
    local count = #req.hunks
    local path = vim.fn.fnamemodify(req.path, ":~:.")
    local review = { path = path, count = count, accepted = {}, rejected = {} }
    review.view = preview.open(lines, {
      title = ("Review: %s (%d change%s)"):format(path, count, count == 1 and "" or "s"),
      filetype = "diff",
      choices = 3,
      highlights = diff_highlights(lines),
    })
    function review.done(reason)
      reviewing[chat_id] = math.max(0, (reviewing[chat_id] or 1) - 1)
      preview.close(review.view)
      preview.refocus(origin)
      reply(chan, rid, {
        accepted = review.accepted,
        rejected = review.rejected,
        reason = reason or vim.NIL,
      })
    end
    ask_all(review, req)
  end)
end

--- Open text in a scratch buffer (the full output of a tool).
---@param title string part of the buffer's name
---@param lines string[]
function M.scratch(title, lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  pcall(vim.api.nvim_buf_set_name, buf, "codecompanion://" .. title)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
  -- Closed like the keymaps window and CodeCompanion's own scratch views.
  vim.keymap.set("n", "q", "<cmd>close<CR>", { buffer = buf, nowait = true, desc = "Close" })
end

return M
