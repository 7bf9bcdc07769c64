-- :CodeCompanionChat and its words: Add, Toggle, Restore, Resume, Rewind, Review, Approvals, Yolo,
-- Checks, Follow, adapter=NAME model=NAME, or a prompt.
local chat_buffers = require("codecompanion.chat_buffers")
local host = require("codecompanion.host")
local render = require("codecompanion.render")

local M = {}

--- Add lines `line1`..`line2` of the current buffer to the last chat (a new one when there is
--- none) as a fenced block headed by the file's path and the line numbers.
---@param line1 integer
---@param line2 integer
function M.add_selection(line1, line2)
  local src = vim.api.nvim_get_current_buf()
  if chat_buffers.chat_id(src) then
    require("codecompanion.notify").notify(
      "Add takes lines of another buffer, not of a chat",
      "warn"
    )
    return
  end
  local target = chat_buffers.last_chat()
  if target and not vim.bo[target].modifiable then
    local busy = "the chat is busy: add the lines when the answer is done"
    require("codecompanion.notify").notify(busy, "warn")
    return
  end
  local lines = vim.api.nvim_buf_get_lines(src, line1 - 1, line2, false)
  local path = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(src), ":.")
  local ft = vim.bo[src].filetype
  local bufnr = target or chat_buffers.open()
  local block =
    { ("`%s` lines %d-%d:"):format(path ~= "" and path or "[No Name]", line1, line2), "```" .. ft }
  vim.list_extend(block, lines)
  table.insert(block, "```")
  table.insert(block, "")
  local count = vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, count, count, false, block)
  if #vim.fn.win_findbuf(bufnr) == 0 then
    chat_buffers.show(bufnr)
  end
end

--- Pick a saved chat (the host lists them and asks) and reopen it.
function M.restore()
  host.notify("pick_restore", {})
end

--- The chat options in the command's words: adapter=NAME, model=NAME, the rest is the prompt.
---@param args string
---@return codecompanion.ChatOpts
local function chat_opts_of(args)
  local opts, rest = {}, {}
  for _, word in ipairs(vim.split(args, "%s+", { trimempty = true })) do
    local key, value = word:match("^(%w+)=(.+)$")
    if key == "adapter" or key == "model" then
      opts[key] = value
    else
      table.insert(rest, word)
    end
  end
  if #rest > 0 then
    -- Free text keeps its original spacing: take it from the raw arguments.
    opts.prompt = vim.trim((args:gsub("adapter=%S+", ""):gsub("model=%S+", "")))
  end
  return opts
end

--- Open a chat with a named adapter; a wrong name opens nothing: one line lists the valid
--- names. The names come from the host's cache, or from the host without Neovim waiting.
---@param opts codecompanion.ChatOpts
local function chat_with_adapter(opts)
  local complete = require("codecompanion.complete")
  local function check(names)
    if vim.tbl_contains(names, opts.adapter) then
      return chat_buffers.open(opts)
    end
    render.notify(
      ("no adapter %q: valid names are %s"):format(opts.adapter, table.concat(names, ", ")),
      "error"
    )
  end
  local known = complete.adapters(false)
  if #known > 0 then
    return check(known)
  end
  complete.fetch(function()
    local names = complete.adapters()
    if #names == 0 then
      return chat_buffers.open(opts) -- the host cannot say: it reports the name itself
    end
    check(names)
  end)
end

--- Run :CodeCompanionChat with the command's `opts` (see `:h nvim_create_user_command()`).
---@param opts { args?: string, line1: integer, line2: integer, range: integer }
function M.run(opts)
  local args = vim.trim(opts.args or "")
  if args == "Add" or args == "add" then
    -- Without a range, the cursor's line.
    M.add_selection(opts.line1, opts.range > 0 and opts.line2 or opts.line1)
  elseif args == "Toggle" or args == "toggle" then
    chat_buffers.toggle()
  elseif args == "Restore" or args == "restore" then
    M.restore()
  elseif args:match("^[Rr]esume") then
    -- An agent's earlier session: of the agent named (adapter=NAME), else the last chat's.
    local last = chat_buffers.last_chat()
    host.notify("pick_agent_session", {
      adapter = args:match("adapter=(%S+)") or vim.NIL,
      id = last and chat_buffers.chat_id(last) or vim.NIL,
      cwd = vim.fn.getcwd(),
    })
  elseif args == "Rewind" or args == "rewind" then
    require("codecompanion.checkpoints").pick()
  elseif args == "Review" or args == "review" then
    require("codecompanion.checkpoints").review()
  elseif args == "Checks" or args == "checks" then
    host.notify("checks", { cwd = vim.fn.getcwd() })
  elseif args == "Follow" or args == "follow" then
    local on = require("codecompanion.follow").set()
    render.notify("follow mode " .. (on and "on" or "off"), "info")
  elseif args == "Approvals" or args == "approvals" or args == "Yolo" or args == "yolo" then
    local bufnr = chat_buffers.last_chat()
    if not bufnr then
      render.notify("no chat is open", "warn")
      return
    end
    local chat = require("codecompanion.chat")
    if args:lower() == "yolo" then
      chat.toggle_yolo(bufnr)
    else
      chat.forget_approvals(bufnr)
    end
  else
    local chat_opts = chat_opts_of(args)
    if chat_opts.adapter then
      chat_with_adapter(chat_opts)
    else
      chat_buffers.open(chat_opts)
    end
  end
end

return M
