-- `make run`: this checkout as the only plugin, then setup() with defaults.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
vim.opt.runtimepath:prepend(root)
vim.opt.termguicolors = true
require("codecompanion").setup({ python = vim.env.CODECOMPANION_PYTHON })
vim.api.nvim_echo(
  { { "codecompanion: :CodeCompanionChat to start, ? in the chat for keymaps", "Comment" } },
  false,
  {}
)
