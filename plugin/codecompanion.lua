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
  desc = "Open a chat (Toggle, Restore, Rewind, Review, Checks, Follow, Add, adapter=, a prompt)",
  complete = function(arglead, cmdline)
    local items = {
      "Toggle",
      "Restore",
      "Rewind",
      "Review",
      "Approvals",
      "Yolo",
      "Checks",
      "Follow",
      "Add",
      "adapter=",
      "model=",
    }
    local key = arglead:match("^(%w+)=")
    if key == "adapter" or key == "model" then
      -- From the host's cache (filled when it starts): command-line completion cannot wait.
      local complete = require("codecompanion.complete")
      local values = key == "adapter" and complete.adapters()
        or complete.models(cmdline:match("adapter=(%S+)"))
      items = vim.tbl_map(function(value)
        return key .. "=" .. value
      end, values)
    end
    return vim.tbl_filter(function(item)
      return item:find(arglead, 1, true) == 1
    end, items)
  end,
})

-- `:help codecompanion` works wherever the plugin runs (a checkout, `make run`): the help tags
-- are generated when they are missing or older than the help file (two stat calls otherwise).
do
  local doc = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h") .. "/doc"
  local help, tags = vim.uv.fs_stat(doc .. "/codecompanion.txt"), vim.uv.fs_stat(doc .. "/tags")
  if help and (not tags or tags.mtime.sec < help.mtime.sec) then
    pcall(vim.cmd.helptags, vim.fn.fnameescape(doc)) -- a read-only install keeps its own tags
  end
end

require("codecompanion.highlights").setup()
vim.api.nvim_create_autocmd("ColorScheme", {
  group = vim.api.nvim_create_augroup("codecompanion_highlights", { clear = true }),
  callback = function()
    require("codecompanion.highlights").setup()
  end,
})

-- `#{buffer}` means the last file buffer the user was in before the chat.
vim.api.nvim_create_autocmd("BufEnter", {
  group = vim.api.nvim_create_augroup("codecompanion_context", { clear = true }),
  callback = function(ev)
    if vim.bo[ev.buf].buftype == "" then
      require("codecompanion.context").track(ev.buf)
    end
  end,
})

vim.api.nvim_create_user_command("CodeCompanionReload", function()
  require("codecompanion").reload()
end, { desc = "Reload the Python config file" })

vim.api.nvim_create_user_command("CodeCompanionLog", function()
  vim.cmd.split(require("codecompanion.host").log_path())
  vim.cmd("normal! G") -- the newest lines are at the end
end, { desc = "Open the codecompanion log at its end" })

-- CodeCompanion.nvim's inline assistant and action palette are not here: typing them (a habit)
-- says in one line what to use instead, rather than E464/E492.
vim.api.nvim_create_user_command("CodeCompanion", function()
  require("codecompanion.render").notify(
    ":CodeCompanionChat [prompt] opens a chat, :'<,'>CodeCompanionChat Add adds lines "
      .. "(there is no inline assistant)",
    "info"
  )
end, { nargs = "*", range = true, desc = "Say what to use instead of the inline assistant" })

vim.api.nvim_create_user_command("CodeCompanionActions", function()
  require("codecompanion.render").notify(
    ":CodeCompanionChat Toggle|Restore|Add|adapter=NAME; ? in a chat lists its keymaps "
      .. "(there is no action palette)",
    "info"
  )
end, { nargs = "*", range = true, desc = "Say what to use instead of the action palette" })
