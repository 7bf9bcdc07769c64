-- Commands only; everything else loads on first use.
if vim.g.loaded_codecompanion then
  return
end
vim.g.loaded_codecompanion = true

-- Chat buffers are Markdown to tree-sitter (highlighting, folds of code blocks).
pcall(vim.treesitter.language.register, "markdown", "codecompanion")

vim.api.nvim_create_user_command("CodeCompanionChat", function(opts)
  require("codecompanion").command(opts)
end, {
  nargs = "*",
  range = true,
  desc = "Open a chat (Toggle, Restore, Add, adapter=NAME model=NAME, or a prompt)",
  complete = function(arglead)
    return vim.tbl_filter(function(item)
      return item:find(arglead, 1, true) == 1
    end, { "Toggle", "Restore", "Add", "adapter=", "model=" })
  end,
})

vim.api.nvim_create_user_command("CodeCompanionReload", function()
  require("codecompanion").reload()
end, { desc = "Reload the Python config file" })

vim.api.nvim_create_user_command("CodeCompanionLog", function()
  vim.cmd.split(require("codecompanion.host").log_path())
end, { desc = "Open the codecompanion log" })
