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

--- Bring the buffer up to date with its file when that changed on disk (as 'autoread' does,
--- without its prompts): only an unmodified buffer is reloaded.
---@param bufnr integer
---@return "same"|"reloaded"|"conflict"|"gone"
local function sync(bufnr)
  local outcome = "same"
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  -- Not called when 'autoread' reloads an unmodified buffer by itself (the tick tells that).
  local id = vim.api.nvim_create_autocmd("FileChangedShell", {
    buffer = bufnr,
    callback = function()
      local reason = vim.v.fcs_reason
      if reason == "deleted" then
        outcome, vim.v.fcs_choice = "gone", ""
      elseif vim.bo[bufnr].modified or reason == "conflict" then
        outcome, vim.v.fcs_choice = "conflict", ""
      elseif reason == "changed" then
        vim.v.fcs_choice = "reload"
      else -- only its mode or time changed
        vim.v.fcs_choice = ""
      end
    end,
  })
  pcall(vim.cmd.checktime, bufnr)
  pcall(vim.api.nvim_del_autocmd, id)
  if outcome == "same" and vim.api.nvim_buf_get_changedtick(bufnr) ~= tick then
    outcome = "reloaded"
    -- No server's answer can have come in between: the loop did not run.
    require("codecompanion.lsp_diagnostics").reloading(bufnr)
  end
  return outcome
end

--- The lines of the loaded buffer for `path`, or nil; an unmodified buffer whose file changed
--- on disk is reloaded first, so what is read is what a save would keep.
---@param path string resolved by the host
---@return string[]|vim.NIL
function M.buffer_lines(path)
  local bufnr = find_buffer(path)
  if not bufnr then
    return vim.NIL
  end
  sync(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

--- Whether the loaded buffer for `path` has changes not saved to its file (nil: none loaded).
---@param path string resolved by the host
---@return boolean|vim.NIL
function M.buffer_modified(path)
  local bufnr = find_buffer(path)
  if not bufnr then
    return vim.NIL
  end
  return vim.bo[bufnr].modified
end

--- Replace the buffer's lines with `lines`, only the changed middle, so marks, folds and the
--- views of windows elsewhere in the file stay; one undo step.
---@param bufnr integer
---@param old string[]
---@param lines string[]
local function replace_middle(bufnr, old, lines)
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
  replace_middle(bufnr, vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), lines)
  return true
end

-- Chat ids by buffer while a chat's edit is being saved (see M.chat_writing).
local chat_writes = {} ---@type table<integer, string>

--- The chat whose edit is being saved in `bufnr` (for BufWritePost handlers telling the chat's
--- saves from the user's), or nil.
---@param bufnr integer
---@return string?
function M.chat_writing(bufnr)
  return chat_writes[bufnr]
end

--- Save the buffer to its file, marked as the chat's write while it runs.
---@param bufnr integer
---@param chat_id string
---@return string? error
local function save(bufnr, chat_id)
  if vim.bo[bufnr].readonly then
    return "the buffer is read-only in Neovim"
  end
  chat_writes[bufnr] = chat_id
  vim.b[bufnr].codecompanion_chat_write = chat_id
  -- `!`: the file was checked against the buffer just before (sync), so Neovim's own
  -- "changed since reading" question would only stall here.
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd("silent keepalt keepjumps write!")
  end)
  chat_writes[bufnr] = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.b[bufnr].codecompanion_chat_write = nil
  end
  if not ok then
    local message = tostring(err)
    return message:match("E%d+:.*") or message
  end
  return nil
end

---@class codecompanion.BufferEdit
---@field path string resolved by the host
---@field expected string[] the lines the edit was made on
---@field lines string[] the lines after the edit
---@field save boolean save the buffer afterwards
---@field chat_id string

---@class codecompanion.BufferEdited
---@field status "saved"|"unsaved"|"changed"|"closed"
---@field error string|vim.NIL why a save asked for did not happen
---@field before codecompanion.Diagnostic[] the buffer's diagnostics before the edit

