-- Context for a message: variables (`#{buffer}`, `#{selection}`, ... see VARIABLES) read from
-- the editor when the message is sent, and what slash commands add (codecompanion.slash).
-- Added context waits, shown under `## Me`, and is sent with the next message.
local M = {}

---@class codecompanion.ContextItem a file or buffer sent with the next message
---@field kind string "file", "buffer"
---@field path string relative to the cwd (or ~)
---@field filetype string
---@field lines string[]
---@field mention? string the text that asked for it (`#{buffer}`)
---@field file? string the file on disk it comes from (absolute), which the host vets

local ns = vim.api.nvim_create_namespace("codecompanion_context")
-- last: the last file buffer entered; win: the last window that showed one (the chat's source);
-- pending: chat bufnr -> list of context items.
local state = { last = nil, win = nil, pending = {} }

---@param bufnr integer
---@return boolean
local function is_chat(bufnr)
  return vim.bo[bufnr].filetype == "codecompanion"
end

--- Remember the last real file buffer entered (called on BufEnter).
---@param bufnr integer
function M.track(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].buftype == "" and not is_chat(bufnr) then
    state.last = bufnr
    state.win = vim.api.nvim_get_current_win()
  end
end

--- The buffer `#{buffer}` means: the last file buffer the user was in, if it is still loaded.
---@return integer?
function M.last_buffer()
  if state.last and vim.api.nvim_buf_is_loaded(state.last) then
    return state.last
  end
  return nil
end

--- Where the chat came from: the last file buffer and the window that showed it (either may
--- be nil when gone).
---@return { bufnr: integer|nil, win: integer|nil }
function M.source()
  local win = state.win and vim.api.nvim_win_is_valid(state.win) and state.win or nil
  return { bufnr = M.last_buffer(), win = win }
end

---@param path string
---@return string
local function relative(path)
  return vim.fn.fnamemodify(path, ":~:.")
end

--- A context item for a loaded buffer: path, filetype and its lines (unsaved changes included).
---@param bufnr integer
---@param kind? string default "buffer"
---@return codecompanion.ContextItem
function M.from_buffer(bufnr, kind)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local on_disk = name ~= "" and vim.bo[bufnr].buftype == ""
  return {
    kind = kind or "buffer",
    path = name ~= "" and relative(name) or ("[No Name " .. bufnr .. "]"),
    filetype = vim.bo[bufnr].filetype,
    lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false),
    -- the host vets the file a buffer shows (a secret, or outside the project) before sending
    file = on_disk and vim.fn.fnamemodify(name, ":p") or nil,
  }
end

local MAX_FILE_BYTES = 2000000 -- as the host's cap (context/file_items.py)

--- Why the file at `path` cannot be added: not a regular file (a FIFO or device would block
--- Neovim), or too big; nil when it can.
---@param path string
---@return string?
function M.unreadable(path)
  local stat = vim.uv.fs_stat(path)
  if not stat or stat.type ~= "file" then
    return "no regular file " .. path
  end
  if stat.size > MAX_FILE_BYTES then
    return ("%s is over %d bytes"):format(path, MAX_FILE_BYTES)
  end
  return nil
end

--- A context item for a file on disk (read when picked, for its line count; the host reads it
--- again when the message is sent, checking where it really is).
---@param path string
---@return codecompanion.ContextItem?
function M.from_file(path)
  local why = M.unreadable(path)
  local ok, lines = false, nil
  if not why then
    ok, lines = pcall(vim.fn.readfile, path)
  end
  if not ok then
    vim.notify("codecompanion: cannot read " .. (why or path), vim.log.levels.WARN)
    return nil
  end
  return {
    kind = "file",
    path = relative(path),
    filetype = vim.filetype.match({ filename = path }) or "",
    lines = lines,
    file = vim.fn.fnamemodify(path, ":p"),
  }
end

local IMAGE_TYPES = {
  png = "image/png",
  jpg = "image/jpeg",
  jpeg = "image/jpeg",
  gif = "image/gif",
  webp = "image/webp",
}

--- A context item for an image file (the host reads it when the message is sent), or nil.
---@param path string
---@return table?
function M.from_image(path)
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  local notify = require("codecompanion.render").notify
  if vim.fn.filereadable(full) ~= 1 or (vim.uv.fs_stat(full) or {}).type ~= "file" then
    notify(("/image: no readable file %s"):format(path), "warn")
    return nil
  end
  local mime = IMAGE_TYPES[(full:match("%.(%w+)$") or ""):lower()]
  if not mime then
    notify(("/image: %s is not a png, jpeg, gif or webp image"):format(path), "warn")
    return nil
  end
  return { kind = "image", path = relative(full), filetype = mime, lines = {}, file = full }
