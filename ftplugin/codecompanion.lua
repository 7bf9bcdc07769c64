-- Chat buffers: Markdown highlighting (tree-sitter when the parser is there, else the syntax file).
if vim.b.did_ftplugin_codecompanion then
  return
end
vim.b.did_ftplugin_codecompanion = true
vim.bo.commentstring = "<!-- %s -->"
vim.opt_local.conceallevel = 2
if not pcall(vim.treesitter.start, 0, "markdown") then
  vim.bo.syntax = "markdown"
end
