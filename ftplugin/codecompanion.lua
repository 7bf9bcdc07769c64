-- Chat buffers: Markdown highlighting (tree-sitter when the parser is there, else the syntax file).
if vim.b.did_ftplugin_codecompanion then
  return
end
vim.b.did_ftplugin_codecompanion = true
vim.bo.commentstring = "<!-- %s -->"
vim.opt_local.conceallevel = 2
-- Started on the next loop turn: compiling the Markdown queries costs ~15 ms the first time,
-- which must not land inside :CodeCompanionChat (the window is already shown by then).
local buf = vim.api.nvim_get_current_buf()
vim.schedule(function()
  if vim.api.nvim_buf_is_valid(buf) and not pcall(vim.treesitter.start, buf, "markdown") then
    vim.bo[buf].syntax = "markdown"
  end
end)

-- Completion plugins, when installed (registered on the first chat: they may load lazily).
require("codecompanion.completion").register()