end

local function show_pending(bufnr)
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  local items = state.pending[bufnr] or {}
  if #items == 0 then
    return
  end
  local render = require("codecompanion.render")
  local row = math.max(0, render.user_header_row(bufnr))
  local virt = {}
  for _, item in ipairs(items) do
    table.insert(virt, {
      {
        ("  %s %s (%s) will be sent with the message"):format(
          item.kind,
          item.path,
          item.kind == "image" and item.filetype or (#item.lines .. " lines")
        ),
        "CodeCompanionContext",
      },
    })
  end
  vim.api.nvim_buf_set_extmark(bufnr, ns, row, 0, { virt_lines = virt })
end

--- Add a context item to the chat's next message.
---@param bufnr integer the chat
---@param item? codecompanion.ContextItem
function M.add(bufnr, item)
  if not item then
    return
  end
  state.pending[bufnr] = state.pending[bufnr] or {}
  for _, known in ipairs(state.pending[bufnr]) do
    if known.path == item.path then
      return
    end
  end
  table.insert(state.pending[bufnr], item)
  show_pending(bufnr)
end

--- The context to send with `text` (added items, and the variables it mentions); clears what
--- was pending.
---@param bufnr integer the chat
---@param text string the message
---@return codecompanion.ContextItem[]
function M.take(bufnr, text)
  local items = state.pending[bufnr] or {}
  state.pending[bufnr] = nil
  pcall(vim.api.nvim_buf_clear_namespace, bufnr, ns, 0, -1)
  local variables = require("codecompanion.variables")
  local found = {}
  for name in text:gmatch("#{([%w_]+)}") do
    local variable = variables.get(name)
    if variable and not found[name] then
      found[name] = true
      local read, why = variable.read(M.source())
      if read then
        for _, item in ipairs(vim.islist(read) and read or { read }) do
          item.mention = "#{" .. name .. "}"
          table.insert(found, item)
        end
      else
        require("codecompanion.render").notify(("#{%s}: %s"):format(name, why), "warn")
      end
    end
  end
  for i = #found, 1, -1 do
    table.insert(items, 1, found[i])
  end
  return items
end

--- `/buffer`: pick one of the open file buffers.
---@param chat integer the chat's buffer
function M.pick_buffer(chat)
  local choices = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.bo[bufnr].buflisted and vim.bo[bufnr].buftype == "" and not is_chat(bufnr) then
      local name = vim.api.nvim_buf_get_name(bufnr)
      if name ~= "" then
        table.insert(choices, { bufnr = bufnr, label = relative(name) })
      end
    end
  end
  if #choices == 0 then
    require("codecompanion.notify").notify("/buffer: no file buffer is open", "warn")
    return
  end
  vim.ui.select(choices, {
    prompt = "Add a buffer to the chat",
    kind = "codecompanion.buffer",
    format_item = function(choice)
      return choice.label
    end,
  }, function(choice)
    if choice then
      M.add(chat, M.from_buffer(choice.bufnr, "buffer"))
    end
  end)
end

--- The project's files, listed without blocking Neovim (rg, else git ls-files), for `cb(files)`.
---@param cwd string
---@param cb fun(files: string[])
local function list_files(cwd, cb)
  local cmd = vim.fn.executable("rg") == 1 and { "rg", "--files", "--hidden", "--glob", "!.git" }
    or { "git", "ls-files", "--cached", "--others", "--exclude-standard" }
  local ok = pcall(vim.system, cmd, { cwd = cwd, text = true }, function(out)
    local files = vim.split(out.stdout or "", "\n", { trimempty = true })
    table.sort(files)
    vim.schedule(function()
      cb(files)
    end)
  end)
  if not ok then
    cb({})
  end
end

--- `/file`: pick a file of the project (Neovim's cwd).
---@param chat integer the chat's buffer
function M.pick_file(chat)
  local cwd = vim.fn.getcwd()
  list_files(cwd, function(files)
    if #files == 0 then
      return require("codecompanion.notify").notify(
        "/file: no files found in " .. relative(cwd),
        "warn"
      )
    end
    vim.ui.select(
      files,
      { prompt = "Add a file to the chat", kind = "codecompanion.file" },
      function(choice)
        if choice then
          M.add(chat, M.from_file(vim.fs.joinpath(cwd, choice)))
        end
      end
    )
  end)
end

return M
