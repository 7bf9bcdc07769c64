-- Bench init: the plugin from the checkout, setup() from $CC_BENCH_SETUP, and instrumentation
-- that timestamps with Neovim's own clock (vim.uv.hrtime) and reports to the driver by rpcnotify.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
vim.opt.runtimepath:prepend(root)
vim.opt.swapfile = false
vim.opt.shortmess:append("I")
vim.g.loaded_node_provider, vim.g.loaded_perl_provider, vim.g.loaded_ruby_provider = 0, 0, 0

local B = { driver = nil, submit = nil, seen = nil }
_G.bench = B

local function report(name, data)
  if B.driver then
    vim.rpcnotify(B.driver, "bench", name, data or vim.empty_dict())
  end
end

vim.api.nvim_create_autocmd("User", {
  pattern = { "CodeCompanionChatDone", "CodeCompanionChatCreated" },
  callback = function(ev)
    report(ev.match, { t = vim.uv.hrtime(), bufnr = ev.data and ev.data.bufnr or -1 })
  end,
})

require("codecompanion").setup(vim.json.decode(vim.env.CC_BENCH_SETUP or "{}"))

-- The moment the user's <CR> hands the message to the host.
local host = require("codecompanion.host")
local notify = host.notify
host.notify = function(method, args)
  if method == "chat_submit" then
    B.submit = vim.uv.hrtime()
  end
  return notify(method, args)
end

-- What the plugin's render batches cost Neovim (wall time inside render.apply), per run.
local render = require("codecompanion.render")
local apply = render.apply
local batches = { max = 0, total = 0, count = 0 }
render.apply = function(...)
  local t0 = vim.uv.hrtime()
  local ok = apply(...)
  local spent = vim.uv.hrtime() - t0
  batches.max = math.max(batches.max, spent)
  batches.total, batches.count = batches.total + spent, batches.count + 1
  return ok
end

--- Render batch costs since the last call: { max = ms, total = ms, count = n }.
function B.batches()
  local stats = { max = batches.max / 1e6, total = batches.total / 1e6, count = batches.count }
  batches.max, batches.total, batches.count = 0, 0, 0
  return stats
end

--- Note when `sentinel` first appears in the buffer (only the changed lines are searched).
function B.watch(bufnr, sentinel)
  B.seen = nil
  vim.api.nvim_buf_attach(bufnr, false, {
    on_lines = function(_, buf, _, first, _, new_last)
      for _, line in ipairs(vim.api.nvim_buf_get_lines(buf, first, new_last, false)) do
        if line:find(sentinel, 1, true) then
          B.seen = vim.uv.hrtime()
          report("seen", { t = B.seen })
          return true
        end
      end
    end,
  })
end

--- `:CodeCompanionChat` timed from inside Neovim; the window exists when the command returns.
function B.open_chat()
  local t0 = vim.uv.hrtime()
  vim.cmd("CodeCompanionChat")
  local t1 = vim.uv.hrtime()
  return { t0 = t0, t1 = t1, bufnr = vim.api.nvim_get_current_buf() }
end

function B.pids()
  local chan = host.channel()
  return { nvim = vim.fn.getpid(), host = chan and vim.fn.jobpid(chan) or -1 }
end
