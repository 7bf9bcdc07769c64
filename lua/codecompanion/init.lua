-- codecompanion: setup() and the public Lua API. Chat state lives in the Python host; Lua owns
-- buffers, windows, keymaps and prompts. The API's functions live in the modules named below.
local chat_buffers = require("codecompanion.chat_buffers")
local command = require("codecompanion.command")
local config = require("codecompanion.config")
local host = require("codecompanion.host")
local status = require("codecompanion.status")

local M = {}

--- Configure the plugin (see `:help codecompanion-setup`); with `start = "deferred"` (the
--- default) the host starts right after start-up.
---@param opts? table the options of `:help codecompanion-setup`
function M.setup(opts)
  if not config.supported() then
    return
  end
  config.setup(opts)
  if config.options.start == "deferred" then
    -- Start the host off the start-up path: Neovim shows its UI first. The Markdown
    -- highlight queries are compiled here too, so the first chat does not pay for them.
    vim.defer_fn(function()
      host.ensure()
      pcall(vim.treesitter.query.get, "markdown", "highlights")
      pcall(vim.treesitter.query.get, "markdown_inline", "highlights")
    end, 0)
  end
end

-- Chats (codecompanion.chat_buffers): open one, show or hide the last one, find them.
M.chat = chat_buffers.open
M.toggle = chat_buffers.toggle
M.last_chat = chat_buffers.last_chat
M.chat_id = chat_buffers.chat_id
M.chat_buffer = chat_buffers.chat_buffer
M.renew_id = chat_buffers.renew_id
M.reattach = chat_buffers.reattach
M.on_host_exit = chat_buffers.on_host_exit

-- :CodeCompanionChat (codecompanion.command).
-- Checkpoints: the chat's turns, rewind (code, conversation or both) and its undo, review.
local checkpoints = require("codecompanion.checkpoints")
M.checkpoints = checkpoints.list
M.rewind = checkpoints.rewind
M.rewind_undo = checkpoints.undo
M.changes = checkpoints.changes
M.review = checkpoints.review

M.command = command.run
M.add_selection = command.add_selection
M.restore = command.restore

--- Summarise the earlier conversation of a chat now (default: the current buffer), like /compact.
---@param bufnr? integer
function M.compact(bufnr)
  require("codecompanion.chat").compact(bufnr)
end

-- The chat's permission mode (codecompanion.chat).
M.mode = require("codecompanion.chat").mode

-- For a statusline (codecompanion.status).
M.status_info = status.info
M.status = status.line

--- Read the Python config file again (:CodeCompanionReload).
function M.reload()
  host.notify("reload", {})
end

return M