--- Apply the model's edit through the loaded buffer (one undo step, windows kept where they
--- are) and save it when asked; refused ("changed") when the buffer no longer holds the lines
--- the edit was made on.
---@param req codecompanion.BufferEdit
---@return codecompanion.BufferEdited
function M.write_buffer(req)
  local lsp = require("codecompanion.lsp_diagnostics")
  lsp.track()
  local bufnr = find_buffer(req.path)
  if not bufnr then
    return { status = "closed", error = vim.NIL, before = {} }
  end
  local disk = sync(bufnr)
  local old = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  if not vim.deep_equal(old, req.expected) then
    return { status = "changed", error = vim.NIL, before = {} }
  end
  local before = lsp.collect(bufnr)
  replace_middle(bufnr, old, req.lines)
  local result = { status = "unsaved", error = vim.NIL, before = before }
  if not req.save then
    return result
  end
  if disk == "conflict" or disk == "gone" then
    result.error = disk == "gone" and "its file was deleted" or "its file changed on disk"
    return result
  end
  local err = save(bufnr, req.chat_id)
  lsp.forget(bufnr)
  if err then
    result.error = err
  else
    result.status = "saved"
  end
  return result
end

--- Bring the loaded buffers of `paths` up to date with their files (a tool wrote them on
--- disk): the paths of those reloaded (with their diagnostics before), and of those whose
--- unsaved changes kept them as they were.
---@param paths string[] resolved by the host
---@return { reloaded: string[], kept: string[], before: table<string, codecompanion.Diagnostic[]> }
function M.reload(paths)
  local lsp = require("codecompanion.lsp_diagnostics")
  lsp.track()
  local result = { reloaded = {}, kept = {}, before = vim.empty_dict() }
  for _, path in ipairs(paths) do
    local bufnr = find_buffer(path)
    local before = bufnr and lsp.collect(bufnr) or {}
    local outcome = bufnr and sync(bufnr)
    if outcome == "reloaded" then
      table.insert(result.reloaded, path)
      result.before[path] = before
    elseif outcome == "conflict" then
      table.insert(result.kept, path)
    end
  end
  return result
end

