-- Checkpoints in Neovim: rewind and its undo, the review list and diff view, and the buffers a
-- rewind reads and reloads. The host keeps the checkpoints; Lua shows them.
local host = require("codecompanion.host")

local M = {}

---@class codecompanion.Checkpoint
---@field turn integer
---@field time number seconds since the epoch
---@field text string the turn's first line
---@field files string[] files the chat changed since (relative to the project)

---@class codecompanion.RewindOpts
---@field turn integer
---@field code? boolean default true
---@field conversation? boolean default true
---@field bufnr? integer the chat (default: the current chat buffer, else the last chat)

--- The chat buffer `bufnr` names, or the current one, or the last chat.
---@param bufnr integer?
---@return integer?
local function chat_buffer(bufnr)
  local buffers = require("codecompanion.chat_buffers")
  if bufnr and bufnr ~= 0 then
    return buffers.chat_id(bufnr) and bufnr or nil
  end
  local current = vim.api.nvim_get_current_buf()
  if buffers.chat_id(current) then
    return current
  end
  return buffers.last_chat()
end

--- Send `method` for a chat; false (and one line) when there is none.
local function send(bufnr, method, args)
  local buffers = require("codecompanion.chat_buffers")
  bufnr = chat_buffer(bufnr)
  if not bufnr then
    require("codecompanion.notify").notify("no chat", "warn")
    return false
  end
  buffers.reattach(bufnr)
  args = args or {}
  args.id = buffers.chat_id(bufnr)
  return host.notify(method, args)
end

--- The chat's turns with their time, first line and the files changed since (oldest first).
---@param bufnr integer?
---@return codecompanion.Checkpoint[]
function M.list(bufnr)
  bufnr = chat_buffer(bufnr)
  local list = bufnr and vim.b[bufnr].codecompanion_checkpoints
  return type(list) == "table" and list or {}
end

--- Restore code and/or conversation to just before a turn (asks about conflicts).
---@param opts codecompanion.RewindOpts
---@return boolean sent
function M.rewind(opts)
  opts = opts or {}
  if type(opts.turn) ~= "number" then
    return M.pick(opts.bufnr)
  end
  return send(opts.bufnr, "chat_rewind", {
    turn = opts.turn,
    code = opts.code ~= false,
    conversation = opts.conversation ~= false,
  })
end

--- Pick a turn to rewind to (the host asks with vim.ui.select).
---@param bufnr integer?
---@return boolean sent
function M.pick(bufnr)
  return send(bufnr, "chat_pick_rewind")
end

--- Undo the newest rewind of the chat.
---@param bufnr integer?
---@return boolean sent
function M.undo(bufnr)
  return send(bufnr, "chat_rewind_undo")
end

--- Review what the chat changed since a turn (its first by default).
---@param opts { since_turn?: integer, bufnr?: integer }?
---@return boolean sent
function M.review(opts)
  opts = opts or {}
  return send(opts.bufnr, "chat_review", { since_turn = opts.since_turn or vim.NIL })
end

--- The files the chat changed since a turn, with hunks. With `callback`, it is called with
--- (files, err) and Neovim does not wait; without, the host is asked and waited for (2 s).
---@param opts { since_turn?: integer, bufnr?: integer }?
---@param callback? fun(files: table[]?, err: string?)
---@return table[]? files, string? err
function M.changes(opts, callback)
  opts = opts or {}
  local bufnr = chat_buffer(opts.bufnr)
  local id = bufnr and require("codecompanion.chat_buffers").chat_id(bufnr)
  if not id then
    return nil, "no chat"
  end
  local args = { id = id, since_turn = opts.since_turn or vim.NIL }
  if callback then
    return host.request_async("changes", args, function(value, err)
      callback(value and value.files, err)
    end, 10000)
  end
  local value, err = host.request("changes", args, 10000)
  return value and value.files, err
end

