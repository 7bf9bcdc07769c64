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

-- Completion plugins, when installed: `@` offers tools and groups in chat buffers.
local ok_cmp, cmp = pcall(require, "cmp")
if ok_cmp and type(cmp.register_source) == "function" then
  pcall(cmp.register_source, "codecompanion", require("codecompanion.completion.cmp").new())
  pcall(cmp.setup.buffer, {
    sources = cmp.config.sources({ { name = "codecompanion" } }, { { name = "buffer" } }),
  })
end
local ok_blink, blink = pcall(require, "blink.cmp")
if ok_blink and type(blink.add_source_provider) == "function" then
  pcall(blink.add_source_provider, "codecompanion", {
    name = "codecompanion",
    module = "codecompanion.completion.blink",
  })
  if type(blink.add_filetype_source) == "function" then
    pcall(blink.add_filetype_source, "codecompanion", "codecompanion")
  end
end