--- Every file loaded in a buffer under `root` (a command may have changed any of them).
---@param root string resolved by the host
---@return string[]
function M.loaded_under(root)
  local prefix = root:sub(-1) == "/" and root or root .. "/"
  local result = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].buftype == "" then
      local name = vim.api.nvim_buf_get_name(bufnr)
      local path = name ~= "" and vim.fn.resolve(vim.fn.fnamemodify(name, ":p")) or ""
      if path:sub(1, #prefix) == prefix then
        table.insert(result, path)
      end
    end
  end
  return result
end

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

--- Whether a language server may attach to `path` once loaded: one attached has no filetypes
--- or lists the file's, an enabled `vim.lsp.config` lists it, or a FileType autocmd is set for
--- it (the way `vim.lsp.start` setups and lspconfig start servers). Loading a file for nothing
--- is not free: the first Python file loaded runs the python3 provider's check (~0.8 s).
---@param path string
---@return boolean
local function may_be_served(path)
  local ft = vim.filetype.match({ filename = path })
  if not ft then
    return false
  end
  -- vim.lsp not loaded: no client runs and no config was enabled (both load it), so only a
  -- FileType setup could start one; loading vim.lsp to learn that would cost a cold read ~6 ms.
  local lsp = package.loaded["vim.lsp"]
  if lsp ~= nil then
    for _, client in ipairs(lsp.get_clients()) do
      local fts = client.config and client.config.filetypes
      if fts == nil or vim.tbl_contains(fts, ft) then
        return true
      end
    end
    for name in pairs(rawget(lsp, "_enabled_configs") or {}) do
      local ok, config = pcall(function()
        return lsp.config[name]
      end)
      if ok and type(config) == "table" and vim.tbl_contains(config.filetypes or { ft }, ft) then
        return true
      end
    end
  end
  return #vim.api.nvim_get_autocmds({ event = "FileType", pattern = ft }) > 0
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

---@class codecompanion.DiagnosticsRequest
---@field path string resolved by the host
---@field min_severity? "ERROR"|"WARNING"|"INFORMATION"|"HINT"
---@field max_bytes? integer a file larger than this is not loaded
---@field wait_ms integer how long to wait for the servers' next publish
---@field start_ms integer how long a server still starting gets to attach

--- Diagnostics for `path`, answered to request `rid` on `chan`: once the language servers
--- attached published for the buffer's current text, or after the wait (at once without a
--- server). A file not loaded is loaded so its servers attach, and wiped again afterwards, so
--- later edits of the file go to the disk.
---@param chan integer
---@param rid integer
---@param req codecompanion.DiagnosticsRequest
function M.diagnostics(chan, rid, req)
  local bufnr = find_buffer(req.path)
  if not bufnr then
    local problem = load_problem(req.path, req.max_bytes)
    if problem then
      reply(chan, rid, { error = problem })
      return
    end
    if not may_be_served(req.path) then
      -- No server could attach: nothing to wait for, nothing to load (nor vim.lsp).
      reply(chan, rid, { diagnostics = {}, servers = {}, fresh = false, loaded = true })
      return
    end
  end
  local lsp = require("codecompanion.lsp_diagnostics")
  lsp.track()
  local fresh_load = false
  if bufnr then
    sync(bufnr)
  else
    bufnr = vim.fn.bufadd(req.path)
    vim.bo[bufnr].buflisted = false
    vim.fn.bufload(bufnr)
    fresh_load = true
  end
  lsp.wait(bufnr, req.wait_ms, req.start_ms, function(state)
    if not vim.api.nvim_buf_is_valid(bufnr) then
      reply(chan, rid, { error = "its buffer was closed" })
      return
    end
    reply(chan, rid, {
      diagnostics = lsp.collect(bufnr, req.min_severity),
      fresh = state.fresh,
      servers = state.servers,
      timed_out = state.timed_out,
      loaded = fresh_load,
    })
    if fresh_load then
      drop_fresh(bufnr)
    end
  end)
end

local UNSAVED_CHOICES = {
  "Edit the buffer, leave it unsaved",
  "Edit the buffer and save it (with your changes)",
  "Reject the edit",
}
local UNSAVED_ANSWERS = { "buffer", "save", "reject" }

--- Ask what to do with an edit of a buffer holding the user's unsaved changes; answers
--- "buffer", "save" or "reject" (the user's text is kept in the first two).
---@param chan integer
---@param rid integer
---@param req { path: string, chat_id: string }
function M.ask_unsaved(chan, rid, req)
  vim.schedule(function()
    local shown = vim.fn.fnamemodify(req.path, ":~:.")
    require("codecompanion.preview").select(UNSAVED_CHOICES, {
      prompt = ("%s has unsaved changes. Apply the model's edit on top of them?"):format(shown),
      kind = "codecompanion.unsaved_buffer",
    }, function(_, index)
      reply(chan, rid, UNSAVED_ANSWERS[index or 3] or "reject")
    end)
  end)
end

--- Show what the model reads or edits, when follow mode is on (see codecompanion.follow).
---@param path string resolved by the host
---@param line? integer 1-based
function M.follow(path, line)
  require("codecompanion.follow").show(path, line)
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
  local from = vim.api.nvim_get_current_win()
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
  -- Closed like the keymaps window and CodeCompanion's own scratch views, back in the window
  -- it was opened from (the chat), not whichever window Neovim would pick.
  vim.keymap.set("n", "q", function()
    vim.cmd("close")
    if vim.api.nvim_win_is_valid(from) then
      vim.api.nvim_set_current_win(from)
    end
  end, { buffer = buf, nowait = true, desc = "Close" })
  -- Drawn now: a question that follows (the stock vim.ui.select's inputlist) blocks redraws.
  vim.cmd("redraw")
end

return M
