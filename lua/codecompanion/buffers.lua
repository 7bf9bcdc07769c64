-- The host is told which files are loaded in buffers whenever that set changes, so a tool
-- reading a file asks Neovim for its lines only when a buffer holds it (no round trip otherwise),
-- and once a language server has attached to a buffer (before that, a read asks for no
-- diagnostics of a file no buffer holds: loading it would find no server),
-- and of every file Neovim writes, so a save during a tool round counts as the user's change,
-- not the chat's (checkpoints).
local M = {}

local state = { chan = nil, scheduled = false, last = nil, servers = false }

local function loaded_paths()
  local paths = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].buftype == "" then
      local name = vim.api.nvim_buf_get_name(bufnr)
      if name ~= "" then
        paths[#paths + 1] = vim.fn.resolve(vim.fn.fnamemodify(name, ":p"))
      end
    end
  end
  table.sort(paths)
  return paths
end

local function push()
  state.scheduled = false
  if not state.chan then
    return
  end
  local paths = loaded_paths()
  local key = table.concat(paths, "\n") .. (state.servers and "\n+" or "")
  if key == state.last then
    return
  end
  state.last = key
  local message = { paths = paths, servers = state.servers }
  pcall(vim.rpcnotify, state.chan, "codecompanion", "buffers", message)
end

local function schedule()
  if not state.scheduled then
    state.scheduled = true
    vim.schedule(push)
  end
end

--- Tell the host what Neovim just wrote to a file: its real path and what an lstat sees (the
--- host matches it against its captures; seconds and nanoseconds apart, as a float would
--- round their sum).
---@param ev { file: string, buf: integer }
local function saved(ev)
  if not state.chan or ev.file == "" or ev.file:find("^%w+://") then
    return
  end
  if vim.b[ev.buf].codecompanion_chat_write then
    return -- a chat's tool writing through the buffer: the chat's change, told by the tool
  end
  local path = vim.uv.fs_realpath(ev.file)
  local stat = path and vim.uv.fs_lstat(path)
  if not stat or stat.type ~= "file" then
    return
  end
  pcall(vim.rpcnotify, state.chan, "codecompanion", "file_saved", {
    path = path,
    size = stat.size,
    sec = stat.mtime.sec,
    nsec = stat.mtime.nsec,
  })
end

--- Keep the host on `chan` told of the loaded files (now, and after every buffer change) and
--- of each file Neovim writes.
---@param chan integer the host's channel
function M.track(chan)
  state.chan, state.last = chan, nil
  -- A server that attached before the host started (vim.lsp is not loaded for nothing).
  state.servers = state.servers or (package.loaded["vim.lsp"] ~= nil and #vim.lsp.get_clients() > 0)
  -- From now on each buffer's diagnostics publishes are noted: an edit's wait needs them.
  require("codecompanion.lsp_diagnostics").track()
  local group = vim.api.nvim_create_augroup("codecompanion_buffers", { clear = true })
  local events = { "BufAdd", "BufReadPost", "BufNewFile", "BufFilePost" }
  vim.list_extend(events, { "BufUnload", "BufDelete", "BufWipeout" })
  vim.api.nvim_create_autocmd(events, { group = group, callback = schedule })
  vim.api.nvim_create_autocmd("LspAttach", {
    group = group,
    callback = function()
      state.servers = true
      schedule()
    end,
  })
  vim.api.nvim_create_autocmd(
    { "BufWritePost", "FileWritePost", "FileAppendPost" },
    { group = group, callback = saved }
  )
  -- buftype can change after a buffer is loaded (a plugin marking its own buffer)
  vim.api.nvim_create_autocmd(
    "OptionSet",
    { group = group, pattern = "buftype", callback = schedule }
  )
  push()
end

return M
