-- The host is told which files are loaded in buffers whenever that set changes, so a tool
-- reading a file asks Neovim for its lines only when a buffer holds it (no round trip otherwise).
local M = {}

local state = { chan = nil, scheduled = false, last = nil }

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
  local key = table.concat(paths, "\n")
  if key == state.last then
    return
  end
  state.last = key
  pcall(vim.rpcnotify, state.chan, "codecompanion", "buffers", { paths = paths })
end

local function schedule()
  if not state.scheduled then
    state.scheduled = true
    vim.schedule(push)
  end
end

--- Keep the host on `chan` told of the loaded files (now, and after every buffer change).
---@param chan integer the host's channel
function M.track(chan)
  state.chan, state.last = chan, nil
  local group = vim.api.nvim_create_augroup("codecompanion_buffers", { clear = true })
  local events = { "BufAdd", "BufReadPost", "BufNewFile", "BufFilePost" }
  vim.list_extend(events, { "BufUnload", "BufDelete", "BufWipeout" })
  vim.api.nvim_create_autocmd(events, { group = group, callback = schedule })
  -- buftype can change after a buffer is loaded (a plugin marking its own buffer)
  vim.api.nvim_create_autocmd(
    "OptionSet",
    { group = group, pattern = "buftype", callback = schedule }
  )
  push()
end

return M
