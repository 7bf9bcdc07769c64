local map = vim.keymap.set

map("n", "<leader>w", "<cmd>write<cr>", { desc = "Save the buffer" })
map("n", "<leader>fp", function()
  require("picker").files()
end, { desc = "Open the file picker" })
map("n", "<leader>q", "<cmd>quit<cr>", { desc = "Quit the window" })
