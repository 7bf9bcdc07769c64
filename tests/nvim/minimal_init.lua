-- Test init: the plugin from the checkout, scripted answers for vim.ui.select / vim.ui.input,
-- and a record of every CodeCompanion User event.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
vim.opt.runtimepath:prepend(root)
vim.opt.swapfile = false
vim.opt.shortmess:append("I")
vim.g.loaded_node_provider, vim.g.loaded_perl_provider, vim.g.loaded_ruby_provider = 0, 0, 0
if vim.env.CC_TEST_PYTHON and vim.env.CC_TEST_PYTHON ~= "" then
  vim.g.python3_host_prog = vim.env.CC_TEST_PYTHON
end

_G.cc_test = { answers = {}, inputs = {}, prompts = {}, events = {} }

-- Answers are labels ("approve", "Yes", "Accept all") or indexes; with none queued the prompt
-- waits.
-- CC_TEST_STOCK_UI=1 keeps Neovim's own vim.ui.select / vim.ui.input (screen tests under tmux).
local stock = vim.env.CC_TEST_STOCK_UI == "1"
local select = function(items, opts, on_choice)
  table.insert(
    _G.cc_test.prompts,
    { prompt = opts and opts.prompt, items = items, kind = opts and opts.kind }
  )
  local function answer()
    local want = table.remove(_G.cc_test.answers, 1)
    if want == nil then
      return vim.defer_fn(answer, 20)
    end
    for i, item in ipairs(items) do
      if item == want or i == want then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  vim.defer_fn(answer, 5)
end

local input = function(_, on_confirm)
  vim.defer_fn(function()
    on_confirm(table.remove(_G.cc_test.inputs, 1) or "")
  end, 5)
end

if not stock then
  vim.ui.select, vim.ui.input = select, input
end

vim.api.nvim_create_autocmd("User", {
  pattern = "CodeCompanion*",
  callback = function(ev)
    table.insert(_G.cc_test.events, { name = ev.match, data = ev.data })
  end,
})

local setup_opts = vim.env.CC_TEST_SETUP and vim.json.decode(vim.env.CC_TEST_SETUP) or {}
require("codecompanion").setup(setup_opts)
