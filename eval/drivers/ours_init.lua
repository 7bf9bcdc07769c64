-- The eval's init for this plugin: the checkout on the runtimepath, questions answered as a user
-- who approves every call (the task's own limit on rounds says no), and every User event kept.
local root = assert(os.getenv("EVAL_PLUGIN_ROOT"), "EVAL_PLUGIN_ROOT")
vim.opt.runtimepath:prepend(root)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
vim.g.loaded_node_provider, vim.g.loaded_perl_provider, vim.g.loaded_ruby_provider = 0, 0, 0

_G.eval_state = { events = {}, prompts = {} }

---@param prompt string
---@return string[] the answers to try, in order
local function wanted(prompt)
  if prompt:find("in a row", 1, true) then
    return { "No" } -- the round cap: the task's max_rounds is reached
  end
  return { "approve", "Yes" }
end

vim.ui.select = function(items, opts, on_choice)
  local prompt = opts and opts.prompt or ""
  table.insert(_G.eval_state.prompts, prompt)
  vim.schedule(function()
    for _, want in ipairs(wanted(prompt)) do
      for i, item in ipairs(items) do
        if item == want then
          return on_choice(item, i)
        end
      end
    end
    on_choice(items[1], 1)
  end)
end

vim.ui.input = function(_, on_confirm)
  vim.schedule(function()
    on_confirm("")
  end)
end

vim.api.nvim_create_autocmd("User", {
  pattern = "CodeCompanion*",
  callback = function(ev)
    table.insert(_G.eval_state.events, ev.match)
  end,
})

local setup = assert(os.getenv("EVAL_SETUP"), "EVAL_SETUP")
require("codecompanion").setup(vim.json.decode(setup))
_G.eval_state.ready = true