--- Normalised absolute path of a buffer's file ("" for none).
local function buffer_path(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or name:find("^%w+://") then
    return ""
  end
  return vim.uv.fs_realpath(name) or vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
end

--- Loaded buffers of `paths`: path -> bufnr.
local function buffers_of(paths)
  local wanted, found = {}, {}
  for _, path in ipairs(paths) do
    wanted[vim.fs.normalize(path)] = true
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      local path = buffer_path(buf)
      if wanted[path] then
        found[path] = buf
      end
    end
  end
  return found
end

--- Of `paths`, those loaded in a buffer with unsaved changes (asked by the host).
---@param paths string[]
---@return string[]
function M.modified(paths)
  local result = {}
  for path, buf in pairs(buffers_of(paths)) do
    if vim.bo[buf].modified then
      table.insert(result, path)
    end
  end
  table.sort(result)
  return result
end

--- Loaded buffers of `paths` show the files as they are now (unsaved changes were asked about).
---@param paths string[]
---@return boolean done
function M.reload(paths)
  for _, buf in pairs(buffers_of(paths)) do
    vim.api.nvim_buf_call(buf, function()
      vim.cmd("silent! edit!")
    end)
  end
  return true
end

-- ----- the review view -----------------------------------------------------------------

-- Review buffers by chat id; each keeps the payload, the row map and the kept hunks.
local reviews = {}

local function hunk_key(file, hunk)
  return ("%s:%d:%d"):format(file.path, hunk.old_start, hunk.new_start)
end

local function quickfix(payload, kept)
  local items = {}
  for _, file in ipairs(payload.files) do
    if #file.hunks == 0 then
      table.insert(
        items,
        { filename = file.abs, lnum = 1, text = ("%s (%s)"):format(file.path, file.status) }
      )
    end
    for index, hunk in ipairs(file.hunks) do
      if not kept[hunk_key(file, hunk)] then
        table.insert(items, {
          filename = file.abs,
          lnum = math.max(1, hunk.new_start),
          text = ("%s hunk %d/%d +%d -%d"):format(
            file.path,
            index,
            #file.hunks,
            hunk.new_count,
            hunk.old_count
          ),
        })
      end
    end
  end
  local title = ("CodeCompanion: changes since turn %d"):format(payload.since_turn)
  vim.fn.setqflist({}, " ", { title = title, items = items })
end

--- The view's lines and what each row is: { file = i, hunk = j? }.
local function layout(payload, kept)
  local lines, rows = {}, {}
  local header =
    "r revert hunk · R revert file · k keep hunk · K keep file · <CR> open · q close"
  table.insert(lines, header)
  table.insert(rows, {})
  for fi, file in ipairs(payload.files) do
    -- The diff row each hunk starts at: one lookup per line, not a scan of every hunk.
    local starts = {}
    for hi, hunk in ipairs(file.hunks) do
      starts[hunk.row] = hi
    end
    local current = nil
    for li, line in ipairs(file.diff) do
      local hi = starts[li]
      if hi then
        current = kept[hunk_key(file, file.hunks[hi])] and false or hi
      end
      if current ~= false then
        table.insert(lines, line)
        table.insert(rows, { file = fi, hunk = current or nil })
      end
    end
  end
  if #payload.files == 0 then
    table.insert(lines, "(the chat changed no files since then)")
    table.insert(rows, {})
  end
  return lines, rows
end

local function draw(view)
  local lines, rows = layout(view.payload, view.kept)
  view.rows = rows
  vim.bo[view.buf].modifiable = true
  vim.api.nvim_buf_set_lines(view.buf, 0, -1, false, lines)
  vim.bo[view.buf].modifiable = false
  quickfix(view.payload, view.kept)
end

local function under_cursor(view)
  local row = view.rows[vim.fn.line(".")] or {}
  local file = row.file and view.payload.files[row.file]
  return file, file and row.hunk and file.hunks[row.hunk], row.hunk
end

local function act(view, what)
  local file, hunk, index = under_cursor(view)
  if not file then
    return
  end
  if what == "keep_hunk" and hunk then
    view.kept[hunk_key(file, hunk)] = true
  elseif what == "keep_file" or (what == "keep_hunk" and not hunk) then
    for _, h in ipairs(file.hunks) do
      view.kept[hunk_key(file, h)] = true
    end
    if #file.hunks == 0 then -- a binary or mode-only change: the file leaves the list
      for i, f in ipairs(view.payload.files) do
        if f == file then
          table.remove(view.payload.files, i)
          break
        end
      end
    end
  else -- revert the hunk, or the file (also for a hunk of a file without hunks)
    host.notify("chat_review_revert", {
      id = view.payload.id,
      since_turn = view.payload.since_turn,
      path = file.path,
      hunk = (what == "revert_hunk" and hunk) and index - 1 or vim.NIL,
    })
    return
  end
  draw(view)
end

local function open_view(payload)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "diff"
  pcall(vim.api.nvim_buf_set_name, buf, "codecompanion://review/" .. payload.id)
  local view = { buf = buf, payload = payload, kept = {}, rows = {} }
  reviews[payload.id] = view
  local maps = {
    r = "revert_hunk",
    R = "revert_file",
    k = "keep_hunk",
    K = "keep_file",
  }
  for key, what in pairs(maps) do
    vim.keymap.set("n", key, function()
      act(view, what)
    end, { buffer = buf, nowait = true, desc = "codecompanion review: " .. what:gsub("_", " ") })
  end
  vim.keymap.set("n", "<CR>", function()
    local file, hunk = under_cursor(view)
    if file then
      vim.cmd("wincmd p")
      vim.cmd.edit(vim.fn.fnameescape(file.abs))
      pcall(vim.api.nvim_win_set_cursor, 0, { math.max(1, hunk and hunk.new_start or 1), 0 })
    end
  end, { buffer = buf, nowait = true, desc = "codecompanion review: open the file" })
  local origin = vim.api.nvim_get_current_win()
  vim.keymap.set("n", "q", function()
    vim.cmd("close")
    if vim.api.nvim_win_is_valid(origin) then
      vim.api.nvim_set_current_win(origin) -- back where the review was asked for
    end
  end, { buffer = buf, nowait = true, desc = "codecompanion review: close" })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      if reviews[payload.id] == view then
        reviews[payload.id] = nil
      end
    end,
  })
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buf)
  return view
end

--- The host's review of a chat's changes: the quickfix list and the diff view (reused).
---@param payload { id: string, since_turn: integer, files: table[] }
function M.show_review(payload)
  local view = reviews[payload.id]
  if view and vim.api.nvim_buf_is_valid(view.buf) then
    view.payload = payload
  else
    view = open_view(payload)
  end
  draw(view)
end

return M
