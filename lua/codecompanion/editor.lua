-- What the host asks of the editor: loaded buffers, diagnostics, and diff review.
local M = {}

-- `path` comes resolved from the host and is not resolved again: a folder on it swapped for a
-- symlink since the host checked it must not lead to a buffer of a file outside the project.
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
function M.buffer_lines(path)
  local bufnr = find_buffer(path)
  if not bufnr then
    return vim.NIL
  end
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

--- Replace a loaded buffer's lines in one undo step, without writing it.
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

--- Diagnostics for `path` at `min_severity` or worse; loads the buffer and waits briefly for LSP.
--- A buffer loaded here is wiped afterwards, so later edits of the file go to the disk.
function M.diagnostics(chan, rid, path, min_severity, max_bytes)
  local bufnr = find_buffer(path)
  local fresh = false
  if not bufnr then
    local problem = load_problem(path, max_bytes)
    if problem then
      pcall(
        vim.rpcnotify,
        chan,
        "codecompanion",
        "editor_reply",
        { rid = rid, value = { error = problem } }
      )
      return
    end
    bufnr = vim.fn.bufadd(path)
    vim.bo[bufnr].buflisted = false
    vim.fn.bufload(bufnr)
    fresh = true
  end
  local limit = SEVERITY[min_severity or "HINT"] or 4
  local function collect()
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
    pcall(vim.rpcnotify, chan, "codecompanion", "editor_reply", { rid = rid, value = result })
    if fresh then
      drop_fresh(bufnr)
    end
  end
  if fresh or #vim.lsp.get_clients({ bufnr = bufnr }) > 0 and #vim.diagnostic.get(bufnr) == 0 then
    -- A fresh buffer has no diagnostics yet: give LSP a moment to attach and publish.
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
      collect()
    end
    vim.api.nvim_create_autocmd("DiagnosticChanged", {
      group = group,
      buffer = bufnr,
      callback = function()
        vim.defer_fn(finish, 250)
      end,
    })
    timer:start(
      #vim.lsp.get_clients({ bufnr = bufnr }) > 0 and 3000 or 300,
      0,
      vim.schedule_wrap(finish)
    )
  else
    collect()
  end
end

local DIFF_HL = {
  ["+"] = "CodeCompanionDiffAdd",
  ["-"] = "CodeCompanionDiffDelete",
  ["@"] = "CodeCompanionDiffHunk",
}

local function diff_highlights(lines)
  local result = {}
  for row, line in ipairs(lines) do
    if row > 2 then -- the ---/+++ file lines are not changes
      result[row] = DIFF_HL[line:sub(1, 1)]
    end
  end
  return result
end

--- Show a proposed change and let the user accept or reject each hunk (answered by rpcnotify).
--- The diff is drawn before each question, and focus comes back to where it was after it.
-- Diff reviews open per chat id, for the statusline.
local reviewing = {}

function M.reviewing(chat_id)
  return (reviewing[chat_id] or 0) > 0
end

function M.review(chan, rid, req)
  local chat_id = req.chat_id or ""
  reviewing[chat_id] = (reviewing[chat_id] or 0) + 1
  local function finished()
    reviewing[chat_id] = math.max(0, (reviewing[chat_id] or 1) - 1)
  end
  vim.schedule(function()
    local preview = require("codecompanion.preview")
    local origin = vim.api.nvim_get_current_win()
    local lines = vim.split(req.diff, "\n", { plain = true })
    local count = #req.hunks
    local path = vim.fn.fnamemodify(req.path, ":~:.")
    local view = preview.open(lines, {
      title = ("Review: %s (%d change%s)"):format(path, count, count == 1 and "" or "s"),
      filetype = "diff",
      choices = 3,
      highlights = diff_highlights(lines),
    })
    local accepted, rejected = {}, {}
    local function done(reason)
      finished()
      preview.close(view)
      preview.refocus(origin)
      pcall(vim.rpcnotify, chan, "codecompanion", "editor_reply", {
        rid = rid,
        value = { accepted = accepted, rejected = rejected, reason = reason or vim.NIL },
      })
    end
    local function ask_hunk(i)
      if i > count then
        return done(nil)
      end
      local prompt = ("Hunk %d/%d of %s"):format(i, count, path)
      preview.show(view, req.hunks[i].row, "Review: " .. prompt)
      preview.select(
        { "Accept", "Reject" },
        { prompt = prompt, kind = "codecompanion.diff_hunk" },
        function(c)
          table.insert(c == "Accept" and accepted or rejected, i - 1)
          ask_hunk(i + 1)
        end
      )
    end
    local all = {}
    for i = 1, count do
      all[i] = i - 1
    end
    preview.show(view, 1)
    local again = type(req.note) == "string" and "It changed while you reviewed: " or ""
    preview.select({ "Accept all", "Reject all", "Review each hunk" }, {
      prompt = ("%sApply %d change(s) to %s?"):format(again, count, path),
      kind = "codecompanion.diff",
    }, function(choice)
      if choice == "Accept all" then
        accepted = all
        done(nil)
      elseif choice == "Review each hunk" then
        ask_hunk(1)
      else
        rejected = all
        preview.close(view)
        vim.ui.input({ prompt = "Reason (optional): " }, function(reason)
          done(reason ~= "" and reason or nil)
        end)
      end
    end)
  end)
end

--- Open text in a scratch buffer (the full output of a tool).
function M.scratch(title, lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  pcall(vim.api.nvim_buf_set_name, buf, "codecompanion://" .. title)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
end

return M
