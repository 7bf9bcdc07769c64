-- `make run`: this checkout as the only plugin, then setup() with defaults.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
vim.opt.runtimepath:prepend(root)
vim.opt.termguicolors = true
require("codecompanion").setup({ python = vim.env.CODECOMPANION_PYTHON })

-- The welcome line once the screen is drawn (a line echoed while Neovim starts asks "Press
-- ENTER"), cut to the message area's width.
vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  callback = function()
    vim.schedule(function()
      local notify = require("codecompanion.notify")
      local text = "codecompanion: :CodeCompanionChat to start, ? in a chat for keymaps"
      vim.api.nvim_echo({ { notify.truncate(text, notify.room()), "Comment" } }, false, {})
    end)
  end,
})
